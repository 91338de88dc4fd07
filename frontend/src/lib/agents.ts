// Agent health in words: per instance and source what arrived last, how late, from which
// agent, what waits in its spool, and whether it is reporting, failing or has stopped.
import type { AgentSource } from '../api/types';
import { formatBytes, formatCount, formatDuration } from './format';

/** "12 s ago", "2 min 5 s ago", "3 h 10 min ago"; "just now" under a second. */
export function formatAgo(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  if (seconds < 1) return 'just now';
  return `${formatDuration(Math.round(seconds))} ago`;
}

/** Seconds from `iso` to `now` (ms since the epoch); null when it does not parse. */
export function secondsSince(iso: string | null | undefined, now: number): number | null {
  if (!iso) return null;
  const at = Date.parse(iso);
  return Number.isNaN(at) ? null : Math.max(0, (now - at) / 1000);
}

/** The state as a word and a line: "stopped: nothing for 25 min", "failing: <error>". */
export function stateText(source: AgentSource): string {
  if (source.state === 'stopped') {
    return `stopped: nothing received for ${formatDuration(Math.round(source.silent_seconds))}`;
  }
  if (source.state === 'failing') {
    return `failing to read ${source.source}${source.last_error ? `: ${source.last_error}` : ''}`;
  }
  return 'reporting';
}

/** "10 s ago, 3,456 rows" for the last data batch; "none yet" before the first. */
export function lastBatchText(source: AgentSource, now: number): string {
  const ago = secondsSince(source.last_batch_at, now);
  if (ago === null) return 'none yet';
  const rows =
    source.last_batch_rows === null ? '' : `, ${formatCount(source.last_batch_rows)} rows`;
  return `${formatAgo(ago)}${rows}`;
}

/** The last batch's lag: "1 min 5 s" behind the newest data it carried. */
export function lagText(source: AgentSource): string {
  if (source.lag_seconds === null) return '–';
  return source.lag_seconds < 1 ? '<1 s' : formatDuration(Math.round(source.lag_seconds));
}

/** "0.1.0 on db1.example"; agents older than status reports name only their version. */
export function agentText(source: AgentSource): string {
  const version = source.agent_version ?? 'unknown version';
  return source.agent_host ? `${version} on ${source.agent_host}` : version;
}

/** "3 batches (4 KB) waiting · 1 dropped · 0 refused"; "–" when the agent does not say. */
export function spoolText(source: AgentSource): string {
  if (source.spooled === null) return '–';
  const size = source.spooled_bytes === null ? '' : ` (${formatBytes(source.spooled_bytes)})`;
  return (
    `${formatCount(source.spooled)} batch${source.spooled === 1 ? '' : 'es'}${size} waiting` +
    ` · ${formatCount(source.dropped ?? 0)} dropped · ${formatCount(source.rejected ?? 0)} refused`
  );
}

/** The last error with how long ago; the text only for admins (the API withholds it). */
export function errorText(source: AgentSource, now: number): string {
  const ago = secondsSince(source.last_error_at, now);
  if (ago === null) return 'none';
  return source.last_error ? `${source.last_error} (${formatAgo(ago)})` : formatAgo(ago);
}

export interface AgentsAtAGlance {
  /** Instances with a source reporting (or failing: the agent is there), by name. */
  readonly connected: string[];
  /** Sources that stopped: "db1 slowlog". */
  readonly stopped: string[];
  /** The most recent data batch of any source, in seconds (null: none yet). */
  readonly lastBatchSeconds: number | null;
}

/** What the overview needs to know: is any agent connected, and what stopped. */
export function agentsAtAGlance(sources: readonly AgentSource[], now: number): AgentsAtAGlance {
  const connected = new Set<string>();
  const stopped: string[] = [];
  let last: number | null = null;
  for (const source of sources) {
    if (source.state === 'stopped') stopped.push(`${source.instance} ${source.source}`);
    else connected.add(source.instance);
    const ago = secondsSince(source.last_batch_at, now);
    if (ago !== null && (last === null || ago < last)) last = ago;
  }
  return { connected: [...connected].sort(), stopped, lastBatchSeconds: last };
}
