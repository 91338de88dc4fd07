import { describe, expect, it } from 'vitest';
import type { ClassCap } from '../../api/types';
import { capSentence, foldingInstances } from './classCaps';

const cap = (instance: string, overrides: Partial<ClassCap> = {}): ClassCap => ({
  instance,
  classes: 120,
  max_classes: 20000,
  added_this_hour: 5000,
  max_new_per_hour: 5000,
  folded_classes: 0,
  folded_events: 0,
  last_folded: null,
  ...overrides,
});

describe('foldingInstances', () => {
  const caps = [cap('db1', { folded_classes: 3 }), cap('db2'), cap('db3', { folded_classes: 1 })];

  it('lists the instances that folded, of those in view', () => {
    expect(foldingInstances(caps, []).map((c) => c.instance)).toEqual(['db1', 'db3']);
    expect(foldingInstances(caps, ['db2', 'db3']).map((c) => c.instance)).toEqual(['db3']);
    expect(foldingInstances(caps, ['db2'])).toEqual([]);
  });
});

describe('capSentence', () => {
  it('names the hourly cap while the instance is under its total', () => {
    expect(capSentence(cap('db1', { folded_classes: 180000, folded_events: 180020 }))).toBe(
      'db1: 180,000 new statement shapes (180,020 executions) in the last 24 hours are counted ' +
        'under “Other queries”, with exact counts and times but no examples or advice; it added ' +
        '5,000 new classes this hour, the hourly cap is 5,000 (QUANTA_MAX_NEW_CLASSES_PER_HOUR).',
    );
  });

  it('names the instance cap once it is reached', () => {
    expect(capSentence(cap('db1', { classes: 20000, folded_classes: 1, folded_events: 2 }))).toBe(
      'db1: 1 new statement shape (2 executions) in the last 24 hours are counted under ' +
        '“Other queries”, with exact counts and times but no examples or advice; it holds ' +
        '20,000 query classes, its cap (QUANTA_MAX_CLASSES_PER_INSTANCE).',
    );
  });
});
