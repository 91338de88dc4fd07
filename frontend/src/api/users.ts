// Users (name, role, disabled) and the admin actions on them.
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createUser,
  deleteUser,
  endUserSessions,
  fetchUsers,
  resetUserPassword,
  updateUser,
} from './client';
import { auditKeys } from './audit';
import type { User, UserCreate, UserUpdate } from './types';

export const userKeys = {
  all: () => ['users'] as const,
};

export function usersOptions() {
  return queryOptions({
    queryKey: userKeys.all(),
    queryFn: ({ signal }) => fetchUsers(signal),
  });
}

/** After a user change: the list and the audit log (which records it) are stale. */
function useRefreshUsers() {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: userKeys.all() }),
      queryClient.invalidateQueries({ queryKey: auditKeys.all() }),
    ]);
}

/** Adds a user; `onCreated` runs before the list is refetched. */
export function useCreateUser(onCreated?: () => void) {
  const refresh = useRefreshUsers();
  return useMutation({
    mutationFn: (body: UserCreate) => createUser(body),
    onSuccess: async () => {
      onCreated?.();
      await refresh();
    },
  });
}

/** A new role and/or disabled (which ends their sessions). */
export function useUpdateUser(id: number) {
  const queryClient = useQueryClient();
  const refresh = useRefreshUsers();
  return useMutation({
    mutationFn: (body: UserUpdate) => updateUser(id, body),
    onSuccess: async (updated) => {
      // The answer is the row as it is now: shown at once, not after the refetch.
      queryClient.setQueryData<User[]>(userKeys.all(), (old) =>
        old?.map((item) => (item.id === updated.id ? updated : item)),
      );
      await refresh();
    },
  });
}

/** A generated password, given to `onGenerated` (it is shown once) before the refetch. */
export function useResetUserPassword(id: number, onGenerated: (password: string) => void) {
  const refresh = useRefreshUsers();
  return useMutation({
    mutationFn: () => resetUserPassword(id),
    onSuccess: async (result) => {
      if (result.generated_password) onGenerated(result.generated_password);
      await refresh();
    },
  });
}

/** Signs the user out everywhere. */
export function useEndUserSessions(id: number) {
  const refresh = useRefreshUsers();
  return useMutation({ mutationFn: () => endUserSessions(id), onSuccess: refresh });
}

export function useDeleteUser(id: number) {
  const refresh = useRefreshUsers();
  return useMutation({ mutationFn: () => deleteUser(id), onSuccess: refresh });
}
