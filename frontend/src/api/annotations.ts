// Annotations (deploys, incidents, config changes on the time axis) and their impact.
import { queryOptions, useMutation, useQueryClient } from '@tanstack/react-query';
import {
  createAnnotation,
  deleteAnnotation,
  fetchAnnotationImpact,
  fetchAnnotations,
} from './client';
import type { AnnotationCreate, AnnotationsParams } from './types';

export const annotationKeys = {
  all: () => ['annotations'] as const,
  list: (params: AnnotationsParams) => ['annotations', 'list', params] as const,
  impact: (id: number, window: string) => ['annotations', 'impact', id, window] as const,
};

export function annotationsOptions(params: AnnotationsParams, enabled = true) {
  return queryOptions({
    queryKey: annotationKeys.list(params),
    queryFn: ({ signal }) => fetchAnnotations(params, signal),
    enabled,
  });
}

export function annotationImpactOptions(id: number, window: string) {
  return queryOptions({
    queryKey: annotationKeys.impact(id, window),
    queryFn: ({ signal }) => fetchAnnotationImpact(id, window, signal),
  });
}

/**
 * Adds an annotation. `onCreated` runs as soon as the server accepted it, then every
 * annotation list (and impact) is refetched.
 */
export function useCreateAnnotation(onCreated?: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: AnnotationCreate) => createAnnotation(body),
    onSuccess: () => {
      onCreated?.();
      return queryClient.invalidateQueries({ queryKey: annotationKeys.all() });
    },
  });
}

export function useDeleteAnnotation(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => deleteAnnotation(id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: annotationKeys.all() }),
  });
}
