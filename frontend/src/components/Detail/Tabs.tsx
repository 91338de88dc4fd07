import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { updateSuggestion } from '../../api/client';
import { errorMessage } from '../../api/errors';
import {
  examplesOptions,
  explainOptions,
  instancesOptions,
  profileOptions,
  queryKeys,
  suggestionsOptions,
  tableSnapshotOptions,
} from '../../api/queries';
import type {
  ExplainRun,
  ProfileRun,
  ScopeQuery,
  Suggestion,
  SuggestionPatch,
  TableSnapshot,
} from '../../api/types';
import { formatDuration, formatInstant } from '../../lib/format';
import { SqlText } from '../Sql/SqlText';
import { EmptyState } from '../Status/EmptyState';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';
import { missingPrerequisite } from './prerequisites';
import { RequestAgain, RequestCollection } from './RequestCollection';
import { ResultTable } from './ResultTable';
import { foldStages } from './profileView';
import { snapshotFacts, snapshotSections } from './tableView';
import { isWaiting } from '../../lib/runs';
import { isNotCollected } from './tabState';

interface TabProps {
  queryId: string;
  instance: string;
}

export function ExamplesTab({ queryId, params }: { queryId: string; params: ScopeQuery }) {
  const query = useQuery(examplesOptions(queryId, params));
  if (query.status === 'pending') return <LoadingState label="Loading examples…" />;
  if (query.status === 'error') {
    return (
      <ErrorState
        title="Could not load examples"
        message={errorMessage(query.error)}
        onRetry={() => void query.refetch()}
      />
    );
  }
  if (query.data.examples.length === 0) {
    return (
      <EmptyState title="No examples in this range." testId="examples-empty">
        <p>Examples come from the slow log; performance_schema digests carry none.</p>
      </EmptyState>
    );
  }
  return (
    <ol className="examples" data-testid="examples">
      {query.data.examples.map((example, index) => (
        <li key={index} className="example">
          <div className="example-meta">
            <span className={`badge badge-${example.kind}`}>{example.kind}</span>
            <span>{formatDuration(example.query_time)}</span>
            <span>{formatInstant(example.ts)} UTC</span>
            <span>{example.instance}</span>
            {example.schema_name && <span>schema {example.schema_name}</span>}
            {example.literals !== 'full' && <span>literals {example.literals}</span>}
            {example.truncated && <span className="muted">truncated</span>}
          </div>
          <pre className="sql-block">
            <SqlText sql={example.text} />
          </pre>
        </li>
      ))}
    </ol>
  );
}

/** The instance a tab needs, or a note that there is none. */
export function WithInstance({
  instance,
  children,
}: {
  instance: string | undefined;
  children: (instance: string) => ReactNode;
}) {
  if (instance === undefined) {
    return (
      <EmptyState title="Pick an instance">
        <p>This query ran on no instance in the range, so there is nowhere to collect it.</p>
      </EmptyState>
    );
  }
  return <>{children(instance)}</>;
}

/** When a run was taken (or requested), its state, and why it failed. */
function RunHeader({ run }: { run: ExplainRun | ProfileRun }) {
  return (
    <>
      <p className="muted run-header">
        <span className={`badge run-${run.status}`} data-testid="run-status">
          {run.status}
        </span>{' '}
        {run.taken_at
          ? `Taken ${formatInstant(run.taken_at)} UTC`
          : `Requested ${formatInstant(run.requested_at)} UTC`}{' '}
        on {run.instance}
        {run.server_version && ` (${run.server_version})`}
      </p>
      {run.status === 'queued' && <LoadingState label="Waiting for the worker…" />}
      {run.pending && run.status !== 'queued' && (
        <p className="muted">A newer run is queued; this is the latest finished one.</p>
      )}
      {run.error && (
        <p className="form-error" role="alert">
          {run.error}
        </p>
      )}
    </>
  );
}

