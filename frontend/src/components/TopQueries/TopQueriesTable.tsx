import type { TopQueries } from '../../api/types';
import { formatCount, formatDuration, formatLoad } from '../../lib/format';
import { LoadSparkline } from './LoadSparkline';
import { ShareBar } from './ShareBar';
import { toTopQueryViews, toTotalsView } from './topQueriesView';

export function TopQueriesTable({ data, offset = 0 }: { data: TopQueries; offset?: number }) {
  const rows = toTopQueryViews(data.rows, offset);
  const totals = toTotalsView(data.totals);

  return (
    <table className="top-queries" data-testid="top-queries-table">
      <caption className="visually-hidden">Top queries by load</caption>
      <colgroup>
        <col className="col-rank" />
        <col className="col-query" />
        <col className="col-load" />
        <col className="col-spark" />
        <col className="col-count" />
        <col className="col-time" />
        <col className="col-time" />
      </colgroup>
      <thead>
        <tr>
          <th scope="col" className="num">
            #
          </th>
          <th scope="col">Query</th>
          <th scope="col" title="Average active sessions: total query time / seconds in range">
            Load
          </th>
          <th scope="col">Load over time</th>
          <th scope="col" className="num">
            Count
          </th>
          <th scope="col" className="num">
            Total time
          </th>
          <th scope="col" className="num">
            Avg / call
          </th>
        </tr>
      </thead>
      <tbody>
        <tr className="totals" data-testid="totals-row">
          <td />
          <th scope="row" className="query">
            All queries
          </th>
          <td>
            <div className="load">
              <span className="load-value">{formatLoad(totals.load)}</span>
              <ShareBar share={1} />
            </div>
          </td>
          <td />
          <td className="num">{formatCount(totals.count)}</td>
          <td className="num">{formatDuration(totals.queryTime)}</td>
          <td className="num">{formatDuration(totals.avgTime)}</td>
        </tr>
        {rows.map((row) => (
          <tr key={row.queryId} data-testid="query-row">
            <td className="num rank">{row.rank}</td>
            <td className="query">
              <code className="fingerprint" title={row.fingerprint}>
                {row.fingerprint}
              </code>
              <span className="query-id">{row.queryId}</span>
            </td>
            <td>
              <div className="load">
                <span className="load-value">{formatLoad(row.load)}</span>
                <ShareBar share={row.share} />
              </div>
            </td>
            <td>
              <LoadSparkline data={row.sparkline} />
            </td>
            <td className="num">{formatCount(row.count)}</td>
            <td className="num">{formatDuration(row.queryTime)}</td>
            <td className="num">{formatDuration(row.avgTime)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
