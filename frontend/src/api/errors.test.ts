import { describe, expect, it } from 'vitest';
import {
  ApiError,
  apiErrorFrom,
  detailFromBody,
  errorMessage,
  isUnauthorized,
  shouldRetry,
} from './errors';

describe('detailFromBody', () => {
  it.each<[unknown, string | undefined]>([
    [{ detail: 'Invalid or expired token' }, 'Invalid or expired token'],
    [
      {
        detail: [
          { loc: ['query', 'from'], msg: 'Input should be a valid datetime', type: 'x' },
          { loc: ['query', 'limit'], msg: 'Input should be less than 1000', type: 'y' },
        ],
      },
      'query.from: Input should be a valid datetime; query.limit: Input should be less than 1000',
    ],
    ['Bad gateway', 'Bad gateway'],
    ['<html><body>502</body></html>', undefined],
    ['   ', undefined],
    [{ detail: '' }, undefined],
    [{ message: 'other shape' }, undefined],
    [null, undefined],
    [undefined, undefined],
  ])('detailFromBody(%j) = %j', (body, expected) => {
    expect(detailFromBody(body)).toBe(expected);
  });

  it('truncates long text bodies', () => {
    const detail = detailFromBody('x'.repeat(1000));
    expect(detail).toHaveLength(301);
    expect(detail?.endsWith('…')).toBe(true);
  });
});

describe('apiErrorFrom', () => {
  it('uses the detail', () => {
    const error = apiErrorFrom(401, 'Unauthorized', { detail: 'Invalid token' });
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(401);
    expect(error.message).toBe('Invalid token');
  });

  it('falls back to the status line', () => {
    expect(apiErrorFrom(503, 'Service Unavailable', undefined).message).toBe(
      '503 Service Unavailable',
    );
    expect(apiErrorFrom(500, '', {}).message).toBe('500');
  });
});

describe('isUnauthorized / shouldRetry', () => {
  it('recognises 401 only', () => {
    expect(isUnauthorized(new ApiError(401, 'x'))).toBe(true);
    expect(isUnauthorized(new ApiError(403, 'x'))).toBe(false);
    expect(isUnauthorized(new Error('x'))).toBe(false);
  });

  it('never retries client errors', () => {
    expect(shouldRetry(0, new ApiError(401, 'x'))).toBe(false);
    expect(shouldRetry(0, new ApiError(422, 'x'))).toBe(false);
  });

  it('retries server and network errors twice', () => {
    expect(shouldRetry(0, new ApiError(502, 'x'))).toBe(true);
    expect(shouldRetry(1, new TypeError('Failed to fetch'))).toBe(true);
    expect(shouldRetry(2, new TypeError('Failed to fetch'))).toBe(false);
  });
});

describe('errorMessage', () => {
  it.each<[unknown, string]>([
    [new ApiError(401, 'Invalid token'), 'Invalid token'],
    [new TypeError('Failed to fetch'), 'Could not reach the Quanta API (Failed to fetch).'],
    [new Error('boom'), 'boom'],
    ['a string', 'Something went wrong.'],
  ])('errorMessage(%s) = %s', (error, expected) => {
    expect(errorMessage(error)).toBe(expected);
  });
});
