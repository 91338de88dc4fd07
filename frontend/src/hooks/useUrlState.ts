import { useCallback, useMemo } from 'react';
import { useLocation, useNavigate } from 'react-router';

/**
 * View state kept in the URL's query string: `parse` reads it, `serialize` writes it.
 * Updating pushes a history entry (so Back undoes a filter) unless `replace` is set,
 * which typing in a search box uses.
 */
export function useUrlState<S>(
  parse: (search: string) => S,
  serialize: (state: S) => string,
): [S, (update: Partial<S> | ((state: S) => S), options?: { replace?: boolean }) => void] {
  const location = useLocation();
  const navigate = useNavigate();
  const state = useMemo(() => parse(location.search), [parse, location.search]);
  const setState = useCallback(
    (update: Partial<S> | ((state: S) => S), options: { replace?: boolean } = {}) => {
      const next = typeof update === 'function' ? update(state) : { ...state, ...update };
      const search = serialize(next);
      if (`?${search}` === location.search || (search === '' && location.search === '')) return;
      void navigate(
        { pathname: location.pathname, search: search ? `?${search}` : '' },
        { replace: options.replace ?? false },
      );
    },
    [state, serialize, navigate, location.pathname, location.search],
  );
  return [state, setState];
}
