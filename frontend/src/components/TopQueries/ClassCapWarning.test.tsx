import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { classCapsOptions } from '../../api/queryClasses';
import type { ClassCap } from '../../api/types';
import { ClassCapWarning } from './ClassCapWarning';

const caps: ClassCap[] = [
  {
    instance: 'db1',
    classes: 5003,
    max_classes: 20000,
    added_this_hour: 5000,
    max_new_per_hour: 5000,
    folded_classes: 195000,
    folded_events: 195000,
    last_folded: '2026-11-28T13:00:00Z',
  },
  {
    instance: 'db2',
    classes: 40,
    max_classes: 20000,
    added_this_hour: 0,
    max_new_per_hour: 5000,
    folded_classes: 0,
    folded_events: 0,
    last_folded: null,
  },
];

function render(instances: string[]): string {
  const client = new QueryClient();
  client.setQueryData(classCapsOptions().queryKey, caps);
  return renderToStaticMarkup(
    <QueryClientProvider client={client}>
      <ClassCapWarning instances={instances} />
    </QueryClientProvider>,
  );
}

describe('ClassCapWarning', () => {
  it('warns above the overview for an instance that folded statement shapes', () => {
    const html = render([]);
    expect(html).toContain('data-testid="class-cap-warning"');
    expect(html).toContain('Query-class cap reached.');
    expect(html).toContain('db1: 195,000 new statement shapes (195,000 executions)');
    expect(html).not.toContain('db2');
  });

  it('says nothing when the instances in view are under their caps', () => {
    expect(render(['db2'])).toBe('');
  });
});
