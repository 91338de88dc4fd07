import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { ApiError, errorMessage, isNotFound } from '../api/errors';
import type { ImpactMetric, ImpactMetricName, ImpactQuery } from '../api/types';
import { annotationImpactOptions } from '../api/annotations';
import { SqlText } from '../components/Sql/SqlText';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { useUrlState } from '../hooks/useUrlState';
import {
  formatDuration,
  formatInstant,
  formatLoad,
  formatRate,
  formatTimeRange,
} from '../lib/format';
import {
  formatChange,
  isContextMetric,
  sortImpact,
  verdictCounts,
  windowUsed,
} from '../lib/impact';
import {
  IMPACT_WINDOWS,
  type ImpactWindow,
  parseImpact,
  serializeDetail,
  serializeImpact,
} from '../lib/viewState';

const COLUMNS: { key: ImpactMetricName; label: string; format: (v: number) => string }[] = [
  { key: 'load', label: 'Load', format: formatLoad },
  { key: 'count', label: 'Calls', format: formatRate },
  { key: 'avg_latency', label: 'Avg latency', format: formatDuration },
  { key: 'p95_latency', label: 'p95 latency', format: formatDuration },
  { key: 'rows_examined_per_call', label: 'Rows examined / call', format: formatRate },
];

/** Rows shown before "Show all": the largest changes come first. */
const FIRST_ROWS = 100;

