import { ApiError } from '../../api/errors';

/** What a tab that shows a collected run (EXPLAIN, profile, suggestions) is about. */
export interface TabProps {
  queryId: string;
  instance: string;
}

/** A tab's query answered 404: nothing has been collected for this query yet. */
export function isNotCollected(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}
