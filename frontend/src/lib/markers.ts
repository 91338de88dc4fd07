// Where annotations go on a time axis. Point annotations draw as lines, ranged ones as
// bands; both are clipped to the axis and those entirely outside it are left out.
import type { Annotation } from '../api/types';

export interface Marker {
  readonly id: number;
  /** An annotation (opens its impact) or where a regression started (opens it). */
  readonly kind: 'annotation' | 'regression';
  readonly link: string;
  readonly text: string;
  readonly tags: readonly string[];
  /** Epoch ms, clipped to the axis. */
  readonly start: number;
  /** Epoch ms clipped to the axis; null for a point annotation. */
  readonly end: number | null;
  /** Offset from the axis start, in percent of its length. */
  readonly left: number;
  /** Band width in percent of the axis length; 0 for a point annotation. */
  readonly width: number;
  /** The original instants, for the hover text. */
  readonly time: string;
  readonly endTime: string | null;
}

/**
 * Markers for the annotations that touch [fromMs, toMs], earliest first. A range that
 * ends before it starts is treated as a point; unparseable times are skipped.
 */
export function placeMarkers(
  annotations: readonly Annotation[],
  fromMs: number,
  toMs: number,
): Marker[] {
  const span = toMs - fromMs;
  if (!(span > 0)) return [];
  const percent = (ms: number) => ((ms - fromMs) / span) * 100;
  const markers: Marker[] = [];
  for (const annotation of annotations) {
    const start = Date.parse(annotation.time);
    if (Number.isNaN(start)) continue;
    const parsedEnd = annotation.end_time === null ? Number.NaN : Date.parse(annotation.end_time);
    const ranged = !Number.isNaN(parsedEnd) && parsedEnd > start;
    const end = ranged ? parsedEnd : start;
    if (end < fromMs || start > toMs) continue;
    const clippedStart = Math.max(start, fromMs);
    const clippedEnd = ranged ? Math.min(end, toMs) : null;
    markers.push({
      id: annotation.id,
      kind: 'annotation',
      link: `/annotations/${annotation.id}`,
      text: annotation.text,
      tags: annotation.tags,
      start: clippedStart,
      end: clippedEnd,
      left: percent(clippedStart),
      width: clippedEnd === null ? 0 : percent(clippedEnd) - percent(clippedStart),
      time: annotation.time,
      endTime: ranged ? annotation.end_time : null,
    });
  }
  return markers.sort((a, b) => a.start - b.start || a.id - b.id);
}
