import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { annotationsOptions } from '../api/annotations';
import type { Annotation } from '../api/types';

/** Those about all instances or about any of `instances` (empty: every annotation). */
export function forInstances(
  annotations: readonly Annotation[],
  instances: readonly string[],
): Annotation[] {
  if (instances.length === 0) return [...annotations];
  return annotations.filter(
    (annotation) =>
      annotation.instances.length === 0 ||
      annotation.instances.some((name) => instances.includes(name)),
  );
}

/**
 * The annotations of a resolved time window (the exact bounds an API answer reported)
 * that concern `instances` (empty: all). Waits until the window is known.
 */
export function useScopeAnnotations(
  window: { from: string; to: string } | undefined,
  instances: readonly string[],
) {
  // The API filters on one instance; several are filtered here.
  const only = instances.length === 1 ? instances[0] : undefined;
  const query = useQuery(
    annotationsOptions(
      {
        ...(window && { from: window.from, to: window.to }),
        ...(only !== undefined && { instance: only }),
      },
      window !== undefined,
    ),
  );
  const data = useMemo(
    () => (query.data ? forInstances(query.data, instances) : undefined),
    [query.data, instances],
  );
  return { ...query, data };
}
