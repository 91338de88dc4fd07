import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { errorMessage, isNotFound } from '../api/errors';
import { queryDetailOptions } from '../api/queryClasses';
import type { QueryDetail as Detail } from '../api/types';
import { InstancePicker } from '../components/Controls/InstancePicker';
import { RangePicker } from '../components/Controls/RangePicker';
import { TimeChart } from '../components/Detail/TimeChart';
import { DetailTabs } from '../components/Detail/Tabs';
import { metricLabel, toChartPoints, visibleMetrics } from '../components/Detail/detailView';
import { SqlText } from '../components/Sql/SqlText';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { ShareBar } from '../components/TopQueries/ShareBar';
import { useScopeAnnotations } from '../hooks/useScopeAnnotations';
import { useUrlState } from '../hooks/useUrlState';
import {
  formatCount,
  formatDuration,
  formatInstant,
  formatLoad,
  formatMetric,
  formatPerSecond,
  formatShare,
  formatTimeRange,
} from '../lib/format';
import { placeMarkers } from '../lib/markers';
import { regressionMarkers } from '../lib/regressions';
import { regressionsOptions } from '../api/regressions';
import {
  type DetailState,
  parseDetail,
  rangeLabel,
  scopeOf,
  scopeToParams,
  serializeDetail,
  serializeOverview,
  DEFAULT_OVERVIEW,
  groupByLabel,
  keyedGroup,
} from '../lib/viewState';

/** Why the latency chart can be empty: only the slow log has per-call latency. */
const NO_PERCENTILES =
  'No per-call latency in this window: performance_schema on MariaDB records no per-call ' +
  'latency. Turn the slow log on (long_query_time=0 sees every statement) and choose it ' +
  'under Settings → Instances if it is not chosen automatically.';

/** One query: its metrics, load and latency over time, and the tabs that explain it. */
export function QueryDetail() {
  const { queryId = '' } = useParams();
  const [state, setState] = useUrlState(parseDetail, serializeDetail);
  const params = useMemo(() => scopeToParams(state), [state]);
  const query = useQuery(queryDetailOptions(queryId, params));
  const back = serializeOverview({ ...DEFAULT_OVERVIEW, ...scopeOf(state) });

  return (
    <section className="detail" aria-labelledby="detail-title">
      <p className="breadcrumb">
        <Link to={`/${back ? `?${back}` : ''}`} data-testid="back-to-overview">
          ← Top queries
        </Link>
      </p>
      <div className="page-header">
        <div>
          <h1 id="detail-title">Query {queryId}</h1>
          <p className="range">
            {rangeLabel(state.range)}
            {query.data && ` · ${formatTimeRange(query.data.from, query.data.to)}`}
          </p>
        </div>
        <div className="toolbar">
          <RangePicker
            range={state.range}
            onChange={(range) => setState({ range })}
            {...(query.data && { resolved: { from: query.data.from, to: query.data.to } })}
          />
          <InstancePicker
            selected={state.instances}
            options={query.data?.breakdown.instance ?? []}
            onChange={(instances) => setState({ instances })}
          />
        </div>
      </div>
      {query.status === 'pending' && (
        <LoadingState label="Loading the query…" testId="detail-loading" />
      )}
      {query.status === 'error' &&
        (isNotFound(query.error) ? (
          <EmptyState title="This query has no data in this range." testId="detail-empty">
            <p>Pick a longer time range, or another instance.</p>
          </EmptyState>
        ) : (
          <ErrorState
            title="Could not load the query"
            message={errorMessage(query.error)}
            onRetry={() => void query.refetch()}
            testId="detail-error"
          />
        ))}
      {query.data && <DetailBody detail={query.data} state={state} setState={setState} />}
    </section>
  );
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [result, setResult] = useState<'copied' | 'failed' | null>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setResult('copied');
    } catch {
      // No clipboard permission (plain http, an old browser): say so instead of failing.
      setResult('failed');
    }
    window.setTimeout(() => setResult(null), 2000);
  }
  return (
    <button type="button" className="button button-small" onClick={() => void copy()}>
      {result === 'copied' ? 'Copied' : result === 'failed' ? 'Copy failed: select it' : label}
    </button>
  );
}