function ExamplesUsed({ run }: { run: ExplainRun | ProfileRun }) {
  if (run.examples.length === 0) return null;
  return (
    <details className="examples-used">
      <summary>Statement{run.examples.length > 1 ? 's' : ''} used</summary>
      {run.examples.map((example, index) => (
        <pre key={index} className="sql-block">
          <SqlText sql={example.text} />
        </pre>
      ))}
    </details>
  );
}

export function ExplainTab({ queryId, instance }: TabProps) {
  const query = useQuery(explainOptions(queryId, instance));
  if (query.status === 'pending') return <LoadingState label="Loading the EXPLAIN…" />;
  if (query.status === 'error') {
    if (isNotCollected(query.error)) {
      return (
        <RequestCollection
          kind="explain"
          what="EXPLAIN"
          queryId={queryId}
          instance={instance}
          testId="explain-not-collected"
        />
      );
    }
    return <ErrorState title="Could not load the EXPLAIN" message={errorMessage(query.error)} />;
  }
  const run = query.data;
  return (
    <div className="collected" data-testid="explain">
      <RunHeader run={run} />
      {run.findings.length > 0 && (
        <ul className="findings">
          {run.findings.map((finding, index) => (
            <li key={index}>
              <span className={`badge severity-${finding.severity}`}>
                {finding.kind.replace(/_/g, ' ')}
              </span>{' '}
              {finding.table && <code>{finding.table}</code>} {finding.message}
            </li>
          ))}
        </ul>
      )}
      {run.tabular && <ResultTable rows={run.tabular} caption={run.verb ?? 'EXPLAIN'} />}
      {run.notes.length > 0 && (
        <ul className="notes muted">
          {run.notes.map((note, index) => (
            <li key={index}>{note}</li>
          ))}
        </ul>
      )}
      {run.document && (
        <details>
          <summary>EXPLAIN FORMAT=JSON</summary>
          <pre className="sql-block">{JSON.stringify(run.document, null, 2)}</pre>
        </details>
      )}
      {run.analyze && (
        <details>
          <summary>ANALYZE</summary>
          <pre className="sql-block">{JSON.stringify(run.analyze, null, 2)}</pre>
        </details>
      )}
      <ExamplesUsed run={run} />
      {!isWaiting(run) && <RequestAgain kind="explain" queryId={queryId} instance={instance} />}
    </div>
  );
}

const micros = (us: number | null | undefined) =>
  us === null || us === undefined ? '–' : formatDuration(us / 1e6);

