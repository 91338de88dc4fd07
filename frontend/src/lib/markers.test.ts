import { describe, expect, it } from 'vitest';
import type { Annotation } from '../api/types';
import { placeMarkers } from './markers';

const FROM = Date.parse('2026-11-22T00:00:00Z');
const TO = Date.parse('2026-11-22T10:00:00Z');

function annotation(id: number, time: string, end: string | null = null): Annotation {
  return {
    id,
    text: `a${id}`,
    tags: ['deploy'],
    instances: [],
    time,
    end_time: end,
    created_by: 'ci',
    created_at: time,
  };
}

describe('placeMarkers', () => {
  it('places a point annotation by its share of the axis', () => {
    const [marker] = placeMarkers([annotation(1, '2026-11-22T02:30:00Z')], FROM, TO);
    expect(marker).toMatchObject({ id: 1, left: 25, width: 0, end: null, endTime: null });
  });

  it('draws a range as a band and clips it to the axis', () => {
    const markers = placeMarkers(
      [
        annotation(2, '2026-11-21T23:00:00Z', '2026-11-22T01:00:00Z'),
        annotation(3, '2026-11-22T09:00:00Z', '2026-11-22T12:00:00Z'),
      ],
      FROM,
      TO,
    );
    expect(markers.map((m) => [m.id, m.left, m.width])).toEqual([
      [2, 0, 10],
      [3, 90, 10],
    ]);
    expect(markers[0]?.start).toBe(FROM);
    expect(markers[1]?.end).toBe(TO);
    // The hover text keeps the real times, not the clipped ones.
    expect(markers[0]?.time).toBe('2026-11-21T23:00:00Z');
  });

  it('leaves out annotations outside the axis and unparseable ones, sorts by time', () => {
    const markers = placeMarkers(
      [
        annotation(4, '2026-11-22T08:00:00Z'),
        annotation(5, '2026-11-21T12:00:00Z'),
        annotation(6, '2026-11-23T00:00:00Z', '2026-11-23T01:00:00Z'),
        annotation(7, 'not a time'),
        annotation(8, '2026-11-22T01:00:00Z'),
      ],
      FROM,
      TO,
    );
    expect(markers.map((m) => m.id)).toEqual([8, 4]);
  });

  it('treats an end before the start as a point', () => {
    const [marker] = placeMarkers(
      [annotation(9, '2026-11-22T05:00:00Z', '2026-11-22T04:00:00Z')],
      FROM,
      TO,
    );
    expect(marker).toMatchObject({ left: 50, width: 0, end: null });
  });

  it('returns nothing for an empty axis', () => {
    expect(placeMarkers([annotation(1, '2026-11-22T02:30:00Z')], TO, TO)).toEqual([]);
  });
});