/** What an annotated change did: each query's metrics in equal windows before and after. */
export function AnnotationImpact() {
  const { annotationId = '' } = useParams();
  const id = Number(annotationId);
  const [state, setState] = useUrlState(parseImpact, serializeImpact);
  const [showAll, setShowAll] = useState(false);
  const query = useQuery({
    ...annotationImpactOptions(id, state.window),
    enabled: Number.isInteger(id),
  });
  const rows = useMemo(
    () => (query.data ? sortImpact(query.data.queries, { changedOnly: state.changedOnly }) : []),
    [query.data, state.changedOnly],
  );

  if (!Number.isInteger(id)) {
    return <EmptyState title="There is no annotation at this address." testId="impact-empty" />;
  }

  return (
    <section className="impact" aria-labelledby="impact-title">
      <p className="breadcrumb">
        <Link to="/annotations">← Annotations</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 id="impact-title">Impact{query.data ? `: ${query.data.annotation.text}` : ''}</h1>
          {query.data && (
            <p className="range">
              {formatInstant(query.data.annotation.time)} UTC
              {query.data.annotation.end_time &&
                ` – ${formatInstant(query.data.annotation.end_time)} UTC`}{' '}
              · before {formatTimeRange(query.data.before.from, query.data.before.to)} · after{' '}
              {formatTimeRange(query.data.after.from, query.data.after.to)}
              <br />
              <span data-testid="impact-window">
                Compared: {windowUsed(query.data.window_seconds, state.window)}
              </span>
            </p>
          )}
        </div>
        <div className="toolbar">
          <div className="segmented" role="group" aria-label="Window">
            {IMPACT_WINDOWS.map((window: ImpactWindow) => (
              <button
                key={window}
                type="button"
                className={state.window === window ? 'segment segment-active' : 'segment'}
                aria-pressed={state.window === window}
                onClick={() => setState({ window })}
              >
                {window}
              </button>
            ))}
          </div>
          <label className="checkbox">
            <input
              type="checkbox"
              checked={state.changedOnly}
              onChange={(e) => setState({ changedOnly: e.target.checked })}
            />
            Only changed
          </label>
        </div>
      </div>
      {query.status === 'pending' && <LoadingState label="Comparing before and after…" />}
      {query.status === 'error' &&
        (isNotFound(query.error) ? (
          <EmptyState title="This annotation does not exist (any more)." testId="impact-empty" />
        ) : query.error instanceof ApiError && query.error.status === 409 ? (
          <EmptyState title="Nothing to compare yet." testId="impact-too-early">
            <p>{query.error.message}</p>
          </EmptyState>
        ) : (
          <ErrorState
            title="Could not compute the impact"
            message={errorMessage(query.error)}
            onRetry={() => void query.refetch()}
            testId="impact-error"
          />
        ))}
      {query.data && (
        <>
          {query.data.note !== null && query.data.note !== undefined ? (
            <p className="notice" data-testid="impact-note">
              No verdict: {query.data.note}. The figures below are what the minutes so far show; a
              verdict needs {query.data.minutes_needed} minutes after the change.
            </p>
          ) : (
            <Summary queries={query.data.queries} />
          )}
          {rows.length === 0 ? (
            <EmptyState title="No queries ran in these windows." testId="impact-none" />
          ) : (
            <table className="data-table impact-table" data-testid="impact-table">
              <thead>
                <tr>
                  <th scope="col">Query</th>
                  <th scope="col">Verdict</th>
                  {COLUMNS.map((column) => (
                    <th key={column.key} scope="col" className="num">
                      {column.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {(showAll ? rows : rows.slice(0, FIRST_ROWS)).map((row) => (
                  <ImpactRow
                    key={row.query_id}
                    row={row}
                    detailSearch={serializeDetail({
                      range: {
                        kind: 'custom',
                        from: query.data.before.from,
                        to: query.data.after.to,
                      },
                      instances: query.data.annotation.instances,
                      tab: 'examples',
                    })}
                  />
                ))}
              </tbody>
            </table>
          )}
          {!showAll && rows.length > FIRST_ROWS && (
            <p>
              <button type="button" className="button" onClick={() => setShowAll(true)}>
                Show all {rows.length} queries
              </button>
            </p>
          )}
          <p className="muted">
            Sorted by the size of the load change. The verdict is the query&apos;s own cost per
            call: latency and rows examined. Load and calls are context (in black): a faster query
            is often called more. A change counts when a Mann-Whitney test on the per-minute values
            says so and it is large enough; minutes before a query was first seen are left out, not
            counted as idle.
          </p>
        </>
      )}
    </section>
  );
}

function Summary({ queries }: { queries: readonly ImpactQuery[] }) {
  const counts = verdictCounts(queries);
  return (
    <p className="impact-summary" data-testid="impact-summary">
      {(['regressed', 'improved', 'new', 'gone', 'unchanged'] as const).map((verdict) => (
        <span key={verdict} className={`badge verdict-${verdict}`}>
          {counts[verdict]} {verdict}
        </span>
      ))}
    </p>
  );
}

function MetricCell({
  metric,
  format,
  context,
}: {
  metric: ImpactMetric | undefined;
  format: (v: number) => string;
  context: boolean;
}) {
  if (!metric) return <td className="num">–</td>;
  const show = (value: number | null) => (value === null ? '–' : format(value));
  const change = metric.change ?? 0;
  const direction = change > 0 ? 'up' : change < 0 ? 'down' : 'flat';
  return (
    <td
      className={`num change change-${direction}${metric.significant ? ' significant' : ''}${
        context ? ' change-context' : ''
      }`}
      title={
        metric.p_value === null
          ? undefined
          : `p = ${metric.p_value.toPrecision(2)}${metric.significant ? ' (significant)' : ''}`
      }
    >
      <span className="change-values">
        {show(metric.before)} → {show(metric.after)}
      </span>
      <span className="change-pct">{formatChange(metric)}</span>
    </td>
  );
}

function ImpactRow({ row, detailSearch }: { row: ImpactQuery; detailSearch: string }) {
  return (
    <tr data-testid="impact-row" data-verdict={row.verdict}>
      <td className="query">
        <Link
          className="query-link"
          to={`/queries/${encodeURIComponent(row.query_id)}?${detailSearch}`}
          title={row.fingerprint}
        >
          <SqlText sql={row.fingerprint} className="fingerprint" />
        </Link>
        <span className="query-id">{row.query_id}</span>
      </td>
      <td>
        <span className={`badge verdict-${row.verdict}`} data-testid="verdict">
          {row.verdict === 'not_enough_data' ? 'no verdict yet' : row.verdict}
        </span>
      </td>
      {COLUMNS.map((column) => (
        <MetricCell
          key={column.key}
          metric={row.metrics[column.key]}
          format={column.format}
          context={isContextMetric(column.key)}
        />
      ))}
    </tr>
  );
}
