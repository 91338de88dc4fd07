import { useQuery } from '@tanstack/react-query';
import { meQueryOptions } from '../api/queries';

export function useMe() {
  return useQuery(meQueryOptions());
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
