import { useQuery } from '@tanstack/react-query';
import { explainOptions } from '../../api/diagnostics';
import { errorMessage } from '../../api/errors';
import { isWaiting } from '../../lib/runs';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';
import { RequestAgain, RequestCollection } from './RequestCollection';
import { ResultTable } from './ResultTable';
import { ExamplesUsed, RunHeader } from './RunHeader';
import { isNotCollected, type TabProps } from './tabState';

/** The latest EXPLAIN of the query on an instance, or a button to request one. */
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
      <RunHeader run={run} kind="explain" />
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
