import { renderToStaticMarkup } from 'react-dom/server';
import { MemoryRouter } from 'react-router';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/errors';
import type { TopQueries } from '../../api/types';
import { TopQueriesPanel } from './TopQueriesPanel';
import { queryRow } from './testRows';

// Server-side rendering is enough to check which state shows and what the rows say,
// without a DOM library.

const data: TopQueries = {
  from: '2026-11-21T00:00:00Z',
  to: '2026-11-22T00:00:00Z',
  seconds: 86400,
  sort: 'load',
  order: 'desc',
  group_by: 'query',
  totals: { count: 1234, query_time: 56.7, load: 0.00066, qps: 0.014, queries: 2 },
  rows: [
    queryRow({
      query_id: '3A1F0C9E2B7D4C11',
      fingerprint: 'select * from t where id=?',
      count: 100,
      query_time: 12.5,
      load: 0.00014,
      share: 0.22,
      qps: 0.0012,
      sparkline: [
        { ts: '2026-11-21T00:00:00Z', load: 0 },
        { ts: '2026-11-21T00:24:00Z', load: 0.0003 },
      ],
    }),
    queryRow({
      query_id: '0000000000000002',
      fingerprint: 'update t set a=? where b=?',
      count: 3,
      query_time: 0.003,
      load: 0.0000000347,
      share: 0.0001,
      qps: 0.00003,
    }),
  ],
};

function render(query: Parameters<typeof TopQueriesPanel>[0]['query']) {
  const html = renderToStaticMarkup(
    <MemoryRouter>
      <TopQueriesPanel query={query} offset={0} />
    </MemoryRouter>,
  );
  const count = (testId: string) => html.split(`data-testid="${testId}"`).length - 1;
  return { html, count, has: (testId: string) => count(testId) > 0 };
}

/** The text of each table row, tags stripped. */
function rowsOf(html: string): string[] {
  return html
    .split('<tr')
    .slice(1)
    .map((row) => row.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' '));
}

const refetch = vi.fn();

