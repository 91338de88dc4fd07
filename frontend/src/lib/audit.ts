// Audit entries as sentences: who did what to what, instead of the route template the
// server records ("PATCH /api/v1/users/{user_id}").

export interface AuditEntryLike {
  readonly actor: string;
  readonly action: string;
  readonly target: Record<string, unknown>;
  readonly detail: Record<string, unknown>;
}

type Phrase = (entry: AuditEntryLike) => string;

const scalar = (value: unknown): string | null =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : null;

/** "“orders-db”" from the detail's name, else "#7" from the target's id. */
function named(entry: AuditEntryLike, idKey: string): string {
  const name = scalar(entry.detail.name) ?? scalar(entry.target.instance);
  if (name) return `“${name}”`;
  const id = scalar(entry.target[idKey]) ?? scalar(entry.detail[idKey]);
  return id ? `#${id}` : '';
}

function isChange(value: unknown): value is { old: unknown; new: unknown } {
  return typeof value === 'object' && value !== null && 'old' in value && 'new' in value;
}

/** "role viewer → admin, dsn changed": the fields an update changed, secrets unnamed. */
export function changesText(detail: Record<string, unknown>): string {
  const source =
    typeof detail.changed === 'object' && detail.changed !== null
      ? (detail.changed as Record<string, unknown>)
      : detail;
  const parts: string[] = [];
  for (const [field, value] of Object.entries(source)) {
    const label = field.replace(/_/g, ' ');
    if (isChange(value)) {
      parts.push(`${label} ${scalar(value.old) ?? '–'} → ${scalar(value.new) ?? '–'}`);
    } else if (value === 'changed') {
      parts.push(`${label} changed`);
    }
  }
  return parts.join(', ');
}

const withChanges = (text: string, entry: AuditEntryLike): string => {
  const changes = changesText(entry.detail);
  return changes ? `${text}: ${changes}` : text;
};

const list = (value: unknown): string =>
  Array.isArray(value) && value.length > 0 ? value.map(String).join(', ') : 'all';

const PHRASES: Record<string, Phrase> = {
  'POST /api/v1/tokens': (e) =>
    `created token ${named(e, 'token_id')} (scopes ${list(e.detail.scopes)}; instances ${list(e.detail.instances)})`,
  'DELETE /api/v1/tokens/{token_id}': (e) => `revoked token ${named(e, 'token_id')}`,
  'POST /api/v1/users': (e) =>
    `created user ${named(e, 'user_id')} as ${scalar(e.detail.role) ?? 'viewer'}`,
  'PATCH /api/v1/users/{user_id}': (e) => withChanges(`changed user ${named(e, 'user_id')}`, e),
  'POST /api/v1/users/{user_id}/password': (e) =>
    `reset the password of user ${named(e, 'user_id')}`,
  'DELETE /api/v1/users/{user_id}/sessions': (e) =>
    `signed user ${named(e, 'user_id')} out everywhere`,
  'DELETE /api/v1/users/{user_id}': (e) => `deleted user ${named(e, 'user_id')}`,
  'POST /api/v1/instances': (e) =>
    `added instance ${named(e, 'instance_id')}` +
    (scalar(e.detail.example_policy) ? ` (examples: ${scalar(e.detail.example_policy)})` : ''),
  'PATCH /api/v1/instances/{instance_id}': (e) =>
    withChanges(`changed instance ${named(e, 'instance_id')}`, e),
  'DELETE /api/v1/instances/{instance_id}': (e) =>
    `removed instance ${named(e, 'instance_id')}` +
    (e.detail.purge === true ? ' and deleted its data' : ''),
  'POST /api/v1/instances/{instance_id}/test-connection': (e) =>
    `tested the connection to instance ${named(e, 'instance_id')}`,
  'POST /api/v1/channels': (e) =>
    `added chat channel ${named(e, 'channel_id')}` +
    (scalar(e.detail.type) ? ` (${scalar(e.detail.type)})` : ''),
  'PATCH /api/v1/channels/{channel_id}': (e) =>
    withChanges(`changed chat channel ${named(e, 'channel_id')}`, e),
  'DELETE /api/v1/channels/{channel_id}': (e) => `deleted chat channel ${named(e, 'channel_id')}`,
  'POST /api/v1/channels/{channel_id}/test': (e) =>
    `sent a test message to chat channel ${named(e, 'channel_id')}`,
  'PATCH /api/v1/suggestions/{suggestion_id}': (e) =>
    withChanges(
      `changed suggestion #${scalar(e.target.suggestion_id) ?? '?'}` +
        (scalar(e.target.table) ? ` on ${scalar(e.target.table)}` : '') +
        (scalar(e.target.instance) ? ` (${scalar(e.target.instance)})` : ''),
      e,
    ),
  'DELETE /api/v1/queries/{query_id}': (e) =>
    `purged the data of query ${scalar(e.target.query_id) ?? '?'}`,
  // `quanta user ...` and `quanta token ...` on the server's host (actor "cli").
  'quanta user create': (e) =>
    `created user ${named(e, 'user_id')} as ${scalar(e.detail.role) ?? 'viewer'}`,
  'quanta user set-role': (e) => withChanges(`changed user ${named(e, 'user_id')}`, e),
  'quanta user disable': (e) => `disabled user ${named(e, 'user_id')}`,
  'quanta user enable': (e) => `enabled user ${named(e, 'user_id')}`,
  'quanta user reset-password': (e) => `reset the password of user ${named(e, 'user_id')}`,
  'quanta user logout': (e) => `signed user ${named(e, 'user_id')} out everywhere`,
  'quanta user delete': (e) => `deleted user ${named(e, 'user_id')}`,
  'quanta token create': (e) =>
    `created token ${named(e, 'token_id')} (scopes ${list(e.detail.scopes)}; instances ${list(e.detail.instances)})`,
  'quanta token revoke': (e) => `revoked token ${named(e, 'token_id')}`,
  'failed sign-in': (e) =>
    `failed to sign in` +
    (scalar(e.detail.client) ? ` from ${scalar(e.detail.client)}` : '') +
    (e.detail.known_user === false ? ' (no such user)' : ''),
};

