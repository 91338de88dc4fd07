import {
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ReferenceArea,
  ReferenceLine,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import type { Marker } from '../../lib/markers';
import { MarkerAxis } from '../Annotations/MarkerAxis';
import { isolatedPoints } from './detailView';

export interface ChartSeries {
  readonly key: string;
  readonly name: string;
  readonly color: string;
}

const MARGIN = { top: 8, right: 16, bottom: 0, left: 8 };
const Y_AXIS_WIDTH = 64;
const HEIGHT = 220;

function tickTime(ms: number, spanMs: number): string {
  const iso = new Date(ms).toISOString();
  // Within two days the hour says enough; beyond, the date.
  return spanMs <= 2 * 86_400_000 ? iso.slice(11, 16) : iso.slice(5, 10);
}

/**
 * A time-series chart (Recharts) with the annotations drawn in: lines for points, bands
 * for ranges, and above the plot a strip of markers whose text shows on hover and which
 * open the annotation's impact.
 */
export function TimeChart({
  title,
  data,
  series,
  domain,
  markers,
  format,
  testId,
  emptyNote,
}: {
  title: string;
  data: readonly Record<string, number | null>[];
  series: readonly ChartSeries[];
  domain: { fromMs: number; toMs: number };
  markers: readonly Marker[];
  format: (value: number) => string;
  testId?: string;
  /** Said under the title when no series has a single value: why the chart is empty. */
  emptyNote?: string;
}) {
  const span = domain.toMs - domain.fromMs;
  const empty = data.every((point) => series.every((line) => point[line.key] == null));
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      {empty && emptyNote && (
        <p className="muted" data-testid={testId ? `${testId}-empty` : undefined}>
          {emptyNote}
        </p>
      )}
      <MarkerAxis
        markers={markers}
        left={MARGIN.left + Y_AXIS_WIDTH}
        right={MARGIN.right}
        label={`Annotations on ${title}`}
      />
      <ResponsiveContainer width="100%" height={HEIGHT}>
        <LineChart data={[...data]} margin={MARGIN}>
          <CartesianGrid stroke="#eef0f3" vertical={false} />
          <XAxis
            dataKey="t"
            type="number"
            scale="time"
            domain={[domain.fromMs, domain.toMs]}
            tickFormatter={(ms: number) => tickTime(ms, span)}
            tick={{ fontSize: 11, fill: '#667085' }}
            minTickGap={24}
          />
          <YAxis
            width={Y_AXIS_WIDTH}
            tickFormatter={format}
            tick={{ fontSize: 11, fill: '#667085' }}
            allowDecimals
          />
          <Tooltip
            labelFormatter={(ms) =>
              `${new Date(Number(ms)).toISOString().slice(0, 16).replace('T', ' ')} UTC`
            }
            formatter={(value) => (typeof value === 'number' ? format(value) : String(value))}
          />
          {series.length > 1 && <Legend verticalAlign="top" height={24} iconType="plainline" />}
          {markers.map((marker) =>
            marker.end === null ? (
              <ReferenceLine
                key={marker.id}
                x={marker.start}
                stroke="#d97706"
                strokeDasharray="4 3"
                ifOverflow="hidden"
              />
            ) : (
              <ReferenceArea
                key={marker.id}
                x1={marker.start}
                x2={marker.end}
                fill="#fde68a"
                fillOpacity={0.35}
                ifOverflow="hidden"
              />
            ),
          )}
          {series.map((line) => {
            const isolated = isolatedPoints(data, line.key);
            return (
              <Line
                key={line.key}
                dataKey={line.key}
                name={line.name}
                stroke={line.color}
                strokeWidth={1.5}
                dot={(props: { cx?: number; cy?: number; index?: number }) => (
                  <circle
                    key={`${line.key}-${props.index}`}
                    cx={props.cx}
                    cy={props.cy}
                    r={isolated.has(props.index ?? -1) ? 2.5 : 0}
                    fill={line.color}
                  />
                )}
                type="linear"
                connectNulls={false}
                isAnimationActive={false}
              />
            );
          })}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  );
}