describe('TopQueriesPanel', () => {
  it('shows the loading state while pending', () => {
    const view = render({ status: 'pending', data: undefined, error: null, refetch });
    expect(view.has('queries-loading')).toBe(true);
    expect(view.has('top-queries-table')).toBe(false);
  });

  it("shows the API's detail on error", () => {
    const view = render({
      status: 'error',
      data: undefined,
      error: new ApiError(500, 'Metric store unavailable'),
      refetch,
    });
    expect(view.has('queries-error')).toBe(true);
    expect(view.html).toContain('Metric store unavailable');
    expect(view.html).toContain('role="alert"');
  });

  it('shows the empty state without rows', () => {
    const view = render({
      status: 'success',
      data: { ...data, rows: [], totals: { count: 0, query_time: 0, load: 0, qps: 0, queries: 0 } },
      error: null,
      refetch,
    });
    expect(view.has('queries-empty')).toBe(true);
    expect(view.html).toContain('No queries in this time range.');
    expect(view.html).toContain('quanta-agent import');
  });

  it('does not tell to run quanta-agent while an agent is connected', () => {
    const empty = {
      status: 'success' as const,
      data: { ...data, rows: [], totals: { count: 0, query_time: 0, load: 0, qps: 0, queries: 0 } },
      error: null,
      refetch,
    };
    const shown = (agents: Parameters<typeof TopQueriesPanel>[0]['agents']) =>
      renderToStaticMarkup(
        <MemoryRouter>
          <TopQueriesPanel query={empty} offset={0} {...(agents && { agents })} />
        </MemoryRouter>,
      ).replace(/<[^>]+>/g, '');
    const connected = shown({ connected: ['db1'], stopped: [], lastBatchSeconds: 12 });
    expect(connected).toContain('An agent is connected (db1; last batch 12 s ago)');
    expect(connected).not.toContain('run quanta-agent');
    expect(connected).not.toContain('quanta-agent import');
    const stopped = shown({ connected: [], stopped: ['db1 slowlog'], lastBatchSeconds: null });
    expect(stopped).toContain('The agent stopped reporting: db1 slowlog');
    // No agent at all: how to start one.
    expect(shown({ connected: [], stopped: [], lastBatchSeconds: null })).toContain(
      'quanta-agent import',
    );
  });

  it('renders a totals row, then one row per query in API order', () => {
    const view = render({ status: 'success', data, error: null, refetch });
    expect(view.has('top-queries-table')).toBe(true);
    expect(view.count('totals-row')).toBe(1);
    expect(view.count('query-row')).toBe(2);

    const [, totals, first, second] = rowsOf(view.html);
    expect(totals).toContain('All queries');
    expect(totals).toContain('2 query classes');
    expect(totals).toContain('660 µs/s'); // load 0.00066: query time per second
    expect(totals).toContain('1,234');
    expect(totals).toContain('0.014'); // QPS
    expect(totals).toContain('45.9 ms'); // 56.7 s / 1234 calls

    expect(first).toContain(' 1 ');
    expect(first).toContain('select * from t where id = ?');
    expect(first).toContain('3A1F0C9E2B7D4C11');
    expect(first).toContain('140 µs/s');
    expect(first).toContain('22%');
    expect(first).toContain('125 ms');

    expect(second).toContain('update t set a = ? where b = ?');
    expect(second).toContain('34.7 ns/s'); // a load of 3.47e-8: not '<0.000001'
    expect(second).toContain('1 ms');
  });

  it('links each query to its detail and marks the sorted column', () => {
    const html = renderToStaticMarkup(
      <MemoryRouter>
        <TopQueriesPanel
          query={{ status: 'success', data, error: null, refetch }}
          offset={0}
          sort="count"
          order="asc"
          onSort={() => {}}
        />
      </MemoryRouter>,
    );
    expect(html).toContain('href="/queries/3A1F0C9E2B7D4C11"');
    expect(html).toMatch(/aria-sort="ascending"[^>]*>\s*<button[^>]*data-testid="sort-count"/);
    expect(html.match(/aria-sort=/g)).toHaveLength(1);
  });

  it('says a filter hides everything rather than explaining ingest', () => {
    const html = renderToStaticMarkup(
      <MemoryRouter>
        <TopQueriesPanel
          query={{ status: 'success', data: { ...data, rows: [] }, error: null, refetch }}
          offset={0}
          filtered
        />
      </MemoryRouter>,
    );
    expect(html).toContain('No queries match.');
  });

  it('renders a grouped answer: one row per value, each a button to drill in', () => {
    const grouped: TopQueries = {
      ...data,
      group_by: 'schema',
      rows: [],
      groups: [
        {
          value: 'shop',
          count: 90,
          qps: 0.001,
          query_time: 50,
          load: 0.0006,
          share: 0.88,
          query_time_avg: 0.5,
          query_time_p95: 0.9,
          query_time_p99: 1,
          query_time_max: 1.2,
          rows_examined: 1000,
          rows_sent: 10,
          sparkline: [],
        },
      ],
    };
    const html = renderToStaticMarkup(
      <MemoryRouter>
        <TopQueriesPanel
          query={{ status: 'success', data: grouped, error: null, refetch }}
          offset={0}
        />
      </MemoryRouter>,
    );
    expect(html.split('data-testid="group-row"')).toHaveLength(2);
    expect(html).toContain('>Schema<');
    expect(html).toContain('data-testid="group-link"');
    expect(html).toContain('>shop</button>');
    expect(html).toContain('100'); // rows examined per row sent
  });

  it('keeps the full fingerprint in the hover title', () => {
    const view = render({ status: 'success', data, error: null, refetch });
    expect(view.html).toContain('title="select * from t where id=?"');
  });
});
