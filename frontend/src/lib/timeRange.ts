import { formatTimeRange } from './format';

// The time range is view state, so it lives in the URL (`?from=...&to=...`, ISO 8601)
// and a view can be shared as a link. Without it the API's default applies: the last
// 24 hours up to now, computed by the server on every refresh.

export interface TimeRange {
  readonly from?: string;
  readonly to?: string;
}

function instantParam(params: URLSearchParams, name: string): string | undefined {
  const value = params.get(name)?.trim();
  if (!value || Number.isNaN(Date.parse(value))) return undefined;
  return value;
}

/** The time range in a location's query string; unparseable bounds are ignored. */
export function timeRangeFromSearch(search: string): TimeRange {
  const params = new URLSearchParams(search);
  const from = instantParam(params, 'from');
  const to = instantParam(params, 'to');
  return {
    ...(from !== undefined && { from }),
    ...(to !== undefined && { to }),
  };
}

export function isDefaultRange(range: TimeRange): boolean {
  return range.from === undefined && range.to === undefined;
}

/**
 * The heading for a range: the URL's bounds, or "Last 24 hours" for the default, with
 * the exact bounds the server resolved once they are known.
 */
export function describeRange(range: TimeRange, resolved?: { from: string; to: string }): string {
  const exact = resolved
    ? formatTimeRange(resolved.from, resolved.to)
    : formatTimeRange(range.from ?? '24 h before end', range.to ?? 'now');
  if (!isDefaultRange(range)) return exact;
  return resolved ? `Last 24 hours · ${exact}` : 'Last 24 hours';
}
