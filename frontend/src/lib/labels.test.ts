import { describe, expect, it } from 'vitest';
import { formatLabels, parseLabels } from './labels';

describe('instance labels as text', () => {
  it('round-trips', () => {
    const labels = parseLabels(' Environment = prod ,cluster=eu-1,');
    expect(labels).toEqual({ environment: 'prod', cluster: 'eu-1' });
    expect(formatLabels(labels as Record<string, string>)).toBe('cluster=eu-1, environment=prod');
    expect(parseLabels('')).toEqual({});
  });

  it('says what is wrong', () => {
    expect(parseLabels('prod')).toEqual({
      error: 'Write each label as key=value (environment=prod): not "prod".',
    });
    expect(parseLabels('a b=1')).toHaveProperty('error');
  });
});
