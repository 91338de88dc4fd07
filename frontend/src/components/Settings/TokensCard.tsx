import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { tokensOptions, useCreateToken, useRevokeToken } from '../../api/tokens';
import type { TokenCreated, TokenInfo } from '../../api/types';
import { formatInstant } from '../../lib/format';
import { ListCard, MutationError, splitList } from './ListCard';

const SCOPES = ['read', 'annotate', 'ingest', 'diagnose', 'admin'] as const;

/** The new token's secret: the API shows it once, so it is shown once here too. */
function Secret({ created, onClose }: { created: TokenCreated; onClose: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="secret" data-testid="token-secret" role="status">
      <span>
        Token <strong>{created.name}</strong>:{' '}
        <code data-testid="token-value">{created.token}</code>. Copy it now: it is not shown again.
      </span>
      <button
        type="button"
        className="button button-small"
        onClick={() =>
          void navigator.clipboard
            ?.writeText(created.token)
            .then(() => setCopied(true))
            .catch(() => setCopied(false))
        }
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
      <button type="button" className="button button-small" onClick={onClose}>
        Done
      </button>
    </div>
  );
}

function TokenForm({ onCreated }: { onCreated: (created: TokenCreated) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['read']);
  const [instances, setInstances] = useState('');
  const create = useCreateToken((created) => {
    setName('');
    setInstances('');
    onCreated(created);
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate({
      name: name.trim(),
      scopes,
      instances: scopes.includes('ingest') ? splitList(instances) : null,
    });
  }

  return (
    <form className="settings-form" aria-label="Create a token" onSubmit={submit}>
      <label>
        Name
        <input required value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      {SCOPES.map((scope) => (
        <label className="check" key={scope}>
          <input
            type="checkbox"
            checked={scopes.includes(scope)}
            onChange={(event) =>
              setScopes(
                event.target.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope),
              )
            }
          />
          {scope}
        </label>
      ))}
      {scopes.includes('ingest') && (
        <label>
          Instances it may feed
          <input value={instances} onChange={(event) => setInstances(event.target.value)} />
        </label>
      )}
      <MutationError error={create.error} testId="token-form-error" />
      <div className="form-actions">
        <button
          type="submit"
          className="button button-primary"
          disabled={create.isPending || scopes.length === 0}
        >
          Create token
        </button>
      </div>
    </form>
  );
}

function TokenRow({ token }: { token: TokenInfo }) {
  const revoke = useRevokeToken(token.id);
  return (
    <tr data-testid="token-row">
      <th scope="row">{token.name}</th>
      <td>{token.scopes.join(', ')}</td>
      <td>{token.instances?.join(', ') || <span className="muted">all</span>}</td>
      <td className="nowrap">{formatInstant(token.created_at)}</td>
      <td className="nowrap">
        {token.last_used_at ? (
          formatInstant(token.last_used_at)
        ) : (
          <span className="muted">never</span>
        )}
      </td>
      <td className="nowrap" data-testid="token-revoked">
        {token.revoked_at ? formatInstant(token.revoked_at) : 'no'}
      </td>
      <td>
        {!token.revoked_at && (
          <button
            type="button"
            className="button button-small button-danger"
            disabled={revoke.isPending}
            onClick={() => {
              if (window.confirm(`Revoke token ${token.name}?`)) revoke.mutate();
            }}
          >
            Revoke
          </button>
        )}
        <MutationError error={revoke.error} />
      </td>
    </tr>
  );
}

/** API tokens (admin only): list, create (secret shown once), revoke. */
export function TokensCard() {
  const tokens = useQuery(tokensOptions());
  const [created, setCreated] = useState<TokenCreated | null>(null);
  return (
    <ListCard
      title="API tokens"
      query={tokens}
      testId="tokens"
      empty="No API tokens."
      actions={
        <>
          <TokenForm onCreated={setCreated} />
          {created && <Secret created={created} onClose={() => setCreated(null)} />}
        </>
      }
    >
      {(items) => (
        <table className="data-table" data-testid="tokens-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scopes</th>
              <th scope="col">Instances</th>
              <th scope="col">Created (UTC)</th>
              <th scope="col">Last used (UTC)</th>
              <th scope="col">Revoked</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((token) => (
              <TokenRow key={token.id} token={token} />
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
