// Shaping of the Users settings: role choices, the last active admin, a user's state.
import type { Role, User } from '../api/types';
import { formatInstant } from './format';

/**
 * A label per role. Keyed by the API schema's role type, so when the API gains a role,
 * `tsc` fails here until it has a label: the choices always match the server's.
 */
export const ROLE_LABELS: Record<Role, string> = {
  viewer: 'viewer (read only)',
  operator: 'operator (read, request EXPLAIN/profiles/suggestions)',
  admin: 'admin',
};

/** The role that may manage users: the server keeps at least one active user in it. */
export const ADMIN_ROLE = 'admin' satisfies Role;

/** The roles to choose from, in the schema's order, with their labels. */
export function roleOptions(): { value: Role; label: string }[] {
  return (Object.keys(ROLE_LABELS) as Role[]).map((value) => ({
    value,
    label: ROLE_LABELS[value],
  }));
}

/**
 * The id of the only active admin user, or null when there are none or several. That
 * user cannot be disabled, demoted or deleted (the server answers 409), so the page does
 * not offer it.
 */
export function lastActiveAdminId(users: readonly User[]): number | null {
  const admins = users.filter((user) => user.role === ADMIN_ROLE && !user.disabled_at);
  return admins.length === 1 ? admins[0]!.id : null;
}

/** "active", or "disabled <when>" (UTC). */
export function userState(user: User): string {
  return user.disabled_at ? `disabled ${formatInstant(user.disabled_at)}` : 'active';
}
