import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { MemoryRouter } from 'react-router';
import { describe, expect, it } from 'vitest';
import { meOptions } from '../../api/auth';
import { profileOptions } from '../../api/diagnostics';
import { instancesOptions } from '../../api/instances';
import type { Instance, Me, ProfileRun } from '../../api/types';
import { ProfileTab } from './ProfileTab';

// Rendered from a filled cache: what the tab says for the data it has.

const INSTANCE: Instance = {
  id: 3,
  name: 'db1',
  flavor: 'mariadb',
  version: '10.11.9-MariaDB',
  dsn: 'mysql://quanta:***@db1:3306/',
  has_dsn: true,
  sandbox_dsn: null,
  execution_target_dsn: null,
  has_execution_target: false,
  profiling_enabled: false,
  allow_broad_privileges: false,
  example_policy: 'full',
  primary_source: 'slowlog',
  primary_source_pinned: false,
  created_at: '2026-11-28T10:00:00Z',
};
// The run queued while the instance had a target, refused once it had none.
const REFUSED: ProfileRun = {
  id: 9,
  query_id: 'A1B2',
  instance: 'db1',
  status: 'refused',
  requested_at: '2026-11-28T11:00:00Z',
  taken_at: '2026-11-28T11:00:05Z',
  error: "A profile executes the example, ... instance 'db1' has no execution target.",
  pending: false,
  examples: [],
  server_version: null,
  ran_on: [],
  runs: null,
  response_us: null,
  lost_us: null,
  rows: [],
  run_response_us: [],
};
const OK: ProfileRun = {
  ...REFUSED,
  status: 'ok',
  error: null,
  server_version: '10.11.9-MariaDB',
  ran_on: [{ role: 'execution target', address: '127.0.0.1:3311' }],
  runs: 3,
  response_us: 1500,
  lost_us: 100,
  rows: [
    {
      state: 'Sending data',
      total_us: 1400,
      percent: 93.3,
      calls: 3,
      per_call_us: 466,
      lost_time: false,
    },
    { state: 'lost time', total_us: 100, percent: 6.7, calls: 3, per_call_us: 33, lost_time: true },
  ],
};

function render(run: ProfileRun, instance: Instance, scopes = ['admin']): string {
  const client = new QueryClient();
  const me: Me = { name: 'ada', scopes, role: 'admin', user: 'ada' };
  client.setQueryData(meOptions().queryKey, me);
  client.setQueryData(instancesOptions().queryKey, [instance]);
  client.setQueryData(profileOptions('A1B2', 'db1').queryKey, run);
  return renderToStaticMarkup(
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <ProfileTab queryId="A1B2" instance="db1" range={{ from: 'now-1h', to: 'now' }} />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const text = (html: string) => html.replace(/<[^>]+>/g, '');

describe('ProfileTab', () => {
  it('without an execution target: a link to the instance in Settings, no empty figures, and "Collect again" disabled with the reason', () => {
    const html = render(REFUSED, INSTANCE);
    expect(text(html)).not.toMatch(/Response –|not accounted for –/);
    expect(html).toContain('href="/settings?edit=db1#instances"');
    expect(text(html)).toContain('Set it in Settings → Instances → db1 → Edit.');
    const button = html.match(/<button[^>]*data-testid="collect-again"[^>]*>/)?.[0] ?? '';
    expect(button).toContain('disabled=""');
    expect(button).toContain('aria-describedby="again-profile"');
    expect(html).toMatch(/id="again-profile"[^>]*>Profiles execute the statement/);
  });

  it('names where a profile ran: the execution target, not the monitored server', () => {
    const html = render(OK, { ...INSTANCE, has_execution_target: true });
    expect(text(html)).toContain(
      'on the execution target 127.0.0.1:3311 (10.11.9-MariaDB) for db1',
    );
    expect(text(html)).toContain('Response 1.5 ms over 3 runs · not accounted for 100 µs');
    const button = html.match(/<button[^>]*data-testid="collect-again"[^>]*>/)?.[0] ?? '';
    expect(button).not.toContain('disabled');
  });

  it('tells a viewer where an admin sets the target, without a link to a form they cannot use', () => {
    const html = render(REFUSED, INSTANCE, ['read']);
    expect(html).not.toContain('href="/settings?edit=db1');
    expect(html).not.toContain('collect-again');
  });
});
