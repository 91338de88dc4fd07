import { useMemo, useSyncExternalStore } from 'react';
import { type TimeRange, timeRangeFromSearch } from '../lib/timeRange';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  return () => window.removeEventListener('popstate', onChange);
}

function getSearch(): string {
  return window.location.search;
}

/** The time range in the page's URL (empty: the API's default, the last 24 hours). */
export function useTimeRange(): TimeRange {
  const search = useSyncExternalStore(subscribe, getSearch);
  return useMemo(() => timeRangeFromSearch(search), [search]);
}
