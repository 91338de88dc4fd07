import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { instancesOptions } from '../../api/instances';

/** Where an instance's workload index plan is. */
export function indexPlanHref(instanceId: number): string {
  return `/instances/${instanceId}/index-plan`;
}

/** Links on one line at most; the rest are in Settings → Instances. */
export const PLAN_LINKS_SHOWN = 8;

/**
 * A line linking to the workload index plans of these instances (by name; all registered
 * ones when none is given; unregistered ones have no plan): the fewest indexes for each
 * table's whole workload, next to one query's own suggestions.
 */
export function IndexPlanLink({ instances }: { instances?: readonly string[] }) {
  const registered = useQuery(instancesOptions());
  const found = (registered.data ?? []).filter(
    (item) => instances === undefined || instances.includes(item.name),
  );
  if (found.length === 0) return null;
  const shown = found.slice(0, PLAN_LINKS_SHOWN);
  return (
    <p className="muted index-plan-links" data-testid="index-plan-links">
      Workload index plan{found.length > 1 ? 's' : ''} (the fewest indexes for all the queries of
      each table):{' '}
      {shown.map((item, n) => (
        <span key={item.id}>
          {n > 0 && ' · '}
          <Link to={indexPlanHref(item.id)} data-testid="index-plan-link">
            {item.name}
          </Link>
        </span>
      ))}
      {found.length > shown.length && (
        <> and {found.length - shown.length} more (Settings → Instances)</>
      )}
    </p>
  );
}
