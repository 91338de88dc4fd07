import type { UseQueryResult } from '@tanstack/react-query';
import { errorMessage } from '../../api/errors';
import type { FilterValue, Filters } from '../../api/types';
import { formatShare, shareBarPercent } from '../../lib/format';
import type { FilterDimension } from '../../lib/viewState';

const GROUPS: { key: FilterDimension | 'instance'; title: string }[] = [
  { key: 'instance', title: 'Instance' },
  { key: 'schema', title: 'Schema' },
  { key: 'user', title: 'User' },
  { key: 'host', title: 'Client host' },
];

/** Most values shown per dimension before "n more". */
const MAX_VALUES = 8;

export interface FilterSelection {
  instances: readonly string[];
  schema?: string;
  user?: string;
  host?: string;
  /** `key:value` pairs. */
  tags?: readonly string[];
  labels?: readonly string[];
}

/** A panel section: a dimension, or one tag or label key (`tag:team`, `label:cluster`). */
export type FilterKey = FilterDimension | 'instance' | `${'tag' | 'label'}:${string}`;

/**
 * Each schema, user, client host and instance, and each value of every tag and instance
 * label key, with its share of the load; clicking one filters on it, clicking it again
 * clears the filter.
 */
export function FilterPanel({
  query,
  selection,
  onToggle,
}: {
  query: Pick<UseQueryResult<Filters>, 'status' | 'data' | 'error'>;
  selection: FilterSelection;
  onToggle: (dimension: FilterKey, value: string) => void;
}) {
  const data = query.data;
  const sections: { key: FilterKey; title: string; values: FilterValue[] }[] = data
    ? [
        ...GROUPS.map(({ key, title }) => ({ key, title, values: data[key] })),
        ...Object.entries(data.tags ?? {}).map(([key, values]) => ({
          key: `tag:${key}` as const,
          title: `Tag ${key}`,
          values,
        })),
        ...Object.entries(data.labels ?? {}).map(([key, values]) => ({
          key: `label:${key}` as const,
          title: `Label ${key}`,
          values,
        })),
      ]
    : [];
  const selected = (key: FilterKey, value: string): boolean => {
    if (key === 'instance') return selection.instances.includes(value);
    if (key.startsWith('tag:')) return (selection.tags ?? []).includes(`${key.slice(4)}:${value}`);
    if (key.startsWith('label:'))
      return (selection.labels ?? []).includes(`${key.slice(6)}:${value}`);
    return selection[key as FilterDimension] === value;
  };
  return (
    <aside className="filter-panel" aria-label="Filters" data-testid="filter-panel">
      <h2>Filters</h2>
      {query.status === 'pending' && <p className="muted">Loading…</p>}
      {query.status === 'error' && (
        <p className="form-error" role="alert">
          {errorMessage(query.error)}
        </p>
      )}
      {sections.map(({ key, title, values }) => {
        const shown = values.slice(0, MAX_VALUES);
        for (const value of values.slice(MAX_VALUES))
          if (selected(key, value.value)) shown.push(value);
        return (
          <section key={key} className="filter-group">
            <h3>{title}</h3>
            {values.length === 0 && <p className="muted">None in this range</p>}
            <ul>
              {shown.map((value) => {
                const active = selected(key, value.value);
                return (
                  <li key={value.value}>
                    <button
                      type="button"
                      className={active ? 'filter-value filter-active' : 'filter-value'}
                      aria-pressed={active}
                      onClick={() => onToggle(key, value.value)}
                      title={`${value.value}: ${formatShare(value.share)} of the load, ${value.count} calls`}
                      data-testid={`filter-${key.split(':')[0]!}`}
                    >
                      <span className="filter-name">{value.value || '(empty)'}</span>
                      <span className="filter-share">{formatShare(value.share)}</span>
                      <span className="filter-bar" aria-hidden="true">
                        <span style={{ width: `${shareBarPercent(value.share)}%` }} />
                      </span>
                    </button>
                  </li>
                );
              })}
            </ul>
            {values.length > shown.length && (
              <p className="muted">{values.length - shown.length} more (search to narrow)</p>
            )}
          </section>
        );
      })}
    </aside>
  );
}
