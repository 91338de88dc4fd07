import { describe, expect, it } from 'vitest';
import { missingPrerequisite } from './prerequisites';

const ready = { name: 'db1', has_dsn: true, has_execution_target: true };

describe('missing prerequisites of a tab', () => {
  it('is nothing when the instance has what the tab needs', () => {
    expect(missingPrerequisite('explain', ready)).toBeNull();
    expect(missingPrerequisite('profile', ready)).toBeNull();
    expect(
      missingPrerequisite('suggestions', { ...ready, has_execution_target: false }),
    ).toBeNull();
  });

  it('names the DSN for every tab that reads the server', () => {
    for (const kind of ['explain', 'profile', 'suggestions', 'tables'] as const) {
      expect(missingPrerequisite(kind, { ...ready, has_dsn: false })).toMatch(
        /^Instance db1 has no DSN/,
      );
    }
  });

  it('names the execution target for profiles only', () => {
    const noTarget = { ...ready, has_execution_target: false };
    expect(missingPrerequisite('profile', noTarget)).toMatch(/execution target/);
    expect(missingPrerequisite('explain', noTarget)).toBeNull();
  });

  it('says when the instance is not registered', () => {
    expect(missingPrerequisite('explain', undefined)).toMatch(/not registered/);
  });
});
