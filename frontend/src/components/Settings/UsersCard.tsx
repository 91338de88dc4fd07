import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import type { Role, User } from '../../api/types';
import {
  useCreateUser,
  useDeleteUser,
  useEndUserSessions,
  useResetUserPassword,
  useUpdateUser,
  usersOptions,
} from '../../api/users';
import { formatInstant } from '../../lib/format';
import { lastActiveAdminId, roleOptions, userState } from '../../lib/users';
import { ListCard, MutationError } from './ListCard';

const LAST_ADMIN_HINT = 'The last active admin: make another user admin first.';

function UserForm() {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState<Role>(roleOptions()[0]!.value);
  const create = useCreateUser(() => {
    setName('');
    setPassword('');
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({ name: name.trim(), password, role });
  }

  return (
    <form className="settings-form" aria-label="Add a user" onSubmit={submit}>
      <label>
        Name
        <input
          required
          autoComplete="off"
          value={name}
          onChange={(event) => setName(event.target.value)}
        />
      </label>
      <label>
        Password
        <input
          required
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
      </label>
      <label>
        Role
        <select value={role} onChange={(event) => setRole(event.target.value as Role)}>
          {roleOptions().map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </label>
      <MutationError error={create.error} testId="user-form-error" />
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          Add user
        </button>
      </div>
    </form>
  );
}

/** A generated password: the API shows it once, so it is shown once here too. */
function GeneratedPassword({
  generated,
  onClose,
}: {
  generated: { name: string; password: string };
  onClose: () => void;
}) {
  return (
    <div className="secret" data-testid="generated-password" role="status">
      <span>
        New password of <strong>{generated.name}</strong>:{' '}
        <code data-testid="generated-password-value">{generated.password}</code>. Pass it on now: it
        is not shown again. Their sessions were ended.
      </span>
      <button type="button" className="button button-small" onClick={onClose}>
        Done
      </button>
    </div>
  );
}

function UserRow({
  user,
  isLastAdmin,
  onGenerated,
}: {
  user: User;
  isLastAdmin: boolean;
  onGenerated: (password: string) => void;
}) {
  const update = useUpdateUser(user.id);
  const reset = useResetUserPassword(user.id, onGenerated);
  const signOut = useEndUserSessions(user.id);
  const remove = useDeleteUser(user.id);
  const disabled = Boolean(user.disabled_at);
  const error = update.error ?? reset.error ?? signOut.error ?? remove.error;
  return (
    <tr data-testid="user-row">
      <th scope="row">{user.name}</th>
      <td>
        <select
          aria-label={`Role of ${user.name}`}
          value={user.role}
          disabled={update.isPending || isLastAdmin}
          title={isLastAdmin ? LAST_ADMIN_HINT : undefined}
          onChange={(event) => update.mutate({ role: event.target.value as Role })}
        >
          {roleOptions().map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      </td>
      <td className="nowrap" data-testid="user-state">
        {userState(user)}
      </td>
      <td data-testid="user-sessions">{user.live_sessions}</td>
      <td className="nowrap">{formatInstant(user.created_at)}</td>
      <td className="nowrap">
        {user.last_login_at ? (
          formatInstant(user.last_login_at)
        ) : (
          <span className="muted">never</span>
        )}
      </td>
      <td>
        <div className="row-actions">
          <button
            type="button"
            className="button button-small"
            disabled={update.isPending || (isLastAdmin && !disabled)}
            title={isLastAdmin ? LAST_ADMIN_HINT : undefined}
            onClick={() => {
              if (disabled || window.confirm(`Disable ${user.name}? Their sessions end now.`)) {
                update.mutate({ disabled: !disabled });
              }
            }}
          >
            {disabled ? 'Enable' : 'Disable'}
          </button>
          <button
            type="button"
            className="button button-small"
            disabled={reset.isPending}
            onClick={() => {
              if (window.confirm(`Give ${user.name} a new generated password?`)) reset.mutate();
            }}
          >
            Reset password
          </button>
          <button
            type="button"
            className="button button-small"
            disabled={signOut.isPending || user.live_sessions === 0}
            onClick={() => signOut.mutate()}
          >
            End sessions
          </button>
          <button
            type="button"
            className="button button-small button-danger"
            disabled={remove.isPending || isLastAdmin}
            title={isLastAdmin ? LAST_ADMIN_HINT : undefined}
            onClick={() => {
              if (window.confirm(`Delete user ${user.name}?`)) remove.mutate();
            }}
          >
            Delete
          </button>
        </div>
        <MutationError error={error} testId="user-row-error" />
      </td>
    </tr>
  );
}

/**
 * UI users (admin only): add, change the role, disable or enable, reset the password
 * (generated, shown once), end their sessions, delete.
 */
export function UsersCard() {
  const users = useQuery(usersOptions());
  const [generated, setGenerated] = useState<{ name: string; password: string } | null>(null);
  const lastAdmin = lastActiveAdminId(users.data ?? []);
  return (
    <ListCard
      title="Users"
      query={users}
      testId="users"
      empty="No users yet."
      actions={
        <>
          <UserForm />
          {generated && (
            <GeneratedPassword generated={generated} onClose={() => setGenerated(null)} />
          )}
        </>
      }
    >
      {(items) => (
        <table className="data-table" data-testid="users-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Sessions</th>
              <th scope="col">Created (UTC)</th>
              <th scope="col">Last sign-in (UTC)</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((user) => (
              <UserRow
                key={user.id}
                user={user}
                isLastAdmin={user.id === lastAdmin}
                onGenerated={(password) => setGenerated({ name: user.name, password })}
              />
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
