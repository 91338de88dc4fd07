import { memo } from 'react';
import { formatInstant, formatLoad } from '../../lib/format';
import type { Marker } from '../../lib/markers';
import { type SparklineDatum, sparklinePaths, sparklinePeak } from './topQueriesView';

export const SPARK_WIDTH = 120;
const HEIGHT = 28;

/**
 * A tiny load-over-time chart with the annotations as thin lines and bands. Plain SVG,
 * not Recharts: a page can hold 1,000 of these, and a Recharts chart each (with its
 * resize observers and state) makes such a page take seconds to appear.
 */
export const LoadSparkline = memo(function LoadSparkline({
  data,
  domain,
  markers,
}: {
  data: readonly SparklineDatum[];
  domain: { fromMs: number; toMs: number };
  markers: readonly Marker[];
}) {
  const peak = sparklinePeak(data);
  if (data.length < 2 || peak === undefined) {
    return <span className="sparkline-none">–</span>;
  }
  const { line, area } = sparklinePaths(data, domain, { width: SPARK_WIDTH, height: HEIGHT });
  const description = `Peak load ${formatLoad(peak.load)} at ${formatInstant(new Date(peak.t).toISOString())} UTC`;
  return (
    <svg
      className="sparkline"
      width={SPARK_WIDTH}
      height={HEIGHT}
      viewBox={`0 0 ${SPARK_WIDTH} ${HEIGHT}`}
      role="img"
      aria-label={description}
    >
      <title>{description}</title>
      {markers.map((marker) =>
        marker.end === null ? (
          <line
            key={marker.id}
            className="spark-marker"
            x1={(marker.left / 100) * SPARK_WIDTH}
            x2={(marker.left / 100) * SPARK_WIDTH}
            y1={0}
            y2={HEIGHT}
          />
        ) : (
          <rect
            key={marker.id}
            className="spark-band"
            x={(marker.left / 100) * SPARK_WIDTH}
            width={Math.max((marker.width / 100) * SPARK_WIDTH, 1)}
            y={0}
            height={HEIGHT}
          />
        ),
      )}
      <path d={area} className="spark-area" />
      <path d={line} className="spark-line" />
    </svg>
  );
});
