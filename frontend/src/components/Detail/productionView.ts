// Shaping a production profile (stages from performance_schema's history) for its table:
// the stages that take the time, the rest folded into one row, the lost time last, and
// under each stage the waits that took most of it.
import type { QueryStages } from '../../api/types';

export type StageRowKind = 'stage' | 'folded' | 'lost' | 'wait';

export interface ProductionRow {
  readonly kind: StageRowKind;
  readonly label: string;
  readonly time_s: number;
  /** Of the response time (0 to 1). */
  readonly share: number;
  /** Calls of a stage, count of a wait; null for the lost-time and folded rows. */
  readonly calls: number | null;
  readonly per_call_s: number | null;
}

/** The lost-time row's name, and where the API files waits between stages. */
export const LOST_TIME = 'lost time';
/** Stages under this share (0 to 1) are folded into one row. */
export const FOLD_BELOW = 0.01;
/** Waits shown under a stage, the longest first. */
export const WAITS_PER_STAGE = 3;
/** Waits under this share of the response time (0 to 1) are left out: mutexes of a few
 * nanoseconds said nothing. */
export const WAIT_MIN_SHARE = 0.001;

/** The table's rows: stages by time (those under FOLD_BELOW folded when there are two or
 * more), each followed by its longest waits (those over WAIT_MIN_SHARE), then the lost-time
 * row and its waits. */
export function productionRows(
  profile: QueryStages,
  below: number = FOLD_BELOW,
  waitsPerStage: number = WAITS_PER_STAGE,
): ProductionRow[] {
  const response = profile.response_s;
  const share = (time: number) => (response > 0 ? time / response : 0);
  const waitsOf = (stage: string): ProductionRow[] =>
    profile.waits
      .filter((wait) => wait.stage === stage && share(wait.time_s) >= WAIT_MIN_SHARE)
      .sort((a, b) => b.time_s - a.time_s)
      .slice(0, waitsPerStage)
      .map((wait) => ({
        kind: 'wait',
        label: wait.event,
        time_s: wait.time_s,
        share: share(wait.time_s),
        calls: wait.count,
        per_call_s: wait.count > 0 ? wait.time_s / wait.count : null,
      }));
  const small = profile.stages.filter((stage) => stage.share < below);
  const folded = small.length >= 2 ? small : [];
  const rows: ProductionRow[] = [];
  for (const stage of profile.stages) {
    if (folded.includes(stage)) continue;
    rows.push({
      kind: 'stage',
      label: stage.stage,
      time_s: stage.time_s,
      share: stage.share,
      calls: stage.calls,
      per_call_s: stage.per_call_s,
    });
    rows.push(...waitsOf(stage.stage));
  }
  if (folded.length > 0) {
    const time = folded.reduce((sum, stage) => sum + stage.time_s, 0);
    rows.push({
      kind: 'folded',
      label: `${folded.length} other stages, each under ${below * 100}%`,
      time_s: time,
      share: share(time),
      calls: null,
      per_call_s: null,
    });
  }
  rows.push({
    kind: 'lost',
    label: LOST_TIME,
    time_s: profile.lost_time_s,
    share: share(profile.lost_time_s),
    calls: null,
    per_call_s: null,
  });
  rows.push(...waitsOf(LOST_TIME));
  return rows;
}

/** "from 412 of 61,230 executions in the range, nothing executed" (and of the waits). */
export function samplingNote(profile: QueryStages): string {
  const n = (value: number) => value.toLocaleString('en-US');
  const of = `from ${n(profile.executions_sampled)} of ${n(profile.executions_total)} executions`;
  const waits =
    profile.waits_sampled > 0 && profile.waits_sampled < profile.executions_sampled
      ? `; waits from ${n(profile.waits_sampled)} of them`
      : '';
  return `${of} in the range, nothing executed${waits}`;
}