const RUNS: Record<string, string> = {
  'run explain': 'explained',
  'run profile': 'profiled',
  'run suggestion': 'asked for index advice on',
};

const METHOD_VERBS: Record<string, string> = {
  POST: 'created',
  PUT: 'replaced',
  PATCH: 'changed',
  DELETE: 'deleted',
};

/** "the execution target 127.0.0.1:3311": the servers a run reached, by role. */
export function serversText(where: unknown): string {
  if (!Array.isArray(where)) return '';
  const servers = where
    .map((server: unknown) => {
      if (typeof server !== 'object' || server === null) return null;
      const { role, address } = server as Record<string, unknown>;
      return scalar(role) && scalar(address) ? `the ${scalar(role)} ${scalar(address)}` : null;
    })
    .filter((text): text is string => text !== null);
  return servers.join(' and ');
}

function runPhrase(entry: AuditEntryLike, verb: string): string {
  const query = scalar(entry.target.query_id);
  const table = scalar(entry.target.table);
  const instance = scalar(entry.target.instance);
  const servers = serversText(entry.detail.where);
  const outcome = scalar(entry.detail.outcome);
  const reason = scalar(entry.detail.reason) ?? scalar(entry.detail.error);
  // Where it ran, not only which instance it was about: a profile runs on the instance's
  // execution target, never on the monitored server itself.
  return (
    `${verb} ${query ? `query ${query}` : table ? `table ${table}` : 'query ?'}` +
    (instance ? ` of ${instance}` : '') +
    (servers ? ` on ${servers}` : '') +
    (outcome ? `: ${outcome}` : '') +
    (outcome && outcome !== 'ok' && reason ? ` (${reason})` : '')
  );
}

/** An unknown route: "changed /api/v1/things/{id} (id 3)", never worse than the raw one. */
function genericPhrase(entry: AuditEntryLike): string {
  const [method = '', path = ''] = entry.action.split(' ', 2);
  const verb = METHOD_VERBS[method];
  if (!verb || !path.startsWith('/')) return entry.action;
  const ids = Object.entries(entry.target)
    .map(([key, value]) => `${key.replace(/_/g, ' ')} ${scalar(value) ?? '?'}`)
    .join(', ');
  return `${verb} ${path.replace(/^\/api\/v1\//, '')}${ids ? ` (${ids})` : ''}`;
}

/** What happened, as a sentence: "admin changed user “ann”: role viewer → admin". */
export function auditSentence(entry: AuditEntryLike): string {
  const phrase = PHRASES[entry.action];
  const run = RUNS[entry.action];
  const text = phrase ? phrase(entry) : run ? runPhrase(entry, run) : genericPhrase(entry);
  return `${entry.actor} ${text}`;
}
