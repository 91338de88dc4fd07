import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import {
  createInstance,
  deleteInstance,
  testInstanceConnection,
  updateInstance,
} from '../../api/client';
import { instancesOptions, queryKeys } from '../../api/queries';
import type { ConnectionTest, Instance, InstanceCreate } from '../../api/types';
import { formatInstant } from '../../lib/format';
import { ListCard, MutationError, RowActions } from './ListCard';

type Policy = InstanceCreate['example_policy'];
const POLICIES = ['masked', 'full', 'off'] as const;

/** Add or edit: a DSN left blank when editing keeps the stored one. */
function InstanceForm({ instance, onDone }: { instance?: Instance; onDone: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(instance?.name ?? '');
  const [dsn, setDsn] = useState('');
  const [sandboxDsn, setSandboxDsn] = useState('');
  const [profiling, setProfiling] = useState(instance?.profiling_enabled ?? false);
  const [policy, setPolicy] = useState<Policy>(instance?.example_policy ?? 'masked');
  const save = useMutation({
    mutationFn: () => {
      const common = {
        name: name.trim(),
        profiling_enabled: profiling,
        example_policy: policy,
        ...(dsn.trim() ? { dsn: dsn.trim() } : {}),
        ...(sandboxDsn.trim() ? { sandbox_dsn: sandboxDsn.trim() } : {}),
      };
      return instance ? updateInstance(instance.id, common) : createInstance(common);
    },
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.instances() });
      onDone();
    },
  });

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    save.mutate();
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
        Examples
        <select value={policy} onChange={(event) => setPolicy(event.target.value as Policy)}>
          {POLICIES.map((item) => (
            <option key={item} value={item}>
              {item}
            </option>
          ))}
        </select>
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={profiling}
          onChange={(event) => setProfiling(event.target.checked)}
        />
        Profiling (may run example SELECTs)
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

function ConnectionReport({ report }: { report: ConnectionTest }) {
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
      {report.capabilities && report.capabilities.length > 0 && (
        <ul>
          {report.capabilities.map((capability) => (
            <li key={capability.name} data-testid="capability">
              <span className={capability.ok ? 'ok' : 'not-ok'}>
                {capability.ok ? '✓' : '✗'} {capability.name}
              </span>
              {capability.detail && <span className="muted"> — {capability.detail}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function InstanceRow({ instance, admin }: { instance: Instance; admin: boolean }) {
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const test = useMutation({
    mutationFn: () => testInstanceConnection(instance.id),
    // The test detects the server's flavor and version, which the list shows.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.instances() }),
  });
  const remove = useMutation({
    mutationFn: () => deleteInstance(instance.id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.instances() }),
  });
  return (
    <>
      <tr data-testid="instance-row">
        <th scope="row">{instance.name}</th>
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
        <td>{instance.primary_source ?? 'auto'}</td>
        <td>{instance.example_policy}</td>
        <td>{instance.profiling_enabled ? 'on' : 'off'}</td>
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
              <th scope="col">Profiling</th>
              <th scope="col">Added (UTC)</th>
              {admin && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {items.map((instance) => (
              <InstanceRow key={instance.id} instance={instance} admin={admin} />
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
