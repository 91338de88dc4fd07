import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import {
  instancesOptions,
  useDeleteInstance,
  useSaveInstance,
  useTestInstanceConnection,
} from '../../api/instances';
import type { ConnectionTest, Instance, InstanceCreate } from '../../api/types';
import { formatInstant } from '../../lib/format';
import { formatLabels, parseLabels } from '../../lib/labels';
import { indexPlanHref } from '../IndexPlan/IndexPlanLink';
import { ListCard, MutationError, RowActions } from './ListCard';

type Policy = InstanceCreate['example_policy'];
const POLICIES = ['full', 'masked', 'off'] as const;
/**
 * The server's default (InstanceCreate.example_policy), the agent's (`examples: full`) and
 * that of instances an agent or an ingest creates: one default wherever an instance is
 * made. Full examples are what EXPLAIN, profiles and index advice run on.
 */
const DEFAULT_POLICY: Policy = 'full';
/** Which agent source counts in totals: chosen automatically unless an admin pins one. */
const SOURCES = [
  { value: 'auto', label: 'automatic (the slow log once it reports)' },
  { value: 'slowlog', label: 'slow log (per-call latency, users, hosts, prepared statements)' },
  { value: 'perfschema', label: 'performance_schema (when the slow log is sampled or filtered)' },
] as const;
type Source = (typeof SOURCES)[number]['value'];

/** The source shown in the list: what counts now, and whether an admin chose it. */
function sourceLabel(instance: Instance): string {
  if (!instance.primary_source) return 'auto (no query batch yet)';
  return `${instance.primary_source} (${instance.primary_source_pinned ? 'chosen' : 'auto'})`;
}

