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
  formatExamined,
  formatMetric,
  formatPerSecond,
  formatRate,
  shareBarPercent,
} from './format';

describe('formatLoad', () => {
  it.each([
    [0, '0'],
    // Below 0.1 session: the query time it is per second, never a row of zeros.
    [0.00000798, '7.98 µs/s'],
    [0.00066, '660 µs/s'],
    [0.000142857, '143 µs/s'],
    [0.0123, '12.3 ms/s'],
    [0.0999, '99.9 ms/s'],
    // Below a microsecond per second (a quiet query over a long range): nanoseconds.
    [1.2e-7, '120 ns/s'],
    [2.6157e-8, '26.2 ns/s'],
    [9.996e-7, '1 µs/s'],
    [1e-12, '<1 ns/s'],
    // From 0.1: average active sessions, 2-3 significant digits.
    [0.1, '0.1'],
    [0.5, '0.5'],
    [1.23456, '1.23'],
    [12.345, '12.3'],
    [123.45, '123'],
    [999.6, '1000'],
    [12345.6, '12,346'],
    // Differences (impact views) keep their sign.
    [-0.25, '-0.25'],
    [-0.004, '-4 ms/s'],
    [Number.NaN, '–'],
    [Number.POSITIVE_INFINITY, '–'],
  ])('formatLoad(%s) = %s', (load, expected) => {
    expect(formatLoad(load)).toBe(expected);
  });

  it('never prints more than 3 significant digits or a run of zeros', () => {
    for (let exponent = -8; exponent <= 3; exponent += 0.37) {
      const text = formatLoad(7.9812345 * 10 ** exponent);
      expect(text).not.toMatch(/0\.000|e-|</);
      expect(text.replace(/[^0-9]/g, '').replace(/^0+/, '').length).toBeLessThanOrEqual(4);
    }
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

describe('formatRate / formatExamined / formatPerSecond / formatMetric', () => {
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

  it('computes rows examined per row sent, or per call when no row is sent', () => {
    expect(examinedPerSent(1000, 10, 5)).toEqual({ value: 100, per: 'row' });
    expect(examinedPerSent(0, 0, 5)).toEqual({ value: 0, per: 'row' });
    // An UPDATE examines rows and sends none: per call, not infinity.
    expect(examinedPerSent(5000, 0, 40)).toEqual({ value: 125, per: 'call' });
    expect(examinedPerSent(null, 3, 1)).toBeNull();
    expect(formatExamined(examinedPerSent(5000, 0, 40))).toBe('125/call');
    expect(formatExamined(examinedPerSent(123456, 0, 1))).toBe('123,456/call');
    expect(formatExamined(examinedPerSent(1000, 10, 5))).toBe('100');
    expect(formatExamined(null)).toBe('–');
    expect(formatExamined(examinedPerSent(5, 0, 1))).not.toContain('∞');
  });

  it('formats rates per second in their unit', () => {
    // The query time rate: 7.98 µs of query time per second, not "7.98 µs".
    expect(formatPerSecond('query_time', 0.00000798)).toBe('7.98 µs/s');
    expect(formatPerSecond('query_time', 0.25)).toBe('250 ms/s');
    expect(formatPerSecond('lock_time', 2.5)).toBe('2.5 s/s');
    expect(formatPerSecond('query_time', 2.6e-8)).toBe('26 ns/s');
    expect(formatPerSecond('count', 12.345)).toBe('12.3/s');
    // Rare events per minute or per hour rather than a fraction per second.
    expect(formatPerSecond('count', 0.04)).toBe('2.4/min');
    expect(formatPerSecond('count', 40 / 86400)).toBe('1.67/h');
    expect(formatPerSecond('rows_examined', 1e-9)).toBe('<0.001/h');
    expect(formatPerSecond('count', 0)).toBe('0');
    expect(formatPerSecond('count', null)).toBe('–');
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
