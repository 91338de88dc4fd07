import { renderToStaticMarkup } from 'react-dom/server';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors';
import type { IndexPlanList } from '../api/types';
import { ORDERS_PLAN } from '../lib/indexPlan.fixture';
import { IndexPlanBody } from './IndexPlan';

// Server-side rendering is enough to check which state shows and what it says.

function render(props: Parameters<typeof IndexPlanBody>[0]): string {
  return renderToStaticMarkup(
    <MemoryRouter>
      <IndexPlanBody {...props} />
    </MemoryRouter>,
  );
}

const LIST: IndexPlanList = {
  instance_id: 1,
  instance: 'db1',
  window_start: '2026-11-24T22:00:00Z',
  window_end: '2026-11-25T22:00:00Z',
  computed_at: '2026-11-25T22:00:00Z',
  plans: [ORDERS_PLAN],
};
const noop = () => undefined;

describe('IndexPlanBody', () => {
  it('shows loading, not found, error and never-computed states', () => {
    expect(render({ status: 'pending', data: undefined, error: null, onRetry: noop })).toContain(
      'Loading the index plan',
    );
    const missing = new ApiError(404, 'No instance with id 9.');
    expect(render({ status: 'error', data: undefined, error: missing, onRetry: noop })).toContain(
      'plan-empty',
    );
    const down = new ApiError(500, 'boom');
    expect(render({ status: 'error', data: undefined, error: down, onRetry: noop })).toContain(
      'plan-error',
    );
    const never = { ...LIST, computed_at: null, plans: [] };
    expect(render({ status: 'success', data: never, error: null, onRetry: noop })).toContain(
      'No plan computed yet.',
    );
    const nothing = { ...LIST, plans: [{ ...ORDERS_PLAN, ddl: '', adds: [], drops: [] }] };
    const none = render({ status: 'success', data: nothing, error: null, onRetry: noop });
    expect(none).toContain('plan-none');
    // Why: the table's notes are still there, folded under one line.
    expect(none).toContain('No change: the existing indexes serve these queries.');
    expect(none).toContain('solver: optimal');
  });

  it('folds the tables with nothing to change into one line, closed', () => {
    const unchanged = Array.from({ length: 30 }, (_, n) => ({
      ...ORDERS_PLAN,
      id: 100 + n,
      table: `shop.t${n}`,
      ddl: '',
      adds: [],
      drops: [],
    }));
    const data = { ...LIST, plans: [ORDERS_PLAN, ...unchanged] };
    const html = render({ status: 'success', data, error: null, onRetry: noop });
    // The table to change in full, outside the fold; the 30 others behind one closed line.
    const [shown, folded = ''] = html.split('data-testid="plan-unchanged"');
    expect(shown?.match(/data-testid="plan-table"/g)).toHaveLength(1);
    expect(shown?.replace(/<[^>]+>/g, '')).toContain('ALTER TABLE shop.orders');
    expect(html.match(/data-testid="plan-unchanged"/g)).toHaveLength(1);
    expect(folded).toMatch(/^[^>]*>/); // <details ...> without the open attribute
    expect(folded.slice(0, folded.indexOf('>'))).not.toContain('open');
    expect(folded).toContain(
      'No change for 30 tables: shop.t0, shop.t1, shop.t2, shop.t3, shop.t4, shop.t5 and 24 more',
    );
  });

  it('shows each table’s ALTER TABLE, its indexes and links to the served queries', () => {
    const html = render({ status: 'success', data: LIST, error: null, onRetry: noop });
    expect(html).toContain('1 of 1 tables to change: 1 new index (1 confirmed on the sandbox), 1');
    expect(html).toContain('idx_orders_phone');
    const text = html.replace(/<[^>]+>/g, '');
    expect(text).toContain('ALTER TABLE shop.orders ADD INDEX idx_orders_phone (phone);');
    expect(html).toContain('href="/queries/A?');
    expect(html).toContain('instance=db1');
    expect(html).toContain('tab=suggestions');
    expect(html).toContain('orders: ALL, 1,000 rows -&gt; ref idx_orders_phone, 2 rows');
    expect(html).toContain('Confirmed: a served query’s plan uses it and got better');
    expect(html.match(/data-testid="plan-served"/g)).toHaveLength(3); // 2 served, 1 unserved
  });

  it('says which rows are measured and links the suggestions it left out', () => {
    const html = render({ status: 'success', data: LIST, error: null, onRetry: noop });
    const text = html.replace(/<[^>]+>/g, '');
    expect(text).toContain('6,000 → 2 (&gt;99% fewer) measured; estimated 100,000 → 33');
    expect(text).toContain('6,000 → 2 (&gt;99% fewer) estimated');
    expect(html).toContain('data-testid="plan-left-out"');
    expect(text).toContain(
      'idx_orders_status (status), suggested for D (already suggested in chat), E: it would ' +
        'save 0.02 rows examined/s',
    );
    expect(html).toContain('href="/queries/D?');
    // The left-out note is the list's, not repeated among the notes.
    expect(text).not.toContain('Left out idx_orders_status');
  });
});
