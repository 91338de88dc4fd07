import type { ExplainRun, ProfileRun } from '../../api/types';
import { formatInstant } from '../../lib/format';
import { ranOnText } from '../../lib/runs';
import { SqlText } from '../Sql/SqlText';
import { LoadingState } from '../Status/LoadingState';

/** When a run was taken (or requested), where it ran, its state, and why it failed. */
export function RunHeader({
  run,
  kind,
}: {
  run: ExplainRun | ProfileRun;
  kind: 'explain' | 'profile';
}) {
  const analyze = 'analyze' in run ? run.analyze : null;
  return (
    <>
      <p className="muted run-header" data-testid="run-header">
        <span className={`badge run-${run.status}`} data-testid="run-status">
          {run.status}
        </span>{' '}
        {run.taken_at
          ? `Taken ${formatInstant(run.taken_at)} UTC ${ranOnText({ ...run, analyze }, kind)}`
          : `Requested ${formatInstant(run.requested_at)} UTC for ${run.instance}`}
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

/** The statements the run was taken on (a collapsed list). */
export function ExamplesUsed({ run }: { run: ExplainRun | ProfileRun }) {
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
