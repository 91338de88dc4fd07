import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { suggestionsOptions, useUpdateSuggestion } from '../../api/advice';
import { errorMessage } from '../../api/errors';
import type { Suggestion } from '../../api/types';
import { IndexPlanLink } from '../IndexPlan/IndexPlanLink';
import { useHasScope } from '../../hooks/useMe';
import { SqlText } from '../Sql/SqlText';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';
import { RequestAgain, RequestCollection } from './RequestCollection';
import { suggestionView } from './suggestionView';
import { isNotCollected, type TabProps } from './tabState';

/** How long, and how often, the Suggestions tab polls after advice was requested. */
const ADVICE_WAIT_MS = 120_000;
const ADVICE_POLL_MS = 3_000;

/** The index suggestions for the query on an instance, each to dismiss or restore, with what
 * the instance's workload index plan did with it and a link to that plan. */
export function SuggestionsTab({ queryId, instance }: TabProps) {
  // The list says nothing about a run in progress: after a request, poll for a while.
  const [requestedAt, setRequestedAt] = useState<number | null>(null);
  const query = useQuery({
    ...suggestionsOptions(queryId, instance),
    refetchInterval: () =>
      requestedAt !== null && Date.now() - requestedAt < ADVICE_WAIT_MS ? ADVICE_POLL_MS : false,
  });
  const mutation = useUpdateSuggestion(queryId, instance);
  // Dismissing is a write: the `diagnose` scope (operator, admin), as the server checks.
  const canChange = useHasScope('diagnose');
  if (query.status === 'pending') return <LoadingState label="Loading suggestions…" />;
  if (query.status === 'error' && !isNotCollected(query.error)) {
    return <ErrorState title="Could not load suggestions" message={errorMessage(query.error)} />;
  }
  const suggestions: Suggestion[] = query.data?.suggestions ?? [];
  if (suggestions.length === 0) {
    return (
      <>
        <RequestCollection
          kind="suggestions"
          what="index suggestion"
          queryId={queryId}
          instance={instance}
          testId="suggestions-not-collected"
          onRequested={() => setRequestedAt(Date.now())}
        />
        <IndexPlanLink instances={[instance]} />
      </>
    );
  }
  return (
    <div data-testid="suggestions">
      <IndexPlanLink instances={[instance]} />
      <ul className="suggestions">
        {suggestions.map((suggestion) => {
          const view = suggestionView(suggestion);
          return (
            <li key={suggestion.id} className="card" data-testid="suggestion">
              <div className="suggestion-head">
                <span className="badge">{view.actionLabel}</span> <code>{suggestion.table}</code>{' '}
                <span className={`badge status-${suggestion.status}`}>{suggestion.status}</span>
              </div>
              {view.showsSql && (
                <pre className="sql-block">
                  <SqlText sql={suggestion.ddl} />
                </pre>
              )}
              <p>{suggestion.reason}</p>
              {view.mergedInto && (
                <p data-testid="suggestion-merged">
                  Merged into the suggestion for query{' '}
                  <Link to={view.mergedInto.link}>
                    <code>{view.mergedInto.queryId}</code>
                  </Link>
                  , whose index holds this one’s columns first: <code>{view.mergedInto.ddl}</code>
                </p>
              )}
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
              <p className="suggestion-plan" data-testid="suggestion-plan">
                {view.plan && <>{view.plan} </>}
                <Link to={view.planLink}>Index plan of {suggestion.instance}</Link>
              </p>
              {view.action && canChange && (
                <p className="actions">
                  <button
                    type="button"
                    className="button"
                    disabled={mutation.isPending}
                    onClick={() =>
                      mutation.mutate({
                        id: suggestion.id,
                        status: view.action === 'restore' ? 'new' : 'dismissed',
                      })
                    }
                  >
                    {view.action === 'restore' ? 'Restore' : 'Dismiss'}
                  </button>
                </p>
              )}
            </li>
          );
        })}
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
