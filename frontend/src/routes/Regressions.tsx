import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { errorMessage } from '../api/errors';
import { instancesOptions } from '../api/instances';
import { regressionsOptions } from '../api/regressions';
import type { Regression } from '../api/types';
import { SqlText } from '../components/Sql/SqlText';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { formatInstant } from '../lib/format';
import {
  causeAnnotations,
  describeChange,
  evidenceRows,
  queryLink,
  regressionStatusOf,
  type RegressionView,
} from '../lib/regressions';

const VIEWS: readonly RegressionView[] = ['open', 'resolved', 'all'];

/** Queries that got dearer per call than their own baseline: open and resolved, per instance. */
export function Regressions() {
  const [params, setParams] = useSearchParams();
  const instance = params.get('instance') ?? '';
  const view = (VIEWS as readonly string[]).includes(params.get('view') ?? '')
    ? (params.get('view') as RegressionView)
    : 'open';
  const instances = useQuery(instancesOptions());
  const query = useQuery(
    regressionsOptions({
      ...(instance && { instance }),
      ...(regressionStatusOf(view) && { status: regressionStatusOf(view) }),
    }),
  );
  const update = (next: { instance?: string; view?: RegressionView }) => {
    const merged = { instance, view, ...next };
    const search = new URLSearchParams();
    if (merged.instance) search.set('instance', merged.instance);
    if (merged.view !== 'open') search.set('view', merged.view);
    setParams(search);
  };

  return (
    <section className="regressions" aria-labelledby="regressions-title">
      <div className="page-header">
        <div>
          <h1 id="regressions-title">Regressions</h1>
          <p className="range">
            Queries dearer per call than their own baseline: large, significant, sustained and
            carrying load. Each with its likely cause.
          </p>
        </div>
        <div className="toolbar">
          <label>
            Instance{' '}
            <select
              value={instance}
              onChange={(e) => update({ instance: e.target.value })}
              data-testid="regressions-instance"
            >
              <option value="">All instances</option>
              {(instances.data ?? []).map((i) => (
                <option key={i.id} value={i.name}>
                  {i.name}
                </option>
              ))}
            </select>
          </label>
          <div className="segmented" role="group" aria-label="Status">
            {VIEWS.map((v) => (
              <button
                key={v}
                type="button"
                className={view === v ? 'segment segment-active' : 'segment'}
                aria-pressed={view === v}
                onClick={() => update({ view: v })}
              >
                {v}
              </button>
            ))}
          </div>
        </div>
      </div>
      {query.status === 'pending' && <LoadingState label="Loading regressions…" />}
      {query.status === 'error' && (
        <ErrorState
          title="Could not load regressions"
          message={errorMessage(query.error)}
          onRetry={() => void query.refetch()}
          testId="regressions-error"
        />
      )}
      {query.data && query.data.length === 0 && (
        <EmptyState
          title={view === 'open' ? 'No open regression.' : 'No regression found.'}
          testId="regressions-empty"
        >
          <p className="muted">Beat compares every heavy query with its baseline each minute.</p>
        </EmptyState>
      )}
      {query.data && query.data.length > 0 && (
        <ol className="regression-list" data-testid="regressions-list">
          {query.data.map((regression) => (
            <RegressionItem key={regression.id} regression={regression} />
          ))}
        </ol>
      )}
    </section>
  );
}

function RegressionItem({ regression }: { regression: Regression }) {
  const annotations = causeAnnotations(regression);
  return (
    <li
      className="regression"
      id={`regression-${regression.id}`}
      data-testid="regression"
      data-status={regression.status}
    >
      <div className="regression-head">
        <span className={`badge regression-${regression.status}`}>{regression.status}</span>
        <strong>
          {regression.kind === 'new'
            ? 'New heavy query'
            : describeChange(regression.metric, regression.before, regression.after)}
        </strong>
        <span className="muted">
          on {regression.instance} since {formatInstant(regression.since)} UTC
          {regression.resolved_at && ` · resolved ${formatInstant(regression.resolved_at)} UTC`}
        </span>
      </div>
      <Link to={queryLink(regression)} className="regression-query">
        <SqlText sql={regression.fingerprint} className="fingerprint" />
      </Link>
      <p className="regression-cause" data-testid="regression-cause">
        <strong>Likely cause:</strong> {regression.cause}
      </p>
      <p className="regression-links">
        <Link to={queryLink(regression)}>Query</Link> ·{' '}
        <Link to={queryLink(regression, 'explain')}>Plans</Link>
        {annotations.map((a) => (
          <span key={a.id}>
            {' '}
            · <Link to={`/annotations/${a.id}`}>Annotation “{a.text}”</Link>
          </span>
        ))}
      </p>
      <details>
        <summary>Evidence</summary>
        <p className="muted">
          Window {formatInstant(regression.window_start)} – {formatInstant(regression.window_end)}{' '}
          UTC against {formatInstant(regression.baseline_start)} –{' '}
          {formatInstant(regression.baseline_end)} UTC
          {regression.seasonal && ' (same hours of day only)'}; load {regression.load.toFixed(3)}{' '}
          sessions, {(regression.load_share * 100).toFixed(1)}% of the instance.
        </p>
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">p-value</th>
              <th scope="col">Slow minutes</th>
            </tr>
          </thead>
          <tbody>
            {evidenceRows(regression).map((row) => (
              <tr key={row.metric} className={row.regressed ? 'regressed' : undefined}>
                <td>{row.change}</td>
                <td className="num">{row.pValue === null ? '–' : row.pValue.toPrecision(2)}</td>
                <td className="num">{row.slowMinutes}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </li>
  );
}
