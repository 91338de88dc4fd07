import { describe, expect, it } from 'vitest';
import { type TimeRange, describeRange, isDefaultRange, timeRangeFromSearch } from './timeRange';

describe('timeRangeFromSearch', () => {
  it.each([
    ['', {}],
    ['?from=2026-11-21T00:00:00Z', { from: '2026-11-21T00:00:00Z' }],
    [
      '?from=2026-11-21T00:00:00Z&to=2026-11-22T00:00:00%2B02:00',
      { from: '2026-11-21T00:00:00Z', to: '2026-11-22T00:00:00+02:00' },
    ],
    ['?from=yesterday&to=2026-11-22T00:00:00Z', { to: '2026-11-22T00:00:00Z' }],
    ['?from=&to=%20', {}],
    ['?limit=5', {}],
  ])('timeRangeFromSearch(%j) = %j', (search, expected) => {
    expect(timeRangeFromSearch(search)).toEqual(expected);
  });
});

describe('isDefaultRange', () => {
  it('is true only without bounds', () => {
    expect(isDefaultRange({})).toBe(true);
    expect(isDefaultRange({ to: '2026-11-22T00:00:00Z' })).toBe(false);
  });
});

describe('describeRange', () => {
  const resolved = { from: '2026-11-21T00:00:00Z', to: '2026-11-22T00:00:00Z' };

  it.each<[TimeRange, { from: string; to: string } | undefined, string]>([
    [{}, undefined, 'Last 24 hours'],
    [{}, resolved, 'Last 24 hours · 2026-11-21 00:00 – 2026-11-22 00:00 UTC'],
    [
      { from: '2026-11-21T00:00:00Z', to: '2026-11-22T00:00:00Z' },
      undefined,
      '2026-11-21 00:00 – 2026-11-22 00:00 UTC',
    ],
    [{ to: '2026-11-22T00:00:00Z' }, undefined, '24 h before end – 2026-11-22 00:00 UTC'],
    [{ from: '2026-11-21T06:00:00Z' }, resolved, '2026-11-21 00:00 – 2026-11-22 00:00 UTC'],
  ])('describeRange(%j, %j) = %s', (range, res, expected) => {
    expect(describeRange(range, res)).toBe(expected);
  });
});
