// Shaping a profile's stages for its table: the few stages that take the time, with the
// many that take almost none (SHOW PROFILE lists two dozen) folded into one row.
import type { ProfileRun } from '../../api/types';

export type ProfileRow = ProfileRun['rows'][number];

export interface ShownStage {
  readonly state: string;
  readonly total_us: number;
  readonly percent: number;
  readonly calls: number;
  /** Null for the folded row: an average over different stages means nothing. */
  readonly per_call_us: number | null;
  readonly lost_time: boolean;
  /** How many stages the row stands for (1 for a stage of its own). */
  readonly stages: number;
}

/** Stages under this share of the response time (percent) are folded together. */
export const FOLD_BELOW_PERCENT = 1;

/**
 * The stages at or above `FOLD_BELOW_PERCENT`, in their order, then one row for the rest
 * ("12 other stages, each under 1%"); the lost-time row is always its own. Nothing is
 * folded when a single stage would be.
 */
export function foldStages(
  rows: readonly ProfileRow[],
  below: number = FOLD_BELOW_PERCENT,
): ShownStage[] {
  const small = rows.filter((row) => !row.lost_time && row.percent < below);
  const shown: ShownStage[] = rows
    .filter((row) => small.length < 2 || !small.includes(row))
    .map((row) => ({ ...row, stages: 1 }));
  if (small.length < 2) return shown;
  const sum = (pick: (row: ProfileRow) => number) =>
    small.reduce((total, row) => total + pick(row), 0);
  return [
    ...shown,
    {
      state: `${small.length} other stages, each under ${below}%`,
      total_us: sum((row) => row.total_us),
      percent: sum((row) => row.percent),
      calls: sum((row) => row.calls),
      per_call_us: null,
      lost_time: false,
      stages: small.length,
    },
  ];
}
