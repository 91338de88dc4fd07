import { Area, AreaChart, XAxis, YAxis } from 'recharts';
import { formatInstant, formatLoad } from '../../lib/format';
import { type SparklineDatum, sparklineDomain, sparklinePeak } from './topQueriesView';

const WIDTH = 120;
const HEIGHT = 28;

/** A tiny load-over-time chart, no axes; the shaping is in topQueriesView.ts. */
export function LoadSparkline({ data }: { data: readonly SparklineDatum[] }) {
  const peak = sparklinePeak(data);
  if (data.length < 2 || peak === undefined) {
    return <span className="sparkline-none">–</span>;
  }
  const description = `Peak load ${formatLoad(peak.load)} at ${formatInstant(new Date(peak.t).toISOString())} UTC`;
  return (
    <div className="sparkline" role="img" aria-label={description} title={description}>
      <AreaChart
        width={WIDTH}
        height={HEIGHT}
        data={[...data]}
        margin={{ top: 2, right: 1, bottom: 1, left: 1 }}
        accessibilityLayer={false}
      >
        <XAxis dataKey="t" type="number" domain={['dataMin', 'dataMax']} hide />
        <YAxis domain={sparklineDomain(data)} hide />
        <Area
          type="linear"
          dataKey="load"
          stroke="#2563eb"
          strokeWidth={1.25}
          fill="#bfdbfe"
          fillOpacity={0.7}
          dot={false}
          activeDot={false}
          isAnimationActive={false}
        />
      </AreaChart>
    </div>
  );
}
