import { describe, expect, it } from 'vitest';
import type { AgentSource } from '../api/types';
import {
  agentText,
  agentsAtAGlance,
  errorText,
  formatAgo,
  lagText,
  lastBatchText,
  spoolText,
  stateText,
} from './agents';

const NOW = Date.parse('2026-11-28T12:00:00Z');

const source = (changes: Partial<AgentSource> = {}): AgentSource => ({
  instance: 'db1',
  instance_id: 1,
  source: 'slowlog',
  state: 'reporting',
  silent_seconds: 12,
  last_seen_at: '2026-11-28T11:59:48Z',
  last_batch_at: '2026-11-28T11:59:50Z',
  last_batch_rows: 3456,
  lag_seconds: 65.4,
  agent_version: '0.1.0',
  agent_host: 'db1.example',
  read_at: '2026-11-28T11:59:59Z',
  spooled: 3,
  spooled_bytes: 4096,
  dropped: 1,
  rejected: 0,
  last_error: null,
  last_error_at: null,
  ...changes,
});

describe('agent health in words', () => {
  it('says when the last batch came, how late and from which agent', () => {
    expect(lastBatchText(source(), NOW)).toBe('10 s ago, 3,456 rows');
    expect(lastBatchText(source({ last_batch_at: null }), NOW)).toBe('none yet');
    expect(lagText(source())).toBe('1 min 5 s');
    expect(lagText(source({ lag_seconds: 0.2 }))).toBe('<1 s');
    expect(lagText(source({ lag_seconds: null }))).toBe('–');
    expect(agentText(source())).toBe('0.1.0 on db1.example');
    // An agent older than status reports: its version from its User-Agent, no host.
    expect(agentText(source({ agent_host: null }))).toBe('0.1.0');
  });

  it('says what waits in the spool and what was lost', () => {
    expect(spoolText(source())).toBe('3 batches (4 KB) waiting · 1 dropped · 0 refused');
    expect(spoolText(source({ spooled: 1, spooled_bytes: 10, dropped: 0 }))).toBe(
      '1 batch (10 bytes) waiting · 0 dropped · 0 refused',
    );
    expect(spoolText(source({ spooled: null }))).toBe('–');
  });

  it('gives a clear state when a source stops reporting or fails', () => {
    expect(stateText(source())).toBe('reporting');
    expect(stateText(source({ state: 'stopped', silent_seconds: 1500.4 }))).toBe(
      'stopped: nothing received for 25 min',
    );
    expect(
      stateText(source({ state: 'failing', source: 'perfschema', last_error: 'denied' })),
    ).toBe('failing to read perfschema: denied');
    expect(stateText(source({ state: 'failing', last_error: null }))).toBe(
      'failing to read slowlog',
    );
  });

  it('tells the last error and when; viewers get no text', () => {
    const failed = { last_error_at: '2026-11-28T11:57:00Z' };
    expect(errorText(source({ ...failed, last_error: 'server unreachable' }), NOW)).toBe(
      'server unreachable (3 min ago)',
    );
    expect(errorText(source(failed), NOW)).toBe('3 min ago');
    expect(errorText(source(), NOW)).toBe('none');
    expect(formatAgo(0.4)).toBe('just now');
  });

  it('tells the overview which instances have an agent and what stopped', () => {
    const sources = [
      source(),
      source({ source: 'perfschema', last_batch_at: '2026-11-28T11:59:58Z' }),
      source({ instance: 'db2', state: 'stopped', last_batch_at: null }),
      source({ instance: 'db3', state: 'failing', last_batch_at: null }),
    ];
    expect(agentsAtAGlance(sources, NOW)).toEqual({
      connected: ['db1', 'db3'],
      stopped: ['db2 slowlog'],
      lastBatchSeconds: 2,
    });
    expect(agentsAtAGlance([], NOW)).toEqual({
      connected: [],
      stopped: [],
      lastBatchSeconds: null,
    });
  });
});
