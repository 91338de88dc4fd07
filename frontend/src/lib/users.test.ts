import { describe, expect, it } from 'vitest';
import type { User } from '../api/types';
import { lastActiveAdminId, roleOptions, userState } from './users';

function user(id: number, role: User['role'], disabled_at: string | null = null): User {
  return {
    id,
    name: `u${id}`,
    role,
    created_at: '2026-11-25T10:00:00Z',
    last_login_at: null,
    disabled_at,
    live_sessions: 0,
  };
}

describe('roleOptions', () => {
  it('lists every role of the schema with its label', () => {
    expect(roleOptions()).toEqual([
      { value: 'viewer', label: 'viewer (read only)' },
      { value: 'operator', label: 'operator (read, request EXPLAIN/profiles/suggestions)' },
      { value: 'admin', label: 'admin' },
    ]);
  });
});

describe('lastActiveAdminId', () => {
  it.each([
    ['no users', [], null],
    ['only viewers', [user(1, 'viewer')], null],
    ['one admin', [user(1, 'viewer'), user(2, 'admin')], 2],
    ['two admins', [user(1, 'admin'), user(2, 'admin')], null],
    [
      'a disabled admin does not count',
      [user(1, 'admin', '2026-11-25T11:00:00Z'), user(2, 'admin')],
      2,
    ],
    ['only a disabled admin', [user(1, 'admin', '2026-11-25T11:00:00Z')], null],
  ])('%s', (_case, users, expected) => {
    expect(lastActiveAdminId(users)).toBe(expected);
  });
});

describe('userState', () => {
  it('says active or since when disabled', () => {
    expect(userState(user(1, 'viewer'))).toBe('active');
    expect(userState(user(1, 'viewer', '2026-11-25T11:05:00Z'))).toMatch(
      /^disabled 2026-11-25 11:05/,
    );
  });
});
