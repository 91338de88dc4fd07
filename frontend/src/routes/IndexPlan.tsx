import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { errorMessage, isNotFound } from '../api/errors';
import { indexPlanOptions, useRequestIndexPlan } from '../api/indexPlans';
import type { IndexPlanList } from '../api/types';
import { SqlText } from '../components/Sql/SqlText';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { useHasScope } from '../hooks/useMe';
import { formatInstant, formatTimeRange } from '../lib/format';
import {
  type ServedView,
  type TableView,
  isNewerPlan,
  planTotals,
  suggestionsPath,
  tableViews,
} from '../lib/indexPlan';
import { planLayout, unchangedLine } from '../lib/indexPlanLayout';

/** An instance's workload index plan: per table one ALTER TABLE and the evidence for it. */
export function IndexPlan() {
  const { instanceId = '' } = useParams();
  const id = Number(instanceId);
  const valid = Number.isInteger(id) && id > 0;
  // computed_at of the plan shown when a fresh run was asked for: poll until it is newer.
  const [awaiting, setAwaiting] = useState<string | null | undefined>(undefined);
  const [polling, setPolling] = useState(false);
  const query = useQuery({ ...indexPlanOptions(id, polling), enabled: valid });
  const computedAt = query.data?.computed_at;
  // Derived, not stored: the run is awaited until a plan newer than the one shown arrives.
  const waiting = awaiting !== undefined && !isNewerPlan(computedAt, awaiting);
  if (polling !== waiting) setPolling(waiting);
  const request = useRequestIndexPlan(id, () => setAwaiting(computedAt ?? null));
  const canRequest = useHasScope('diagnose');

  if (!valid) {
    return <EmptyState title="There is no instance at this address." testId="plan-empty" />;
  }
  return (
    <section className="index-plan" aria-labelledby="plan-title">
      <p className="breadcrumb">
        <Link to="/settings">← Instances</Link>
      </p>
      <div className="page-header">
        <div>
          <h1 id="plan-title">Index plan{query.data ? `: ${query.data.instance}` : ''}</h1>
          {query.data?.window_start && query.data.window_end && (
            <p className="range">
              Weighs the queries of{' '}
              {formatTimeRange(query.data.window_start, query.data.window_end)}
              {query.data.computed_at && ` · computed ${formatInstant(query.data.computed_at)} UTC`}
            </p>
          )}
        </div>
        <div className="toolbar">
          <button
            type="button"
            className="button"
            disabled={!canRequest || request.isPending || waiting}
            title={canRequest ? undefined : 'Needs the diagnose permission (operator or admin).'}
            onClick={() => request.mutate()}
            data-testid="plan-request"
          >
            {waiting ? 'Computing…' : 'Compute again'}
          </button>
        </div>
      </div>
      {request.error && (
        <p className="not-ok" role="alert" data-testid="plan-request-error">
          {errorMessage(request.error)}
        </p>
      )}
      <IndexPlanBody
        status={query.status}
        data={query.data}
        error={query.error}
        onRetry={() => void query.refetch()}
      />
    </section>
  );
}

/** The page's states: loading, not found, error, never computed, nothing to do, the plans. */
export function IndexPlanBody({
  status,
  data,
  error,
  onRetry,
}: {
  status: 'pending' | 'error' | 'success';
  data: IndexPlanList | undefined;
  error: unknown;
  onRetry: () => void;
}) {
  const views = useMemo(() => (data ? tableViews(data) : []), [data]);
  if (status === 'pending') return <LoadingState label="Loading the index plan…" />;
  if (status === 'error') {
    return isNotFound(error) ? (
      <EmptyState title="This instance does not exist (any more)." testId="plan-empty" />
    ) : (
      <ErrorState
        title="Could not load the index plan"
        message={errorMessage(error)}
        onRetry={onRetry}
        testId="plan-error"
      />
    );
  }
  if (!data) return null;
  if (data.computed_at === null) {
    return (
      <EmptyState title="No plan computed yet." testId="plan-never">
        <p>
          The daily advice run computes it for instances with a DSN; “Compute again” asks for one
          now.
        </p>
      </EmptyState>
    );
  }
  const totals = planTotals(data);
  const { changed, unchanged } = planLayout(views);
  return (
    <>
      {totals.tablesToChange === 0 ? (
        <EmptyState title="No table needs a new index for this workload." testId="plan-none">
          <p>
            {totals.tables} table{totals.tables === 1 ? '' : 's'} weighed; their queries are served
            by the existing indexes, no index can help them, or an index would save less than it
            costs.
          </p>
        </EmptyState>
      ) : (
        <p className="plan-summary" data-testid="plan-summary">
          {totals.tablesToChange} of {totals.tables} tables to change: {totals.newIndexes} new index
          {totals.newIndexes === 1 ? '' : 'es'} ({totals.confirmed} confirmed on the sandbox),{' '}
          {totals.drops} to drop.
        </p>
      )}
      {changed.map((view) => (
        <TableCard key={view.id} view={view} instance={data.instance} />
      ))}
      {unchanged.length > 0 && (
        // One line, whatever their number; why each needs nothing is one click away.
        <details className="card plan-unchanged" data-testid="plan-unchanged">
          <summary>{unchangedLine(unchanged)}</summary>
          {unchanged.map((view) => (
            <TableCard key={view.id} view={view} instance={data.instance} />
          ))}
        </details>
      )}
    </>
  );
}

