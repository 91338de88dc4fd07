import type { Collected } from '../../api/client';
import type { Instance } from '../../api/types';

const GUIDE = 'See the README, "Enable EXPLAIN, profiles and suggestions".';

/**
 * What an instance lacks for a tab to ever fill (null: nothing): EXPLAIN, table snapshots and
 * suggestions need its DSN; profiles also need an execution target.
 */
export function missingPrerequisite(
  kind: Collected | 'tables',
  instance: Pick<Instance, 'name' | 'has_dsn' | 'has_execution_target'> | undefined,
): string | null {
  if (instance === undefined) {
    return `This instance is not registered: an admin adds it with a DSN under Settings → Instances. ${GUIDE}`;
  }
  if (!instance.has_dsn) {
    return (
      `Instance ${instance.name} has no DSN, so Quanta cannot read its server: an admin ` +
      `registers a monitoring account (SELECT on the application's schemas) under Settings → ` +
      `Instances. ${GUIDE}`
    );
  }
  if (kind === 'profile' && !instance.has_execution_target) {
    return (
      `Profiles execute the statement, so they run only on an execution target (a read-only ` +
      `replica or sandbox) and ${instance.name} has none: an admin sets one under Settings → ` +
      `Instances. ${GUIDE}`
    );
  }
  return null;
}
