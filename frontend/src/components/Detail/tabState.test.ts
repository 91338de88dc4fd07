import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors';
import { isWaiting } from '../../lib/runs';
import { isNotCollected } from './tabState';

describe('isWaiting', () => {
  it('waits for a queued run and for a newer queued request', () => {
    expect(isWaiting({ status: 'queued', pending: false })).toBe(true);
    expect(isWaiting({ status: 'ok', pending: true })).toBe(true);
    expect(isWaiting({ status: 'ok', pending: false })).toBe(false);
    expect(isWaiting({ status: 'refused', pending: false })).toBe(false);
    expect(isWaiting(undefined)).toBe(false);
  });
});

describe('isNotCollected', () => {
  it('is a 404 only', () => {
    expect(isNotCollected(new ApiError(404, 'none'))).toBe(true);
    expect(isNotCollected(new ApiError(409, 'no dsn'))).toBe(false);
  });
});
