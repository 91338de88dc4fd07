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
      'beat explained query A1B2 of db1: refused (not a SELECT)',
    ],
    // Where a run ran, by role: a profile on the execution target, not on db1 itself.
    [
      entry(
        'run profile',
        { instance_id: '1', instance: 'db1', query_id: 'A1B2', run_id: '7' },
        { where: [{ role: 'execution target', address: '127.0.0.1:3311' }], outcome: 'ok' },
        'ann',
      ),
      'ann profiled query A1B2 of db1 on the execution target 127.0.0.1:3311: ok',
    ],
    [
      entry(
        'run explain',
        { instance: 'db1', query_id: 'A1B2' },
        {
          where: [
            { role: 'monitored server', address: 'db1.lan:3306' },
            { role: 'execution target', address: 'replica.lan:3306' },
          ],
          outcome: 'ok',
        },
        'beat',
      ),
      'beat explained query A1B2 of db1 on the monitored server db1.lan:3306 and the ' +
        'execution target replica.lan:3306: ok',
    ],
    // The CLI's user and token commands name whom they changed.
    [
      entry('quanta user create', {}, { user_id: 3, name: 'ada', role: 'admin' }, 'cli'),
      'cli created user “ada” as admin',
    ],
    [
      entry(
        'quanta user set-role',
        { user_id: '3' },
        { user_id: 3, name: 'ada', role: { old: 'admin', new: 'viewer' } },
        'cli',
      ),
      'cli changed user “ada”: role admin → viewer',
    ],
    [
      entry('quanta user disable', { user_id: '3' }, { user_id: 3, name: 'ada' }, 'cli'),
      'cli disabled user “ada”',
    ],
    [
      entry(
        'quanta token create',
        { token_id: '9' },
        { name: 'agent-db1', scopes: ['ingest'], instances: ['db1'] },
        'cli',
      ),
      'cli created token “agent-db1” (scopes ingest; instances db1)',
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
