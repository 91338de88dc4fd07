import { type UseQueryResult, useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { errorMessage } from '../api/errors';
import { channelsOptions, instancesOptions } from '../api/queries';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { formatInstant, formatShare } from '../lib/format';

/** Loading, error and empty states of a settings list; `children` renders the rows. */
function ListCard<T>({
  title,
  query,
  empty,
  children,
  testId,
}: {
  title: string;
  query: UseQueryResult<T[]>;
  empty: ReactNode;
  children: (items: T[]) => ReactNode;
  testId: string;
}) {
  return (
    <section className="card" data-testid={testId}>
      <h2>{title}</h2>
      {query.status === 'pending' && <LoadingState label={`Loading ${title.toLowerCase()}…`} />}
      {query.status === 'error' && (
        <ErrorState
          title={`Could not load ${title.toLowerCase()}`}
          message={errorMessage(query.error)}
          onRetry={() => void query.refetch()}
        />
      )}
      {query.data?.length === 0 && empty}
      {query.data && query.data.length > 0 && children(query.data)}
    </section>
  );
}

/** Settings: the monitored instances and the chat channels alerts go to. */
export function Settings() {
  const instances = useQuery(instancesOptions());
  const channels = useQuery(channelsOptions());
  return (
    <section className="settings" aria-labelledby="settings-title">
      <div className="page-header">
        <h1 id="settings-title">Settings</h1>
      </div>
      <ListCard
        title="Instances"
        query={instances}
        testId="instances"
        empty={
          <EmptyState title="No instances registered.">
            <p>An agent registers its instance when it first ships data.</p>
          </EmptyState>
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
              </tr>
            </thead>
            <tbody>
              {items.map((instance) => (
                <tr key={instance.id}>
                  <th scope="row">{instance.name}</th>
                  <td>
                    {[instance.flavor, instance.version].filter(Boolean).join(' ') || (
                      <span className="muted">unknown</span>
                    )}
                  </td>
                  <td>
                    {instance.dsn ? (
                      <code>{instance.dsn}</code>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </td>
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
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListCard>
      <ListCard
        title="Channels"
        query={channels}
        testId="channels"
        empty={
          <EmptyState title="No chat channels.">
            <p>
              Add one with <code>POST /api/v1/channels</code> to get regressions in Slack or a
              webhook.
            </p>
          </EmptyState>
        }
      >
        {(items) => (
          <table className="data-table" data-testid="channels-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Type</th>
                <th scope="col">Events</th>
                <th scope="col">Instances</th>
                <th scope="col">Min. load share</th>
                <th scope="col">Quiet hours (UTC)</th>
                <th scope="col">Enabled</th>
              </tr>
            </thead>
            <tbody>
              {items.map((channel) => (
                <tr key={channel.id}>
                  <th scope="row">{channel.name}</th>
                  <td>{channel.type}</td>
                  <td>{channel.events.join(', ') || 'all'}</td>
                  <td>{channel.instances.join(', ') || 'all'}</td>
                  <td>{formatShare(channel.min_load_share)}</td>
                  <td>
                    {channel.quiet_start_hour !== null && channel.quiet_end_hour !== null
                      ? `${channel.quiet_start_hour}:00–${channel.quiet_end_hour}:00`
                      : 'none'}
                  </td>
                  <td>{channel.enabled ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </ListCard>
    </section>
  );
}
