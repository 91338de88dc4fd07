// Turning failed API calls into messages a person can act on. The backend answers
// errors as JSON `{"detail": "..."}` (FastAPI); validation errors carry a list.

/** An HTTP error answered by the Quanta API. */
export class ApiError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

const MAX_TEXT_DETAIL = 300;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The human message in an error body, or undefined when it carries none. */
export function detailFromBody(body: unknown): string | undefined {
  if (typeof body === 'string') {
    const text = body.trim();
    // An HTML error page from a proxy says nothing useful in a one-line alert.
    if (text === '' || text.startsWith('<')) return undefined;
    return text.length > MAX_TEXT_DETAIL ? `${text.slice(0, MAX_TEXT_DETAIL)}…` : text;
  }
  if (!isRecord(body)) return undefined;
  const { detail } = body;
  if (typeof detail === 'string' && detail.trim() !== '') return detail;
  if (Array.isArray(detail)) {
    const messages = detail.filter(isRecord).map((item) => {
      const where = Array.isArray(item.loc) ? item.loc.join('.') : '';
      const msg = typeof item.msg === 'string' ? item.msg : 'invalid';
      return where ? `${where}: ${msg}` : msg;
    });
    if (messages.length > 0) return messages.join('; ');
  }
  return undefined;
}

/** An ApiError for a response, preferring the body's `detail` over the status line. */
export function apiErrorFrom(status: number, statusText: string, body: unknown): ApiError {
  const fallback = `${status} ${statusText}`.trim() || 'Request failed';
  return new ApiError(status, detailFromBody(body) ?? fallback);
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401;
}

/** Client errors will fail the same way again; server and network errors may not. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiError && error.status < 500) return false;
  return failureCount < 2;
}

/** The message to show for anything a query or mutation threw. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  // fetch() rejects with a TypeError when the server cannot be reached at all.
  if (error instanceof TypeError) return `Could not reach the Quanta API (${error.message}).`;
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong.';
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}
