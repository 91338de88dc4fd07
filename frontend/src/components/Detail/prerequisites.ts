import type { Collected } from '../../api/client';
import type { Instance } from '../../api/types';

const GUIDE = 'See the README, "Enable EXPLAIN, profiles and suggestions".';

/** What an instance lacks for a tab to ever fill, and where an admin sets it. */
export interface Prerequisite {
  /** What is missing and why the tab needs it. */
  readonly reason: string;
  /** The page where it is set: the instance's form in Settings (null: nowhere yet). */
  readonly fixAt: string | null;
  /** That place as a user finds it: "Settings → Instances → db1 → Edit". */
  readonly fixLabel: string;
  readonly guide: string;
}

/** The Settings page with an instance's edit form open (Settings reads `edit`). */
export function editInstanceHref(name: string): string {
  return `/settings?${new URLSearchParams({ edit: name }).toString()}#instances`;
}

/**
 * What an instance lacks for a tab to ever fill (null: nothing): EXPLAIN, table snapshots and
 * suggestions need its DSN; profiles also need an execution target.
 */
export function missingPrerequisite(
  kind: Collected | 'tables',
  instance: Pick<Instance, 'name' | 'has_dsn' | 'has_execution_target'> | undefined,
): Prerequisite | null {
  if (instance === undefined) {
    return {
      reason: 'This instance is not registered: an admin adds it with a DSN.',
      fixAt: '/settings#instances',
      fixLabel: 'Settings → Instances → Add instance',
      guide: GUIDE,
    };
  }
  const edit = {
    fixAt: editInstanceHref(instance.name),
    fixLabel: `Settings → Instances → ${instance.name} → Edit`,
    guide: GUIDE,
  };
  if (!instance.has_dsn) {
    return {
      reason:
        `Instance ${instance.name} has no DSN, so Quanta cannot read its server: an admin ` +
        `registers a monitoring account (SELECT on the application's schemas).`,
      ...edit,
    };
  }
  if (kind === 'profile' && !instance.has_execution_target) {
    return {
      reason:
        `Profiles execute the statement, so they run only on an execution target (a ` +
        `read-only replica or sandbox), never on the monitored server, and ${instance.name} ` +
        `has none: an admin sets its Execution target DSN.`,
      ...edit,
    };
  }
  return null;
}
