// Diagnostic runs (EXPLAIN, profile) as the API reports them.
/**
 * Whether a run still waits for the worker: it is queued itself, or it is the latest
 * finished one and a newer request is queued (`pending`). Tabs poll while it is.
 */
export function isWaiting(run: { status: string; pending: boolean } | undefined): boolean {
  return run !== undefined && (run.status === 'queued' || run.pending);
}

export interface ServerUsed {
  readonly role: string;
  readonly address: string;
}

interface RunPlace {
  readonly instance: string;
  readonly server_version?: string | null;
  readonly ran_on?: readonly ServerUsed[];
  /** An EXPLAIN run's ANALYZE document, when one was taken on the execution target. */
  readonly analyze?: unknown;
}

/**
 * Where a run ran, as the header under it says: a profile "on the execution target
 * 127.0.0.1:3311 (10.11.9-MariaDB) for db1"; an EXPLAIN "on db1's monitored server
 * db1.lan:3306 (...)", with "; ANALYZE on the execution target ..." when it measured there.
 * Runs stored before the servers were recorded (no `ran_on`) name what they can.
 */
export function ranOnText(run: RunPlace, kind: 'explain' | 'profile'): string {
  const version = run.server_version ? ` (${run.server_version})` : '';
  const target = run.ran_on?.find((server) => server.role === 'execution target');
  const monitored = run.ran_on?.find((server) => server.role === 'monitored server');
  if (kind === 'profile') {
    return target
      ? `on the execution target ${target.address}${version} for ${run.instance}`
      : `on the execution target of ${run.instance}${version}`;
  }
  const explained = monitored
    ? `on ${run.instance}'s monitored server ${monitored.address}${version}`
    : `on ${run.instance}${version}`;
  const analyzed =
    target && run.analyze ? `; ANALYZE on the execution target ${target.address}` : '';
  return explained + analyzed;
}
