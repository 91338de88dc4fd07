// A table plan as the API returns it, for the index plan's tests.
import type { TablePlan } from '../api/types';

const served = (id: string, share: number, before: number | null, after: number | null) => ({
  query_id: id,
  fingerprint: `select * from orders where q${id} = ?`,
  load_share: share,
  calls: 1234,
  rows_examined_per_call: 6000,
  rows_before: before,
  rows_after: after,
  // A's rows examined were measured: the plan weighs them; its estimates are beside them.
  measured: id === 'A',
  estimated_before: id === 'A' ? 100000 : before,
  estimated_after: id === 'A' ? 33 : after,
  from_example: id !== 'C',
  sandbox:
    id === 'A'
      ? {
          improved: true,
          worse: false,
          summary: 'orders: ALL, 1,000 rows -> ref idx_orders_phone, 2 rows',
          rows_before: 1000,
          rows_after: 2,
          error: null,
        }
      : null,
});

export const ORDERS_PLAN: TablePlan = {
  id: 7,
  table: 'shop.orders',
  ddl: 'ALTER TABLE shop.orders ADD INDEX idx_orders_phone (phone)',
  signature: 'abc',
  load_share: 0.6,
  rows_before_per_s: 120000,
  rows_after_per_s: 40,
  write_entries_per_s: 2.5,
  adds: [
    {
      name: 'idx_orders_phone',
      definition: 'ADD INDEX idx_orders_phone (phone)',
      columns: [
        { name: 'phone', desc: false, rule: 'equality' },
        { name: 'created_at', desc: true, rule: 'order_by' },
      ],
      width_bytes: 28,
      entries_per_s: 2.5,
      served: [served('B', 0.2, 6000, 2), served('A', 0.4, 6000, 2)],
      validation: 'confirmed',
    },
  ],
  drops: [
    { name: 'idx_phone', reason: 'a left-most prefix of idx_orders_phone', replaced_by: null },
  ],
  rejected: [],
  unserved: [served('C', 0.05, null, null)],
  left_out: [
    {
      name: 'idx_orders_status',
      columns: ['status'],
      query_ids: ['D', 'E'],
      reason: 'it would save 0.02 rows examined/s more than the plan, less than the 1.09',
      in_chat: ['D'],
    },
  ],
  notes: [
    'solver: optimal',
    'Left out idx_orders_status (status), already suggested in chat for D: it would save 0.02 ' +
      'rows examined/s more than the plan, less than the 1.09.',
  ],
  validation: { sandbox: '127.0.0.1:3307', sample_rows: { 'shop.orders': 1000, 'shop.c': 200 } },
  computed_at: '2026-11-25T22:00:00Z',
  changed_at: '2026-11-25T22:00:00Z',
};
