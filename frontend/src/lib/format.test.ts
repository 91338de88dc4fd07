import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  formatCount,
  formatDuration,
  formatInstant,
  formatLoad,
  formatShare,
  formatTimeRange,
  examinedPerSent,
  formatMetric,
  formatRate,
  formatRatio,
  shareBarPercent,
} from './format';

describe('formatLoad', () => {
  it.each([
    [0, '0'],
    [0.00066, '0.00066'],
    [0.000142857, '0.000143'],
    [0.0000547053, '0.0000547'],
    [0.0000116, '0.0000116'],
    [0.000001, '0.000001'],
    [1.2e-7, '<0.000001'],
    [0.5, '0.5'],
    [1.23456, '1.23'],
    [12.345, '12.3'],
    [123.45, '123'],
    [999.6, '1000'],
    [12345.6, '12,346'],
    [Number.NaN, '–'],
    [Number.POSITIVE_INFINITY, '–'],
  ])('formatLoad(%s) = %s', (load, expected) => {
    expect(formatLoad(load)).toBe(expected);
  });
});

describe('formatCount', () => {
  it.each([
    [0, '0'],
    [100, '100'],
    [1234, '1,234'],
    [1234567, '1,234,567'],
    [Number.NaN, '–'],
  ])('formatCount(%s) = %s', (count, expected) => {
    expect(formatCount(count)).toBe(expected);
  });
});

describe('formatShare', () => {
  it.each([
    [0, '0%'],
    [-0.1, '0%'],
    [0.0004, '<0.1%'],
    [0.001, '0.1%'],
    [0.0123, '1.2%'],
    [0.0996, '10%'],
    [0.22, '22%'],
    [0.2267, '23%'],
    [1, '100%'],
    [Number.NaN, '–'],
  ])('formatShare(%s) = %s', (share, expected) => {
    expect(formatShare(share)).toBe(expected);
  });
});

describe('shareBarPercent', () => {
  it.each([
    [0.22, 22],
    [0, 0],
    [-1, 0],
    [1.5, 100],
    [Number.NaN, 0],
  ])('shareBarPercent(%s) = %s', (share, expected) => {
    expect(shareBarPercent(share)).toBeCloseTo(expected, 10);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0'],
    [5e-7, '<1 µs'],
    [0.000123, '123 µs'],
    [0.0009996, '1 ms'],
    [0.0012345, '1.23 ms'],
    [0.125, '125 ms'],
    [0.5, '500 ms'],
    [0.99996, '1 s'],
    [1.5, '1.5 s'],
    [12.5, '12.5 s'],
    [56.7, '56.7 s'],
    [59.96, '1 min'],
    [61, '1 min 1 s'],
    [125, '2 min 5 s'],
    [3599.6, '1 h'],
    [3725, '1 h 2 min'],
    [86400, '1 d'],
    [90000, '1 d 1 h'],
    [null, '–'],
    [-1, '–'],
    [Number.NaN, '–'],
  ])('formatDuration(%s) = %s', (seconds, expected) => {
    expect(formatDuration(seconds)).toBe(expected);
  });
});

describe('formatInstant / formatTimeRange', () => {
  it('prints UTC minutes', () => {
    expect(formatInstant('2026-11-21T00:00:00Z')).toBe('2026-11-21 00:00');
    expect(formatInstant('2026-11-21T02:30:59+02:00')).toBe('2026-11-21 00:30');
  });

  it('returns unparseable input unchanged', () => {
    expect(formatInstant('yesterday')).toBe('yesterday');
  });

  it('joins a range', () => {
    expect(formatTimeRange('2026-11-21T00:00:00Z', '2026-11-22T00:00:00Z')).toBe(
      '2026-11-21 00:00 – 2026-11-22 00:00 UTC',
    );
  });
});

describe('formatRate / formatRatio / formatMetric', () => {
  it.each<[number | null, string]>([
    [0, '0'],
    [0.0123456, '0.0123'],
    [0.0004, '<0.001'],
    [12.345, '12.3'],
    [1234.5, '1,235'],
    [null, '–'],
    [Number.NaN, '–'],
  ])('formatRate(%s) = %s', (value, expected) => {
    expect(formatRate(value)).toBe(expected);
  });

  it('computes rows examined per row sent', () => {
    expect(examinedPerSent(1000, 10)).toBe(100);
    expect(examinedPerSent(0, 0)).toBe(0);
    expect(examinedPerSent(5, 0)).toBe(Number.POSITIVE_INFINITY);
    expect(examinedPerSent(null, 3)).toBeNull();
    expect(formatRatio(Number.POSITIVE_INFINITY)).toBe('∞');
    expect(formatRatio(2.5)).toBe('2.5');
  });

  it('formats time metrics as durations', () => {
    expect(formatMetric('query_time', 0.25)).toBe('250 ms');
    expect(formatMetric('lock_time', 0.000002)).toBe('2 µs');
    expect(formatMetric('rows_examined', 1234)).toBe('1,234');
    expect(formatMetric('count', null)).toBe('–');
  });
});

describe('formatBytes', () => {
  it.each([
    [0, '0 bytes'],
    [1000, '1,000 bytes'],
    [16384, '16 KB'],
    [1589248, '1.5 MB'],
    [9977856, '9.5 MB'],
    [123456789012, '115 GB'],
    [null, '–'],
  ])('%s -> %s', (bytes, text) => expect(formatBytes(bytes)).toBe(text));
});
