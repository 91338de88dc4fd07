import { describe, expect, it } from 'vitest';
import { auditSentence, changesText, type AuditEntryLike } from './audit';

const entry = (
  action: string,
  target: Record<string, unknown> = {},
  detail: Record<string, unknown> = {},
  actor = 'admin',
): AuditEntryLike => ({ actor, action, target, detail });

describe('auditSentence', () => {
  it.each([
    [
      entry(
        'PATCH /api/v1/users/{user_id}',
        { user_id: '4' },
        {
          user_id: 4,
          name: 'ann',
          role: { old: 'viewer', new: 'admin' },
        },
      ),
      'admin changed user “ann”: role viewer → admin',
    ],
    [
      entry(
        'POST /api/v1/instances',
        {},
        {
          instance_id: 2,
          name: 'orders-db',
          example_policy: 'full',
          dsn: 'set',
        },
      ),
      'admin added instance “orders-db” (examples: full)',
    ],
    [
      entry(
        'PATCH /api/v1/instances/{instance_id}',
        { instance_id: '2' },
        {
          name: 'orders-db',
          changed: { example_policy: { old: 'masked', new: 'full' }, dsn: 'changed' },
        },
      ),
      'admin changed instance “orders-db”: example policy masked → full, dsn changed',
    ],
    [
      entry(
        'DELETE /api/v1/instances/{instance_id}',
        { instance_id: '2' },
        { name: 'old', purge: true },
      ),
      'admin removed instance “old” and deleted its data',
    ],
    [
      entry(
        'POST /api/v1/tokens',
        {},
        { token_id: 9, name: 'ci', scopes: ['annotate'], instances: [] },
      ),
      'admin created token “ci” (scopes annotate; instances all)',
    ],
    [entry('DELETE /api/v1/tokens/{token_id}', { token_id: '9' }), 'admin revoked token #9'],
    [
      entry(
        'PATCH /api/v1/suggestions/{suggestion_id}',
        { suggestion_id: '7', query_id: 'A1B2', instance: 'db1', table: 'shop.orders' },
        { status: { old: 'new', new: 'dismissed' } },
        'olga',
      ),
      'olga changed suggestion #7 on shop.orders (db1): status new → dismissed',
    ],
    [
      entry('POST /api/v1/channels/{channel_id}/test', { channel_id: '3' }),
      'admin sent a test message to chat channel #3',
    ],
    [
      entry(
        'run explain',
        { instance_id: '1', instance: 'db1', query_id: 'A1B2' },
        {
          where: [],
          outcome: 'refused',
          reason: 'not a SELECT',
        },
        'beat',
      ),
      'beat ran EXPLAIN on query A1B2 on db1: refused (not a SELECT)',
    ],
    [
      entry('failed sign-in', { user: 'bob' }, { client: '10.0.0.7', known_user: false }, 'bob'),
      'bob failed to sign in from 10.0.0.7 (no such user)',
    ],
    // A route this list does not know yet still reads as a sentence.
    [
      entry('POST /api/v1/widgets/{widget_id}/spin', { widget_id: '5' }),
      'admin created widgets/{widget_id}/spin (widget id 5)',
    ],
  ])('%#: %s', (input, sentence) => expect(auditSentence(input)).toBe(sentence));
});

describe('changesText', () => {
  it('lists only the fields that changed, and never a secret value', () => {
    expect(changesText({ user_id: 4, name: 'ann', disabled: { old: false, new: true } })).toBe(
      'disabled false → true',
    );
    expect(changesText({ changed: { url: 'changed' } })).toBe('url changed');
  });
});