function DetailBody({
  detail,
  state,
  setState,
}: {
  detail: Detail;
  state: DetailState;
  setState: (update: Partial<DetailState>) => void;
}) {
  const annotations = useScopeAnnotations({ from: detail.from, to: detail.to }, state.instances);
  const domain = { fromMs: Date.parse(detail.from), toMs: Date.parse(detail.to) };
  // Where this query's regressions started, beside the annotations (same marker strip).
  const regressions = useQuery(
    regressionsOptions({
      query_id: detail.query_id,
      ...(state.instances.length === 1 && { instance: state.instances[0] }),
    }),
  );
  const markers = useMemo(
    () =>
      [
        ...(annotations.data ? placeMarkers(annotations.data, domain.fromMs, domain.toMs) : []),
        ...(regressions.data
          ? regressionMarkers(regressions.data, domain.fromMs, domain.toMs)
          : []),
      ].sort((a, b) => a.start - b.start),
    [annotations.data, regressions.data, domain.fromMs, domain.toMs],
  );
  const points = useMemo(() => toChartPoints(detail.series), [detail.series]);
  const instance = state.instances[0] ?? detail.breakdown.instance?.[0]?.value;
  const schema = state.schema ?? detail.breakdown.schema?.[0]?.value;

  return (
    <>
      <div className="card fingerprint-card">
        <div className="fingerprint-head">
          <span className="muted">
            {detail.statement_type ?? 'statement'} · query_id{' '}
            <code data-testid="query-id">{detail.query_id}</code>
          </span>
          <span className="actions">
            <CopyButton text={detail.fingerprint} label="Copy fingerprint" />
            <CopyButton text={detail.query_id} label="Copy query_id" />
          </span>
        </div>
        <pre className="sql-block" data-testid="detail-fingerprint">
          <SqlText sql={detail.fingerprint} />
        </pre>
        <p className="muted">
          {detail.tables.length > 0 && <>Tables {detail.tables.join(', ')} · </>}
          First seen {formatInstant(detail.first_seen)} UTC · last seen{' '}
          {formatInstant(detail.last_seen)} UTC
        </p>
      </div>

      <div className="summary">
        <div className="stat">
          <span className="stat-label">Load</span>
          <span className="stat-value">{formatLoad(detail.load)}</span>
          <ShareBar share={detail.share} />
        </div>
        <div className="stat">
          <span className="stat-label">Calls</span>
          <span className="stat-value">{formatCount(detail.count)}</span>
        </div>
        <div className="stat">
          <span className="stat-label">Share of total time</span>
          <span className="stat-value">{formatShare(detail.share)}</span>
        </div>
      </div>

      <div className="charts">
        <TimeChart
          title="Load (average active sessions; under 0.1, query time per second)"
          data={points}
          series={[{ key: 'load', name: 'Load', color: '#2563eb' }]}
          domain={domain}
          markers={markers}
          format={formatLoad}
          testId="load-chart"
        />
        <TimeChart
          title="Latency percentiles"
          data={points}
          series={[
            { key: 'p50', name: 'p50', color: '#16a34a' },
            { key: 'p95', name: 'p95', color: '#d97706' },
            { key: 'p99', name: 'p99', color: '#dc2626' },
          ]}
          domain={domain}
          markers={markers}
          format={formatDuration}
          testId="latency-chart"
          emptyNote={NO_PERCENTILES}
        />
      </div>
      {annotations.isError && (
        <p className="muted">Annotations unavailable: {errorMessage(annotations.error)}</p>
      )}

      <MetricsTable detail={detail} />
      <Breakdown detail={detail} />

      <DetailTabs
        tab={state.tab}
        onTab={(tab) => setState({ tab })}
        queryId={detail.query_id}
        params={scopeToParams(state)}
        instance={instance}
        schema={schema}
        tables={detail.tables}
      />
    </>
  );
}

function MetricsTable({ detail }: { detail: Detail }) {
  return (
    <section className="card">
      <h2>Metrics</h2>
      <table className="data-table metrics" data-testid="metrics-table">
        <thead>
          <tr>
            <th scope="col">Metric</th>
            <th scope="col" className="num" title="Time metrics: that much time every second">
              Per second
            </th>
            <th scope="col" className="num">
              Sum
            </th>
            <th scope="col" className="num">
              % of total
            </th>
            <th scope="col" className="num">
              Per call
            </th>
            <th scope="col" className="num">
              p95
            </th>
            <th scope="col" className="num">
              p99
            </th>
            <th scope="col" className="num">
              Max
            </th>
          </tr>
        </thead>
        <tbody>
          {visibleMetrics(detail.metrics).map((metric) => (
            <tr key={metric.name}>
              <th scope="row">{metricLabel(metric.name)}</th>
              <td className="num">{formatPerSecond(metric.name, metric.rate)}</td>
              <td className="num">{formatMetric(metric.name, metric.sum)}</td>
              <td className="num">{metric.share === null ? '–' : formatShare(metric.share)}</td>
              <td className="num">{formatMetric(metric.name, metric.avg)}</td>
              <td className="num">{formatMetric(metric.name, metric.p95)}</td>
              <td className="num">{formatMetric(metric.name, metric.p99)}</td>
              <td className="num">{formatMetric(metric.name, metric.max)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Breakdown({ detail }: { detail: Detail }) {
  const dimensions = Object.entries(detail.breakdown).filter(
    ([, rows]) => rows !== undefined && rows.length > 0,
  );
  if (dimensions.length === 0) return null;
  return (
    <section className="card breakdown">
      <h2>Where it runs</h2>
      <div className="breakdown-grid">
        {dimensions.map(([dimension, rows]) => (
          <div key={dimension}>
            <h3>{keyedGroup(dimension) ? groupByLabel(dimension) : dimension}</h3>
            <ul>
              {(rows ?? []).slice(0, 6).map((row) => (
                <li key={row.value}>
                  <span className="filter-name">{row.value || '(empty)'}</span>
                  <ShareBar share={row.share} />
                </li>
              ))}
            </ul>
          </div>
        ))}
      </div>
    </section>
  );
}