function TableCard({ view, instance }: { view: TableView; instance: string }) {
  return (
    <article className="card plan-table" data-testid="plan-table" aria-label={view.table}>
      <h2>{view.table}</h2>
      <p className="muted">
        Serves {view.share} of the load · rows examined {view.rows}
        {view.reduction && ` (${view.reduction})`} · {view.writes}
      </p>
      <p className={view.sandboxTone} data-testid="plan-sandbox">
        {view.sandbox}
      </p>
      {view.ddl ? (
        <SqlText sql={`${view.ddl};`} />
      ) : (
        <p className="muted">No change: the existing indexes serve these queries.</p>
      )}
      {view.adds.map((index) => (
        <section key={index.name} className="plan-index" data-testid="plan-index">
          <h3>
            <code>{index.name}</code> ({index.columns})
          </h3>
          <p>
            {index.share} of load · {index.width} · {index.writes} ·{' '}
            <span className={index.verdictTone} data-testid="plan-verdict">
              {index.verdict}
            </span>
          </p>
          <ServedTable rows={index.served} instance={instance} />
        </section>
      ))}
      {view.drops.length > 0 && (
        <>
          <h3>Drop</h3>
          <ul>
            {view.drops.map((d) => (
              <li key={d.name}>
                <code>{d.name}</code>: {d.reason}
              </li>
            ))}
          </ul>
        </>
      )}
      {view.rejected.length > 0 && (
        <>
          <h3>Left out by the sandbox</h3>
          <ul data-testid="plan-rejected">
            {view.rejected.map((r) => (
              <li key={r.name}>
                <code>{r.definition}</code>: {r.reason}
              </li>
            ))}
          </ul>
        </>
      )}
      {view.unserved.length > 0 && (
        <>
          <h3>Queries no index helps</h3>
          <ServedTable rows={view.unserved} instance={instance} />
        </>
      )}
      {view.leftOut.length > 0 && (
        <>
          <h3>Left out of the plan</h3>
          <ul data-testid="plan-left-out">
            {view.leftOut.map((item) => (
              <li key={item.name}>
                <code>{item.name}</code> ({item.columns}), suggested for{' '}
                {item.queries.map((query, index) => (
                  <span key={query.queryId}>
                    {index > 0 && ', '}
                    <Link to={query.link}>
                      <code>{query.queryId}</code>
                    </Link>
                    {query.inChat && ' (already suggested in chat)'}
                  </span>
                ))}
                : {item.reason}.
              </li>
            ))}
          </ul>
        </>
      )}
      {view.notes.length > 0 && (
        <ul className="muted">
          {view.notes.map((note) => (
            <li key={note}>{note}</li>
          ))}
        </ul>
      )}
    </article>
  );
}

function ServedTable({ rows, instance }: { rows: ServedView[]; instance: string }) {
  return (
    <table className="data-table">
      <thead>
        <tr>
          <th scope="col">Query</th>
          <th scope="col">Load</th>
          <th scope="col">Calls</th>
          <th scope="col">Rows examined / call (measured)</th>
          <th scope="col">Now → with the plan</th>
          <th scope="col">Sandbox</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.queryId} data-testid="plan-served">
            <td>
              <Link to={suggestionsPath(row.queryId, instance)}>
                <code>{row.fingerprint || row.queryId}</code>
              </Link>
              {!row.fromExample && <span className="muted"> (from the fingerprint)</span>}
            </td>
            <td>{row.share}</td>
            <td>{row.calls}</td>
            <td>{row.measured}</td>
            <td data-testid="plan-served-rows">
              {row.before} → {row.after}
              {row.reduction && <span className="muted"> ({row.reduction})</span>}
              <span className="muted">
                {row.estimate ? ` measured; estimated ${row.estimate}` : ' estimated'}
              </span>
            </td>
            <td className={row.sandboxTone}>{row.sandbox ?? '–'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
