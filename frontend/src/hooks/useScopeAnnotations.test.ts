import { describe, expect, it } from 'vitest';
import type { Annotation } from '../api/types';
import { splitList } from '../routes/Annotations';
import { forInstances } from './useScopeAnnotations';

const base: Annotation = {
  id: 1,
  text: 'x',
  tags: [],
  instances: [],
  time: '2026-11-22T00:00:00Z',
  end_time: null,
  created_by: 'ci',
  created_at: '2026-11-22T00:00:00Z',
};

describe('forInstances', () => {
  const all = { ...base, id: 1 };
  const a = { ...base, id: 2, instances: ['a'] };
  const b = { ...base, id: 3, instances: ['b', 'c'] };

  it('keeps annotations about all instances or any selected one', () => {
    expect(forInstances([all, a, b], ['c']).map((x) => x.id)).toEqual([1, 3]);
    expect(forInstances([all, a, b], ['a', 'b']).map((x) => x.id)).toEqual([1, 2, 3]);
    expect(forInstances([all, a, b], []).map((x) => x.id)).toEqual([1, 2, 3]);
  });
});

describe('splitList', () => {
  it('trims, drops empties and duplicates', () => {
    expect(splitList(' deploy, schema ,,deploy ')).toEqual(['deploy', 'schema']);
    expect(splitList('')).toEqual([]);
  });
});
