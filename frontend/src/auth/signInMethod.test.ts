import { describe, expect, it } from 'vitest';
import { signInMethod } from './signInMethod';

describe('signInMethod', () => {
  it.each([
    [false, null, 'token'],
    [true, null, 'password'],
    [undefined, null, 'password'],
    [false, 'password', 'password'],
    [true, 'token', 'token'],
  ] as const)('users can sign in: %s, chosen: %s -> %s', (password, chosen, method) =>
    expect(signInMethod(password, chosen)).toBe(method),
  );
});
