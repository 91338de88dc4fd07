// The overview's warning when an instance is at a query-class cap: which instances, in
// words. Past the cap, new statement shapes are counted under "Other queries" (counts and
// times exact) without examples or advice; the warning says so and which cap it was.
import type { ClassCap } from '../../api/types';
import { formatCount } from '../../lib/format';

/** The instances (of those in view: all when none is picked) that folded in the last day. */
export function foldingInstances(caps: readonly ClassCap[], inView: readonly string[]): ClassCap[] {
  return caps.filter(
    (cap) => cap.folded_classes > 0 && (inView.length === 0 || inView.includes(cap.instance)),
  );
}

/** One sentence per instance: what was folded, and which cap stopped new classes. */
export function capSentence(cap: ClassCap): string {
  const full = cap.classes >= cap.max_classes;
  const limit = full
    ? `it holds ${formatCount(cap.classes)} query classes, its cap (QUANTA_MAX_CLASSES_PER_INSTANCE)`
    : `it added ${formatCount(cap.added_this_hour)} new classes this hour, ` +
      `the hourly cap is ${formatCount(cap.max_new_per_hour)} (QUANTA_MAX_NEW_CLASSES_PER_HOUR)`;
  return (
    `${cap.instance}: ${counted(cap.folded_classes, 'new statement shape')} ` +
    `(${counted(cap.folded_events, 'execution')}) in the last 24 hours are counted under ` +
    `“Other queries”, with exact counts and times but no examples or advice; ${limit}.`
  );
}

function counted(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
}
