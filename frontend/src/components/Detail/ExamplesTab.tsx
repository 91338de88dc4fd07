import { useQuery } from '@tanstack/react-query';
import { errorMessage } from '../../api/errors';
import { queryExamplesOptions } from '../../api/queryClasses';
import type { ScopeQuery } from '../../api/types';
import { formatDuration, formatInstant } from '../../lib/format';
import { SqlText } from '../Sql/SqlText';
import { EmptyState } from '../Status/EmptyState';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';

/** The statements the slow log kept for the query in the range. */
export function ExamplesTab({ queryId, params }: { queryId: string; params: ScopeQuery }) {
  const query = useQuery(queryExamplesOptions(queryId, params));
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
