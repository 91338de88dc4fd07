import { describe, expect, it } from 'vitest';
import type { QueryStages } from '../../api/types';
import { productionRows, samplingNote } from './productionView';

const stage = (name: string, time: number, share: number, calls = 10) => ({
  stage: name,
  time_s: time,
  share,
  calls,
  per_call_s: time / calls,
});

const PROFILE: QueryStages = {
  instance: 'db1',
  from: '2026-01-01T00:00:00Z',
  to: '2026-01-01T01:00:00Z',
  executions_sampled: 412,
  executions_total: 61230,
  response_s: 1.0,
  stages: [
    stage('Creating sort index', 0.8, 0.8),
    stage('Sending data', 0.1, 0.1),
    stage('init', 0.005, 0.005),
    stage('starting', 0.004, 0.004),
  ],
  lost_time_s: 0.091,
  waits_sampled: 200,
  waits: [
    { stage: 'Creating sort index', event: 'wait/io/table/sql/handler', time_s: 0.5, count: 400 },
    {
      stage: 'Creating sort index',
      event: 'wait/io/file/innodb/innodb_data_file',
      time_s: 0.2,
      count: 3,
    },
    { stage: 'Creating sort index', event: 'wait/synch/mutex/a', time_s: 0.001, count: 9 },
    { stage: 'Creating sort index', event: 'wait/synch/mutex/b', time_s: 0.0001, count: 9 },
    { stage: 'lost time', event: 'wait/io/socket/sql/client_connection', time_s: 0.05, count: 412 },
  ],
  collection: { stages: true, waits: true, reported_at: '2026-01-01T01:00:00Z' },
  reason: null,
};

describe('productionRows', () => {
  it('ranks stages with their longest waits under them, folds the small ones, lost time last', () => {
    const rows = productionRows(PROFILE);
    expect(rows.map((row) => [row.kind, row.label])).toEqual([
      ['stage', 'Creating sort index'],
      ['wait', 'wait/io/table/sql/handler'],
      ['wait', 'wait/io/file/innodb/innodb_data_file'],
      ['wait', 'wait/synch/mutex/a'],
      ['stage', 'Sending data'],
      ['folded', '2 other stages, each under 1%'],
      ['lost', 'lost time'],
      ['wait', 'wait/io/socket/sql/client_connection'],
    ]);
    const folded = rows.find((row) => row.kind === 'folded');
    expect(folded?.time_s).toBeCloseTo(0.009);
    expect(rows.find((row) => row.kind === 'lost')?.share).toBeCloseTo(0.091);
    expect(rows[1]?.per_call_s).toBeCloseTo(0.00125);
  });

  it('does not fold a single small stage', () => {
    const one = { ...PROFILE, stages: PROFILE.stages.slice(0, 3), waits: [] };
    expect(productionRows(one).map((row) => row.label)).toEqual([
      'Creating sort index',
      'Sending data',
      'init',
      'lost time',
    ]);
  });
});

describe('samplingNote', () => {
  it('says how many executions the profile is from, and that nothing ran', () => {
    expect(samplingNote(PROFILE)).toBe(
      'from 412 of 61,230 executions in the range, nothing executed; waits from 200 of them',
    );
    expect(samplingNote({ ...PROFILE, waits_sampled: 412 })).toBe(
      'from 412 of 61,230 executions in the range, nothing executed',
    );
  });
});
