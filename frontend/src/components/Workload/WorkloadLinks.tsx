import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { instancesOptions } from '../../api/instances';
import type { RangeState } from '../../lib/viewState';
import { serializeWorkload } from '../../lib/workload';

/**
 * From the overview to one instance's workload by table, by user and its index review: the
 * instance picked (or the only one there is), with the overview's range.
 */
export function WorkloadLinks({
  instances,
  range,
}: {
  instances: readonly string[];
  range: RangeState;
}) {
  const known = useQuery(instancesOptions());
  const list = known.data ?? [];
  const name =
    instances.length === 1 ? instances[0] : list.length === 1 ? list[0]?.name : undefined;
  const instance = list.find((candidate) => candidate.name === name);
  if (!known.data || list.length === 0) return null;
  if (!instance) {
    return (
      <p className="workload-links muted" data-testid="workload-links">
        Pick one instance to see its tables, users and index review.
      </p>
    );
  }
  const search = serializeWorkload({ range, sort: '', order: 'desc' }, '');
  const to = (page: string) => `/instances/${instance.id}/${page}${search ? `?${search}` : ''}`;
  return (
    <p className="workload-links" data-testid="workload-links">
      <span className="muted">{instance.name}:</span>
      <Link to={to('tables')} data-testid="workload-link-tables">
        Tables
      </Link>
      <Link to={to('users')} data-testid="workload-link-users">
        Users
      </Link>
      <Link to={to('index-review')} data-testid="workload-link-index-review">
        Index review
      </Link>
    </p>
  );
}
