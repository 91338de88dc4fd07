import { useQuery } from '@tanstack/react-query';
import type { Collected } from '../../api/client';
import { useRequestCollection } from '../../api/collected';
import { errorMessage } from '../../api/errors';
import { instancesOptions } from '../../api/instances';
import { useHasScope } from '../../hooks/useMe';
import { MissingPrerequisite } from './MissingPrerequisite';
import { type Prerequisite, missingPrerequisite } from './prerequisites';

/** Requesting a run reaches the monitored server: the `diagnose` scope (operator, admin). */
const NEEDS_DIAGNOSE = 'Requesting one needs the diagnose permission (an operator or an admin).';

/**
 * "Not collected yet" with a button that asks the server to collect it (202). The tab's
 * query then polls while the run is queued.
 */
export function RequestCollection({
  kind,
  what,
  queryId,
  instance,
  testId,
  onRequested,
}: {
  kind: Collected;
  what: string;
  queryId: string;
  instance: string;
  testId?: string;
  /** Called once the server accepted the request. */
  onRequested?: () => void;
}) {
  const mutation = useRequestCollection(kind, queryId, instance, onRequested);
  const canRequest = useHasScope('diagnose');
  const missing = useMissingPrerequisite(kind, instance);
  return (
    <div className="state state-empty" data-testid={testId}>
      <p className="state-title">Not collected yet</p>
      <p className="state-message">
        No {what} of this query on {instance} has been collected.
      </p>
      {missing && <MissingPrerequisite missing={missing} id={`missing-${kind}`} />}
      {!canRequest ? (
        <p className="muted" data-testid="request-needs-diagnose">
          {NEEDS_DIAGNOSE}
        </p>
      ) : mutation.isSuccess ? (
        <p role="status">Requested. It appears here when the worker has run it.</p>
      ) : (
        <button
          type="button"
          className="button button-primary"
          onClick={() => mutation.mutate()}
          // Nothing to request until the instance has what the run needs.
          disabled={mutation.isPending || missing !== null}
          aria-describedby={missing ? `missing-${kind}` : undefined}
          title={missing?.reason}
          data-testid="request-collection"
        >
          {mutation.isPending ? 'Requesting…' : 'Request one'}
        </button>
      )}
      {mutation.isError && (
        <p className="form-error" role="alert">
          {errorMessage(mutation.error)}
        </p>
      )}
    </div>
  );
}

/** "Collect again" under a result. */
export function RequestAgain({
  kind,
  queryId,
  instance,
  onRequested,
}: {
  kind: Collected;
  queryId: string;
  instance: string;
  onRequested?: () => void;
}) {
  const mutation = useRequestCollection(kind, queryId, instance, onRequested);
  const missing = useMissingPrerequisite(kind, instance);
  if (!useHasScope('diagnose')) {
    return null;
  }
  return (
    <>
      {missing && <MissingPrerequisite missing={missing} id={`again-${kind}`} />}
      <p className="actions">
        <button
          type="button"
          className="button"
          onClick={() => mutation.mutate()}
          disabled={mutation.isPending || missing !== null}
          aria-describedby={missing ? `again-${kind}` : undefined}
          title={missing?.reason}
          data-testid="collect-again"
        >
          {mutation.isPending ? 'Requesting…' : 'Collect again'}
        </button>
        {mutation.isSuccess && <span role="status">Requested.</span>}
        {mutation.isError && <span className="form-error">{errorMessage(mutation.error)}</span>}
      </p>
    </>
  );
}

/** What the instance lacks for this kind of run (null: nothing, or not known yet). */
function useMissingPrerequisite(kind: Collected, instance: string): Prerequisite | null {
  const instances = useQuery(instancesOptions());
  if (!instances.data) return null;
  return missingPrerequisite(
    kind,
    instances.data.find((candidate) => candidate.name === instance),
  );
}
