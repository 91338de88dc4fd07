import { Link } from 'react-router';
import { formatTimeRange } from '../../lib/format';
import {
  DEFAULT_OVERVIEW,
  type RangeState,
  rangeLabel,
  serializeOverview,
} from '../../lib/viewState';
import { serializeWorkload } from '../../lib/workload';
import { RangePicker } from '../Controls/RangePicker';

export type WorkloadPage = 'tables' | 'users' | 'index-review';

const PAGES: { page: WorkloadPage; label: string }[] = [
  { page: 'tables', label: 'Tables' },
  { page: 'users', label: 'Users' },
  { page: 'index-review', label: 'Index review' },
];

/** A workload page's title, its instance's other workload pages, and the time range. */
export function WorkloadHeader({
  instanceId,
  instance,
  page,
  title,
  range,
  onRange,
  resolved,
  subtitle,
}: {
  instanceId: number;
  instance: string | undefined;
  page: WorkloadPage | null;
  title: string;
  range: RangeState;
  /** Absent: the page does not depend on the range (it only travels to the others). */
  onRange?: (range: RangeState) => void;
  resolved?: { from: string; to: string } | undefined;
  /** What the page covers instead of a range, when it has none. */
  subtitle?: string;
}) {
  // The range travels between the pages; each page's own sort does not.
  const keep = serializeWorkload({ range, sort: '', order: 'desc' }, '');
  return (
    <>
      <nav className="workload-nav" aria-label="Workload of this instance">
        {instance && (
          <Link
            to={`/?${serializeOverview({ ...DEFAULT_OVERVIEW, range, instances: [instance] })}`}
            data-testid="workload-nav-queries"
          >
            Top queries
          </Link>
        )}
        {PAGES.map(({ page: target, label }) =>
          target === page ? (
            <span key={target} aria-current="page" className="active">
              {label}
            </span>
          ) : (
            <Link
              key={target}
              to={`/instances/${instanceId}/${target}${keep ? `?${keep}` : ''}`}
              data-testid={`workload-nav-${target}`}
            >
              {label}
            </Link>
          ),
        )}
      </nav>
      <div className="page-header">
        <div>
          <h1 id="workload-title">
            {title}
            {instance ? ` · ${instance}` : ''}
          </h1>
          <p className="range" data-testid="time-range">
            {onRange ? rangeLabel(range) : subtitle}
            {onRange && resolved && ` · ${formatTimeRange(resolved.from, resolved.to)}`}
          </p>
        </div>
        {onRange && (
          <div className="toolbar">
            <RangePicker range={range} onChange={onRange} {...(resolved && { resolved })} />
          </div>
        )}
      </div>
    </>
  );
}
