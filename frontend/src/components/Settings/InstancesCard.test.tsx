import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ConnectionTest } from '../../api/types';
import { ConnectionReport } from './InstancesCard';

// The test-connection answer for the README's least-privilege monitoring account, as the
// API gives it (tests/integration/test_execution_targets_mariadb.py checks the API side).
const LEAST: ConnectionTest = {
  connected: true,
  error: null,
  flavor: 'mariadb',
  version: '10.11.9-MariaDB',
  account: 'quanta@%',
  privileges: ['SELECT ON *.*', 'PROCESS ON *.*', 'SHOW VIEW ON *.*'],
  excess_privileges: [],
  capabilities: [
    { name: 'read_only_session', ok: true, detail: 'sessions run in read-only transactions' },
    { name: 'least_privilege', ok: true, detail: 'the account has only SELECT, PROCESS' },
    {
      name: 'explain',
      ok: true,
      detail: 'EXPLAIN works (UPDATE ... are explained as their equivalent SELECT)',
    },
    { name: 'performance_schema_digests', ok: true, detail: 'reads digests' },
  ],
  execution_target: null,
};

const text = (report: ConnectionTest) =>
  renderToStaticMarkup(<ConnectionReport report={report} />).replace(/<[^>]+>/g, ' ');

describe('ConnectionReport', () => {
  it('shows nothing red for an account that has what Quanta needs, and no profiling claim', () => {
    const shown = text(LEAST);
    expect(shown).not.toContain('✗');
    expect(shown).toContain('✓ explain');
    expect(shown).not.toContain('profiling');
    // Without a target: what is missing for profiles, and where it is set.
    expect(shown).toContain('No execution target: EXPLAIN only');
    expect(shown).toContain('Edit → Execution target DSN');
  });

  it('lists the execution target’s own capabilities under it', () => {
    const shown = text({
      ...LEAST,
      execution_target: {
        address: 'replica:3306',
        read_only: true,
        detail: 'read-only for quanta_exec@%: read_only=ON',
        account: 'quanta_exec@%',
        privileges: ['SELECT ON *.*'],
        excess_privileges: [],
        capabilities: [{ name: 'profiling', ok: true, detail: 'profiles use SHOW PROFILE' }],
      },
    });
    expect(shown).toMatch(/Execution target replica:3306:\s+read-only/);
    expect(shown.indexOf('✓ profiling')).toBeGreaterThan(shown.indexOf('Execution target'));
  });

  it('marks a capability that fails', () => {
    const failing = {
      ...LEAST,
      capabilities: [{ name: 'read_schemas', ok: false, detail: 'cannot read crm' }],
    };
    expect(text(failing)).toContain('✗ read_schemas');
  });
});