/** Add or edit: a DSN left blank when editing keeps the stored one. */
function InstanceForm({ instance, onDone }: { instance?: Instance; onDone: () => void }) {
  const [name, setName] = useState(instance?.name ?? '');
  const [dsn, setDsn] = useState('');
  const [sandboxDsn, setSandboxDsn] = useState('');
  const [targetDsn, setTargetDsn] = useState('');
  const [removeTarget, setRemoveTarget] = useState(false);
  const [broad, setBroad] = useState(instance?.allow_broad_privileges ?? false);
  const [policy, setPolicy] = useState<Policy>(instance?.example_policy ?? DEFAULT_POLICY);
  const pinned: Source =
    instance?.primary_source_pinned && instance.primary_source
      ? (instance.primary_source as Source)
      : 'auto';
  const [source, setSource] = useState<Source>(pinned);
  const [labelText, setLabelText] = useState(formatLabels(instance?.labels));
  const labels = parseLabels(labelText);
  const save = useSaveInstance(onDone);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if ('error' in labels) return;
    const common = {
      name: name.trim(),
      allow_broad_privileges: broad,
      example_policy: policy,
      ...(dsn.trim() ? { dsn: dsn.trim() } : {}),
      ...(sandboxDsn.trim() ? { sandbox_dsn: sandboxDsn.trim() } : {}),
      ...(targetDsn.trim() ? { execution_target_dsn: targetDsn.trim() } : {}),
      ...(removeTarget ? { execution_target_dsn: null } : {}),
    };
    if (!instance) {
      save.mutate({ body: common });
      return;
    }
    const choice = source === 'auto' ? null : source;
    save.mutate({
      id: instance.id,
      body: {
        ...common,
        ...(source !== pinned ? { primary_source: choice } : {}),
        ...(labelText !== formatLabels(instance.labels) ? { labels } : {}),
      },
    });
  }

  return (
    <form
      className="settings-form"
      aria-label={instance ? `Edit ${instance.name}` : 'Add an instance'}
      onSubmit={submit}
    >
      <label>
        Name
        <input required value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <label>
        DSN{instance?.dsn ? ' (blank keeps it)' : ''}
        <input
          type="password"
          autoComplete="off"
          placeholder="mysql://quanta_ro:PASSWORD@db1:3306/shop"
          value={dsn}
          onChange={(event) => setDsn(event.target.value)}
        />
      </label>
      <label>
        Sandbox DSN (optional)
        <input
          type="password"
          autoComplete="off"
          value={sandboxDsn}
          onChange={(event) => setSandboxDsn(event.target.value)}
        />
      </label>
      <label>
        Execution target DSN{instance?.execution_target_dsn ? ' (blank keeps it)' : ''}
        <input
          type="password"
          autoComplete="off"
          placeholder="mysql://quanta_exec:PASSWORD@replica:3306/ (read-only)"
          value={targetDsn}
          onChange={(event) => setTargetDsn(event.target.value)}
          data-testid="target-dsn"
        />
      </label>
      {instance?.has_execution_target && (
        <label className="check">
          <input
            type="checkbox"
            checked={removeTarget}
            onChange={(event) => setRemoveTarget(event.target.checked)}
          />
          Remove the execution target (no ANALYZE, no profiles)
        </label>
      )}
      <label>
        Examples
        <select value={policy} onChange={(event) => setPolicy(event.target.value as Policy)}>
          {POLICIES.map((item) => (
            <option key={item} value={item}>
              {item}
            </option>
          ))}
        </select>
      </label>
      {instance && (
        <label>
          Labels (filter, group and route chat; an agent&apos;s config sets them too)
          <input
            placeholder="environment=prod, cluster=eu-1"
            value={labelText}
            onChange={(event) => setLabelText(event.target.value)}
            aria-invalid={'error' in labels}
            data-testid="instance-labels"
          />
          {'error' in labels && <span className="form-error">{labels.error}</span>}
        </label>
      )}
      {instance && (
        <label>
          Source counted in totals
          <select
            value={source}
            onChange={(event) => setSource(event.target.value as Source)}
            data-testid="primary-source"
          >
            {SOURCES.map((item) => (
              <option key={item.value} value={item.value}>
                {item.label}
              </option>
            ))}
          </select>
        </label>
      )}
      <p className="muted">
        ANALYZE and profiles execute examples: only on the execution target, a replica or sandbox
        Quanta verifies read-only at every connect. EXPLAIN never executes.
      </p>
      <label className="check">
        <input
          type="checkbox"
          checked={broad}
          onChange={(event) => setBroad(event.target.checked)}
          data-testid="allow-broad"
        />
        Allow diagnostics with an account that has more than SELECT, PROCESS, SHOW VIEW and
        REPLICATION CLIENT (audited)
      </label>
      <MutationError error={save.error} testId="instance-form-error" />
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={save.isPending}>
          {instance ? 'Save' : 'Add instance'}
        </button>
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function ConnectionReport({ report }: { report: ConnectionTest }) {
  return (
    <div className="result-panel" data-testid="connection-report">
      <p>
        {report.connected ? (
          <strong className="ok">Connected</strong>
        ) : (
          <strong className="not-ok">Not connected</strong>
        )}
        {report.account && ` as ${report.account}`}
        {report.flavor && ` to ${report.flavor} ${report.version ?? ''}`}
      </p>
      {report.error && <p className="not-ok">{report.error}</p>}
      {report.connected && (
        <Privileges privileges={report.privileges ?? []} excess={report.excess_privileges ?? []} />
      )}
      <Capabilities capabilities={report.capabilities ?? []} testId="capability" />
      <TargetReport target={report.execution_target ?? null} />
    </div>
  );
}

function Privileges({ privileges, excess }: { privileges: string[]; excess: string[] }) {
  return (
    <div data-testid="privileges">
      <p>Privileges: {privileges.length > 0 ? privileges.join(', ') : 'none'}</p>
      {excess.length > 0 ? (
        <p className="not-ok" data-testid="excess-privileges">
          More than Quanta needs: {excess.join(', ')}. Diagnostics refuse this account unless broad
          privileges are allowed on the instance.
        </p>
      ) : (
        <p className="ok">Least privilege: nothing beyond what Quanta needs.</p>
      )}
    </div>
  );
}

function TargetReport({ target }: { target: ConnectionTest['execution_target'] | null }) {
  if (!target) {
    return (
      <p className="muted" data-testid="execution-target">
        No execution target: EXPLAIN only (no ANALYZE, no profiles). Profiles execute the statement,
        so they run only on a read-only replica or sandbox: set its DSN with Edit → Execution target
        DSN.
      </p>
    );
  }
  return (
    <div data-testid="execution-target">
      <p>
        Execution target {target.address}:{' '}
        <strong className={target.read_only ? 'ok' : 'not-ok'}>
          {target.read_only ? 'read-only' : 'refused'}
        </strong>{' '}
        — {target.detail}
      </p>
      {target.excess_privileges && target.excess_privileges.length > 0 && (
        <p className="not-ok">
          More than Quanta needs there: {target.excess_privileges.join(', ')}
        </p>
      )}
      <Capabilities capabilities={target.capabilities ?? []} testId="target-capability" />
    </div>
  );
}

/** Each thing checked, ✓ or ✗, with what it means. */
function Capabilities({
  capabilities,
  testId,
}: {
  capabilities: NonNullable<ConnectionTest['capabilities']>;
  testId: string;
}) {
  if (capabilities.length === 0) return null;
  return (
    <ul>
      {capabilities.map((capability) => (
        <li key={capability.name} data-testid={testId}>
          <span className={capability.ok ? 'ok' : 'not-ok'}>
            {capability.ok ? '✓' : '✗'} {capability.name}
          </span>
          {capability.detail && <span className="muted"> — {capability.detail}</span>}
        </li>
      ))}
    </ul>
  );
}

function InstanceRow({
  instance,
  admin,
  openEdit = false,
}: {
  instance: Instance;
  admin: boolean;
  /** Open its edit form at once and bring it into view (a link asked for it). */
  openEdit?: boolean;
}) {
  const [editing, setEditing] = useState(openEdit);
  const test = useTestInstanceConnection(instance.id);
  const remove = useDeleteInstance(instance.id);
  const row = useRef<HTMLTableRowElement>(null);
  useEffect(() => {
    if (openEdit) row.current?.scrollIntoView({ block: 'start' });
  }, [openEdit]);
  return (
    <>
      <tr data-testid="instance-row" ref={row}>
        <th scope="row">
          {instance.name}{' '}
          <Link
            to={indexPlanHref(instance.id)}
            className="nowrap"
            data-testid="instance-index-plan"
          >
            Index plan
          </Link>
          {Object.keys(instance.labels ?? {}).length > 0 && (
            <div className="muted" data-testid="instance-labels-shown">
              {formatLabels(instance.labels)}
            </div>
          )}
        </th>
        <td>
          {[instance.flavor, instance.version].filter(Boolean).join(' ') || (
            <span className="muted">unknown</span>
          )}
        </td>
        <td>{instance.dsn ? <code>{instance.dsn}</code> : <span className="muted">none</span>}</td>
        <td>
          {instance.sandbox_dsn ? (
            <code>{instance.sandbox_dsn}</code>
          ) : (
            <span className="muted">none</span>
          )}
        </td>
        <td data-testid="instance-source">{sourceLabel(instance)}</td>
        <td>{instance.example_policy}</td>
        <td data-testid="instance-target">
          {instance.execution_target_dsn ? (
            <code>{instance.execution_target_dsn}</code>
          ) : (
            <span className="muted">none (EXPLAIN only)</span>
          )}
          {instance.allow_broad_privileges && (
            <span className="not-ok"> · broad privileges allowed</span>
          )}
        </td>
        <td className="nowrap">{formatInstant(instance.created_at)}</td>
        {admin && (
          <td>
            <RowActions
              test={test}
              testLabel="Test connection"
              testPendingLabel="Testing…"
              onEdit={() => setEditing(!editing)}
              remove={remove}
              confirmDelete={`Delete instance ${instance.name}?`}
            />
          </td>
        )}
      </tr>
      {(editing || test.data || test.error || remove.error) && (
        <tr>
          <td colSpan={9}>
            {editing && <InstanceForm instance={instance} onDone={() => setEditing(false)} />}
            {test.data && <ConnectionReport report={test.data} />}
            <MutationError error={test.error} />
            <MutationError error={remove.error} testId="instance-delete-error" />
          </td>
        </tr>
      )}
    </>
  );
}

/** The monitored instances: list for everyone, add/edit/delete/test for admins. */
export function InstancesCard({ admin }: { admin: boolean }) {
  const instances = useQuery(instancesOptions());
  const [adding, setAdding] = useState(false);
  // ?edit=NAME (from "Settings → Instances → NAME → Edit" links elsewhere) opens its form.
  const [params] = useSearchParams();
  const editName = admin ? params.get('edit') : null;
  return (
    <ListCard
      title="Instances"
      query={instances}
      testId="instances"
      empty="No instances registered. An agent registers its instance when it first ships data."
      actions={
        admin &&
        (adding ? (
          <InstanceForm onDone={() => setAdding(false)} />
        ) : (
          <button type="button" className="button" onClick={() => setAdding(true)}>
            Add instance
          </button>
        ))
      }
    >
      {(items) => (
        <table className="data-table" data-testid="instances-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Server</th>
              <th scope="col">DSN</th>
              <th scope="col">Sandbox DSN</th>
              <th scope="col">Source</th>
              <th scope="col">Examples</th>
              <th scope="col">Execution target</th>
              <th scope="col">Added (UTC)</th>
              {admin && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {items.map((instance) => (
              <InstanceRow
                key={instance.id}
                instance={instance}
                admin={admin}
                openEdit={instance.name === editName}
              />
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
