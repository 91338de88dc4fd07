import type { TopQueryRow } from '../../api/types';

type Given = Pick<
  TopQueryRow,
  'query_id' | 'fingerprint' | 'count' | 'query_time' | 'load' | 'share'
> &
  Partial<TopQueryRow>;

/** A top-list row for the tests: the given fields, no latency or row figures, no sparkline. */
export function queryRow(given: Given): TopQueryRow {
  return {
    qps: 0,
    query_time_avg: null,
    query_time_p95: null,
    query_time_p99: null,
    query_time_max: null,
    rows_examined: null,
    rows_sent: null,
    sparkline: [],
    ...given,
  };
}
