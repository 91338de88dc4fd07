import { describe, expect, it } from 'vitest';
import { foldStages, type ProfileRow } from './profileView';

const stage = (state: string, percent: number, totalUs: number, lostTime = false): ProfileRow => ({
  state,
  percent,
  total_us: totalUs,
  calls: 2,
  per_call_us: totalUs / 2,
  lost_time: lostTime,
});

describe('foldStages', () => {
  it('folds the stages under 1% into one row after the others', () => {
    const rows = [
      stage('Starting', 0.4, 40),
      stage('Sending data', 92.1, 9210),
      stage('checking permissions', 0.1, 10),
      stage('Opening tables', 0.2, 20),
      stage('not accounted for', 0.3, 30, true),
      stage('Sorting result', 6.9, 690),
    ];
    const shown = foldStages(rows);
    expect(shown.map((row) => [row.state, row.stages])).toEqual([
      ['Sending data', 1],
      ['not accounted for', 1],
      ['Sorting result', 1],
      ['3 other stages, each under 1%', 3],
    ]);
    const folded = shown[3];
    expect(folded?.total_us).toBe(70);
    expect(folded?.percent).toBeCloseTo(0.7);
    expect(folded?.calls).toBe(6);
    expect(folded?.per_call_us).toBeNull();
    // The shares still sum to 100.
    expect(shown.reduce((total, row) => total + row.percent, 0)).toBeCloseTo(100);
  });

  it('keeps a lone small stage as it is: folding one row hides without shortening', () => {
    const rows = [stage('Sending data', 99.5, 995), stage('Starting', 0.5, 5)];
    expect(foldStages(rows).map((row) => row.state)).toEqual(['Sending data', 'Starting']);
  });
});
