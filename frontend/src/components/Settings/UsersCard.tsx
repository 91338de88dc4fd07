import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { createUser } from '../../api/client';
import { queryKeys, usersOptions } from '../../api/queries';
import { formatInstant } from '../../lib/format';
import { ListCard, MutationError } from './ListCard';

function UserForm() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [role, setRole] = useState('viewer');
  const create = useMutation({
    mutationFn: () => createUser({ name: name.trim(), password, role }),
    onSuccess: async () => {
      setName('');
      setPassword('');
      await queryClient.invalidateQueries({ queryKey: queryKeys.users() });
    },
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate();
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
        <select value={role} onChange={(event) => setRole(event.target.value)}>
          <option value="viewer">viewer (read)</option>
          <option value="operator">operator (read, request EXPLAIN/profiles/suggestions)</option>
          <option value="admin">admin</option>
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

/** UI users (admin only): who can sign in with a password, and their role. */
export function UsersCard() {
  const users = useQuery(usersOptions());
  return (
    <ListCard
      title="Users"
      query={users}
      testId="users"
      empty="No users yet."
      actions={<UserForm />}
    >
      {(items) => (
        <table className="data-table" data-testid="users-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Created (UTC)</th>
              <th scope="col">Last sign-in (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {items.map((user) => (
              <tr key={user.id}>
                <th scope="row">{user.name}</th>
                <td>{user.role}</td>
                <td className="nowrap">{formatInstant(user.created_at)}</td>
                <td className="nowrap">
                  {user.last_login_at ? (
                    formatInstant(user.last_login_at)
                  ) : (
                    <span className="muted">never</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