export function ProfileTab({ queryId, instance }: TabProps) {
  const query = useQuery(profileOptions(queryId, instance));
  if (query.status === 'pending') return <LoadingState label="Loading the profile…" />;
  if (query.status === 'error') {
    if (isNotCollected(query.error)) {
      return (
        <RequestCollection
          kind="profile"
          what="profile"
          queryId={queryId}
          instance={instance}
          testId="profile-not-collected"
        />
      );
    }
    return <ErrorState title="Could not load the profile" message={errorMessage(query.error)} />;
  }
  const run = query.data;
  return (
    <div className="collected" data-testid="profile">
      <RunHeader run={run} />
      {run.rows.length > 0 && (
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">Stage</th>
              <th scope="col" className="num">
                Total
              </th>
              <th scope="col" className="num">
                Share
              </th>
              <th scope="col" className="num">
                Calls
              </th>
              <th scope="col" className="num">
                Per call
              </th>
            </tr>
          </thead>
          <tbody>
            {foldStages(run.rows).map((stage) => (
              <tr
                key={stage.state}
                className={stage.lost_time ? 'lost-time' : stage.stages > 1 ? 'folded' : undefined}
              >
                <td>{stage.state}</td>
                <td className="num">{micros(stage.total_us)}</td>
                <td className="num">{stage.percent.toFixed(1)}%</td>
                <td className="num">{stage.calls}</td>
                <td className="num">{micros(stage.per_call_us)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="muted">
        Response {micros(run.response_us)}
        {run.runs !== null && ` over ${run.runs} runs`} · not accounted for {micros(run.lost_us)}
      </p>
      <ExamplesUsed run={run} />
      {!isWaiting(run) && <RequestAgain kind="profile" queryId={queryId} instance={instance} />}
    </div>
  );
}

/** "orders" -> "shop.orders" with the query's schema; "shop.orders" stays. */
export function qualifyTable(name: string, schema: string | undefined): string | undefined {
  if (name.includes('.')) return name;
  return schema ? `${schema}.${name}` : undefined;
}

export function TablesTab({
  tables,
  instance,
  schema,
}: {
  tables: readonly string[];
  instance: string;
  schema: string | undefined;
}) {
  const instances = useQuery(instancesOptions());
  if (tables.length === 0) {
    return <EmptyState title="This query reads no tables." />;
  }
  if (instances.status === 'pending') return <LoadingState label="Loading instances…" />;
  if (instances.status === 'error') {
    return <ErrorState title="Could not load instances" message={errorMessage(instances.error)} />;
  }
  const found = instances.data.find((candidate) => candidate.name === instance);
  if (!found) {
    return (
      <EmptyState title={`Instance ${instance} is not registered.`}>
        <p>Register it with a DSN to read its table definitions.</p>
      </EmptyState>
    );
  }
  const missing = missingPrerequisite('tables', found);
  if (missing) {
    return (
      <EmptyState title="No table definitions." testId="tables-missing-prerequisite">
        <p>{missing}</p>
      </EmptyState>
    );
  }
  return (
    <div className="tables-tab" data-testid="tables">
      {tables.map((table) => {
        const qualified = qualifyTable(table, schema);
        return qualified ? (
          <TableCard key={table} instanceId={found.id} table={qualified} />
        ) : (
          <p key={table} className="muted">
            {table}: unknown schema
          </p>
        );
      })}
    </div>
  );
}

function TableCard({ instanceId, table }: { instanceId: number; table: string }) {
  const query = useQuery(tableSnapshotOptions(instanceId, table));
  return (
    <section className="card">
      <h3>
        <code>{table}</code>
      </h3>
      {query.status === 'pending' && <LoadingState label="Loading…" />}
      {query.status === 'error' &&
        (isNotCollected(query.error) ? (
          <p className="muted">
            Not collected yet: snapshots are taken when an EXPLAIN or index advice runs.
          </p>
        ) : (
          <p className="form-error">{errorMessage(query.error)}</p>
        ))}
      {query.data && <Snapshot snapshot={query.data} />}
    </section>
  );
}

function Snapshot({ snapshot }: { snapshot: TableSnapshot }) {
  const facts = snapshotFacts(snapshot.document);
  const sections = snapshotSections(snapshot.document);
  return (
    <>
      <p className="muted">
        Taken {formatInstant(snapshot.taken_at)} UTC · last changed{' '}
        {formatInstant(snapshot.changed_at)} UTC · {snapshot.server.flavor}{' '}
        {snapshot.server.version}
      </p>
      <dl className="table-info" data-testid="table-facts">
        {facts.map((fact) => (
          <div key={fact.label}>
            <dt>{fact.label}</dt>
            <dd>{fact.value}</dd>
          </div>
        ))}
      </dl>
      {sections.map((section) => (
        <section key={section.key} className="table-section" data-testid={`table-${section.key}`}>
          <h4>{section.title}</h4>
          {section.rows.length === 0 ? (
            <p className="muted">{section.empty}</p>
          ) : (
            <div className="scroll-x">
              <table className="data-table">
                <thead>
                  <tr>
                    {section.columns.map((column) => (
                      <th key={column} scope="col">
                        {column}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {section.rows.map((row, index) => (
                    <tr key={index}>
                      {section.columns.map((column) => (
                        <td key={column}>{row[column]}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      ))}
    </>
  );
}

/** How long, and how often, the Suggestions tab polls after advice was requested. */
const ADVICE_WAIT_MS = 120_000;
const ADVICE_POLL_MS = 3_000;

export function SuggestionsTab({ queryId, instance }: TabProps) {
  const queryClient = useQueryClient();
  // The list says nothing about a run in progress: after a request, poll for a while.
  const [requestedAt, setRequestedAt] = useState<number | null>(null);
  const query = useQuery({
    ...suggestionsOptions(queryId, instance),
    refetchInterval: () =>
      requestedAt !== null && Date.now() - requestedAt < ADVICE_WAIT_MS ? ADVICE_POLL_MS : false,
  });
  const mutation = useMutation({
    mutationFn: ({ id, status }: { id: number; status: SuggestionPatch['status'] }) =>
      updateSuggestion(id, status),
    onSuccess: () =>
      queryClient.invalidateQueries({
        queryKey: queryKeys.collected('suggestions', queryId, instance),
      }),
  });
  if (query.status === 'pending') return <LoadingState label="Loading suggestions…" />;
  if (query.status === 'error' && !isNotCollected(query.error)) {
    return <ErrorState title="Could not load suggestions" message={errorMessage(query.error)} />;
  }
  const suggestions: Suggestion[] = query.data?.suggestions ?? [];
  if (suggestions.length === 0) {
    return (
      <RequestCollection
        kind="suggestions"
        what="index suggestion"
        queryId={queryId}
        instance={instance}
        testId="suggestions-not-collected"
        onRequested={() => setRequestedAt(Date.now())}
      />
    );
  }
  return (
    <div data-testid="suggestions">
      <ul className="suggestions">
        {suggestions.map((suggestion) => (
          <li key={suggestion.id} className="card">
            <div className="suggestion-head">
              <span className="badge">{suggestion.action}</span> <code>{suggestion.table}</code>{' '}
              <span className={`badge status-${suggestion.status}`}>{suggestion.status}</span>
            </div>
            <pre className="sql-block">
              <SqlText sql={suggestion.ddl} />
            </pre>
            <p>{suggestion.reason}</p>
            {suggestion.columns.length > 0 && (
              <p className="muted">
                Columns:{' '}
                {suggestion.columns
                  .map((column) => `${column.name}${column.desc ? ' DESC' : ''} (${column.rule})`)
                  .join(', ')}
              </p>
            )}
            {suggestion.redundant.length > 0 && (
              <p className="muted">Makes redundant: {suggestion.redundant.join(', ')}</p>
            )}
            {suggestion.validation && (
              <details>
                <summary>Validation on the sandbox</summary>
                <pre className="sql-block">{JSON.stringify(suggestion.validation, null, 2)}</pre>
              </details>
            )}
            {suggestion.notes.length > 0 && (
              <ul className="notes muted">
                {suggestion.notes.map((note, index) => (
                  <li key={index}>{note}</li>
                ))}
              </ul>
            )}
            <p className="actions">
              {suggestion.status === 'dismissed' ? (
                <button
                  type="button"
                  className="button"
                  disabled={mutation.isPending}
                  onClick={() => mutation.mutate({ id: suggestion.id, status: 'new' })}
                >
                  Restore
                </button>
              ) : (
                <button
                  type="button"
                  className="button"
                  disabled={mutation.isPending}
                  onClick={() => mutation.mutate({ id: suggestion.id, status: 'dismissed' })}
                >
                  Dismiss
                </button>
              )}
            </p>
          </li>
        ))}
      </ul>
      {mutation.isError && (
        <p className="form-error" role="alert">
          {errorMessage(mutation.error)}
        </p>
      )}
      <RequestAgain
        kind="suggestions"
        queryId={queryId}
        instance={instance}
        onRequested={() => setRequestedAt(Date.now())}
      />
    </div>
  );
}
