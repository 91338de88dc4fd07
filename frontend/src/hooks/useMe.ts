import { useQuery } from '@tanstack/react-query';
import { meOptions } from '../api/auth';

export function useMe() {
  return useQuery(meOptions());
}

/** Whether the caller may change settings (the admin scope); false until /me answers. */
export function useIsAdmin(): boolean {
  return useMe().data?.scopes.includes('admin') ?? false;
}

/** Whether the caller holds `scope` (admin can do everything); false until /me answers. */
export function useHasScope(scope: string): boolean {
  const scopes = useMe().data?.scopes;
  return scopes?.includes(scope) === true || scopes?.includes('admin') === true;
}
