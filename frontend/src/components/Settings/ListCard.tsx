import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { errorMessage } from '../../api/errors';
import { EmptyState } from '../Status/EmptyState';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';

/** Loading, error and empty states of a settings list; `children` renders the rows. */
export function ListCard<T>({
  title,
  query,
  empty,
  actions,
  children,
  testId,
}: {
  title: string;
  query: UseQueryResult<T[]>;
  empty: string;
  actions?: ReactNode;
  children: (items: T[]) => ReactNode;
  testId: string;
}) {
  return (
    <section className="card" data-testid={testId} id={testId}>
      <h2>{title}</h2>
      {actions}
      {query.status === 'pending' && <LoadingState label={`Loading ${title.toLowerCase()}…`} />}
      {query.status === 'error' && (
        <ErrorState
          title={`Could not load ${title.toLowerCase()}`}
          message={errorMessage(query.error)}
          onRetry={() => void query.refetch()}
        />
      )}
      {query.data?.length === 0 && <EmptyState title={empty} />}
      {query.data && query.data.length > 0 && children(query.data)}
    </section>
  );
}

/** A write's 4xx `detail` (or any failure), shown next to the form or row it came from. */
export function MutationError({ error, testId }: { error: unknown; testId?: string }) {
  if (!error) return null;
  return (
    <p className="form-error" role="alert" data-testid={testId}>
      {errorMessage(error)}
    </p>
  );
}

/** Splits "a, b c" into ["a", "b", "c"]. */
export function splitList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);
}

/** A mutation as a row button needs it: whether it runs, and how to start it. */
interface RowMutation {
  isPending: boolean;
  mutate: () => void;
}

/**
 * A settings row's buttons: its test action, any `extra` buttons, Edit and Delete (which
 * asks `confirmDelete` first).
 */
export function RowActions({
  test,
  testLabel,
  testPendingLabel,
  extra,
  onEdit,
  remove,
  confirmDelete,
}: {
  test: RowMutation;
  testLabel: string;
  testPendingLabel: string;
  extra?: ReactNode;
  onEdit: () => void;
  remove: RowMutation;
  confirmDelete: string;
}) {
  return (
    <div className="row-actions">
      <button
        type="button"
        className="button button-small"
        disabled={test.isPending}
        onClick={() => test.mutate()}
      >
        {test.isPending ? testPendingLabel : testLabel}
      </button>
      {extra}
      <button type="button" className="button button-small" onClick={onEdit}>
        Edit
      </button>
      <button
        type="button"
        className="button button-small button-danger"
        disabled={remove.isPending}
        onClick={() => {
          if (window.confirm(confirmDelete)) remove.mutate();
        }}
      >
        Delete
      </button>
    </div>
  );
}
