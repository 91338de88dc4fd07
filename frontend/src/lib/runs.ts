// Diagnostic runs (EXPLAIN, profile) as the API reports them.
/**
 * Whether a run still waits for the worker: it is queued itself, or it is the latest
 * finished one and a newer request is queued (`pending`). Tabs poll while it is.
 */
export function isWaiting(run: { status: string; pending: boolean } | undefined): boolean {
  return run !== undefined && (run.status === 'queued' || run.pending);
}
