import { Link } from 'react-router';
import { formatInstant } from '../../lib/format';
import type { Marker } from '../../lib/markers';

/** "2026-11-22 10:00 UTC", or "... – 10:20 UTC" for a range. */
export function markerWhen(marker: Marker): string {
  const start = formatInstant(marker.time);
  return marker.endTime === null
    ? `${start} UTC`
    : `${start} – ${formatInstant(marker.endTime)} UTC`;
}

/**
 * The annotations as markers along a time axis: hovering or focusing one shows its text,
 * clicking opens its impact. Lines for points, bands for ranges; `left`/`right` inset the
 * strip to line up with a chart's plot area.
 */
export function MarkerAxis({
  markers,
  left = 0,
  right = 0,
  label = 'Annotations',
}: {
  markers: readonly Marker[];
  left?: number;
  right?: number;
  label?: string;
}) {
  if (markers.length === 0) return null;
  return (
    <div
      className="marker-axis"
      style={{ marginLeft: left, marginRight: right }}
      role="list"
      aria-label={label}
      data-testid="annotation-markers"
    >
      {markers.map((marker) => (
        <Link
          key={`${marker.kind}-${marker.id}`}
          role="listitem"
          to={marker.link}
          className={[
            'marker',
            marker.end === null ? 'marker-point' : 'marker-range',
            marker.kind === 'regression' ? 'marker-regression' : '',
          ].join(' ')}
          style={{
            left: `${marker.left}%`,
            ...(marker.end !== null && { width: `max(${marker.width}%, 4px)` }),
          }}
          aria-label={`${marker.text} (${markerWhen(marker)}), ${
            marker.kind === 'regression' ? 'show regression' : 'show impact'
          }`}
          data-testid={marker.kind === 'regression' ? 'regression-marker' : 'annotation-marker'}
        >
          {/* Tips of markers on the right half open leftwards, to stay on screen. */}
          <span
            className={marker.left > 50 ? 'marker-tip marker-tip-left' : 'marker-tip'}
            role="tooltip"
          >
            <strong>{marker.text}</strong>
            <span>{markerWhen(marker)}</span>
            {marker.tags.length > 0 && (
              <span className="marker-tags">{marker.tags.join(', ')}</span>
            )}
            <span className="marker-hint">
              {marker.kind === 'regression' ? 'Click for the regression' : 'Click for impact'}
            </span>
          </span>
        </Link>
      ))}
    </div>
  );
}
