import { ApiError } from '../../api/errors';

/** A tab's query answered 404: nothing has been collected for this query yet. */
export function isNotCollected(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}
