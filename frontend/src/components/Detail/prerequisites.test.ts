import { describe, expect, it } from 'vitest';
import { editInstanceHref, missingPrerequisite } from './prerequisites';

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
      expect(missingPrerequisite(kind, { ...ready, has_dsn: false })?.reason).toMatch(
        /^Instance db1 has no DSN/,
      );
    }
  });

  it('names the execution target for profiles only, and where it is set in the UI', () => {
    const noTarget = { ...ready, has_execution_target: false };
    const missing = missingPrerequisite('profile', noTarget);
    expect(missing?.reason).toMatch(/execution target .* never on the monitored server/);
    // Settings -> the instance -> Edit, not an API call.
    expect(missing?.fixLabel).toBe('Settings → Instances → db1 → Edit');
    expect(missing?.fixAt).toBe('/settings?edit=db1#instances');
    expect(JSON.stringify(missing)).not.toMatch(/PATCH|\/api\//);
    expect(missingPrerequisite('explain', noTarget)).toBeNull();
  });

  it('says when the instance is not registered', () => {
    expect(missingPrerequisite('explain', undefined)?.reason).toMatch(/not registered/);
  });

  it('links to the edit form of names that need escaping', () => {
    expect(editInstanceHref('db 1&x')).toBe('/settings?edit=db+1%26x#instances');
  });
});
