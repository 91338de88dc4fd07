import { describe, expect, it } from 'vitest';
import { isWaiting, ranOnText } from './runs';

const target = { role: 'execution target', address: '127.0.0.1:3311' };
const monitored = { role: 'monitored server', address: 'db1.lan:3306' };
const version = '10.11.9-MariaDB';

describe('ranOnText', () => {
  it('names the execution target a profile ran on, not the monitored server', () => {
    const run = { instance: 'db1', server_version: version, ran_on: [target] };
    expect(ranOnText(run, 'profile')).toBe(
      'on the execution target 127.0.0.1:3311 (10.11.9-MariaDB) for db1',
    );
  });

  it('names the monitored server of an EXPLAIN, and the target of its ANALYZE', () => {
    const run = { instance: 'db1', server_version: version, ran_on: [monitored, target] };
    expect(ranOnText({ ...run, analyze: { query_block: {} } }, 'explain')).toBe(
      "on db1's monitored server db1.lan:3306 (10.11.9-MariaDB); ANALYZE on the execution " +
        'target 127.0.0.1:3311',
    );
    // The target was tried and refused (not read-only): no ANALYZE to place.
    expect(ranOnText({ ...run, analyze: null }, 'explain')).toBe(
      "on db1's monitored server db1.lan:3306 (10.11.9-MariaDB)",
    );
  });

  it('still says something true of runs stored before the servers were recorded', () => {
    expect(ranOnText({ instance: 'db1', server_version: null }, 'profile')).toBe(
      'on the execution target of db1',
    );
    expect(ranOnText({ instance: 'db1', server_version: version, ran_on: [] }, 'explain')).toBe(
      'on db1 (10.11.9-MariaDB)',
    );
  });
});

describe('isWaiting', () => {
  it('waits while queued or while a newer run is', () => {
    expect(isWaiting({ status: 'queued', pending: false })).toBe(true);
    expect(isWaiting({ status: 'ok', pending: true })).toBe(true);
    expect(isWaiting({ status: 'ok', pending: false })).toBe(false);
    expect(isWaiting(undefined)).toBe(false);
  });
});
