// Number and time formatting for the tables. Everything is locale-independent (en-US,
// UTC) so that what a DBA pastes into a ticket reads the same for everyone.

const DASH = '–';

const countFormat = new Intl.NumberFormat('en-US');

/** Rounds to `digits` significant digits and drops trailing zeros: 0.5 -> "0.5". */
function significant(value: number, digits: number): number {
  return Number(value.toPrecision(digits));
}

/** Below this load (average active sessions), a load reads as query time per second. */
export const LOAD_AS_TIME_BELOW = 0.1;

/**
 * Load in units people read: average active sessions with up to 3 significant digits
 * ("0.25", "12.3"), and below 0.1 session the query time it is per second ("12.3 ms/s",
 * "7.98 µs/s"), never a row of zeros: load is query time over the range's seconds, so
 * 0.0123 sessions is 12.3 ms of query time every second.
 *
 * formatLoad(12.345) === "12.3", formatLoad(0.00000798) === "7.98 µs/s"
 */
export function formatLoad(load: number): string {
  if (!Number.isFinite(load)) return DASH;
  if (load === 0) return '0';
  if (load < 0) return `-${formatLoad(-load)}`;
  if (load < LOAD_AS_TIME_BELOW) return formatTimePerSecond(load);
  if (load >= 1000) return countFormat.format(Math.round(load));
  return String(significant(load, 3));
}

/**
 * Seconds of time per second in the unit that keeps 3 significant digits: "12.3 ms/s",
 * "7.98 µs/s", and below a microsecond nanoseconds ("26.1 ns/s": a quiet query over a day).
 */
export function formatTimePerSecond(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return DASH;
  if (seconds === 0) return '0';
  if (seconds >= 1e-6) return `${formatDuration(seconds)}/s`;
  const nanos = significant(seconds * 1e9, 3);
  if (nanos < 1) return '<1 ns/s';
  // 999.6 ns rounds to 1000: that is "1 µs/s".
  return nanos >= 1000 ? '1 µs/s' : `${nanos} ns/s`;
}

/** A query count with thousands separators: 1234567 -> "1,234,567". */
export function formatCount(count: number): string {
  if (!Number.isFinite(count)) return DASH;
  return countFormat.format(count);
}

/**
 * A fraction (0..1) as a percentage: whole numbers from 10 %, one decimal below.
 *
 * formatShare(0.2234) === "22%", formatShare(0.0123) === "1.2%"
 */
export function formatShare(share: number): string {
  if (!Number.isFinite(share)) return DASH;
  if (share <= 0) return '0%';
  const percent = share * 100;
  if (percent < 0.1) return '<0.1%';
  if (percent >= 9.95) return `${Math.round(percent)}%`;
  return `${percent.toFixed(1)}%`;
}

/** Width of a share bar in percent of its track, clamped to 0..100. */
export function shareBarPercent(share: number): number {
  if (!Number.isFinite(share) || share <= 0) return 0;
  return Math.min(share, 1) * 100;
}

/**
 * A duration in seconds in human units: 3 significant digits below a minute,
 * then two whole units ("2 min 5 s", "1 h 2 min", "3 d 4 h").
 */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return DASH;
  if (seconds === 0) return '0';
  if (seconds < 1e-6) return '<1 µs';
  // Each unit is used while its rounded value stays below the next unit's threshold,
  // so 0.9996 ms prints as "1 ms", never "1000 µs".
  if (seconds < 1e-3) {
    const micros = significant(seconds * 1e6, 3);
    if (micros < 1000) return `${micros} µs`;
  }
  if (seconds < 1) {
    const millis = significant(seconds * 1e3, 3);
    if (millis < 1000) return `${millis} ms`;
  }
  if (seconds < 60) {
    const secs = significant(seconds, 3);
    if (secs < 60) return `${secs} s`;
  }
  const totalSeconds = Math.round(seconds);
  if (totalSeconds < 3600) {
    return twoUnits(Math.floor(totalSeconds / 60), 'min', totalSeconds % 60, 's');
  }
  const totalMinutes = Math.round(seconds / 60);
  if (totalMinutes < 24 * 60) {
    return twoUnits(Math.floor(totalMinutes / 60), 'h', totalMinutes % 60, 'min');
  }
  const totalHours = Math.round(seconds / 3600);
  return twoUnits(Math.floor(totalHours / 24), 'd', totalHours % 24, 'h');
}

function twoUnits(major: number, majorUnit: string, minor: number, minorUnit: string): string {
  return minor === 0 ? `${major} ${majorUnit}` : `${major} ${majorUnit} ${minor} ${minorUnit}`;
}

/** An ISO 8601 instant as "YYYY-MM-DD HH:MM" in UTC, or the input if it does not parse. */
export function formatInstant(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

/** "2026-11-21 00:00 – 2026-11-22 00:00 UTC" */
export function formatTimeRange(fromIso: string, toIso: string): string {
  return `${formatInstant(fromIso)} – ${formatInstant(toIso)} UTC`;
}

/**
 * A rate or ratio with 3 significant digits, thousands separators from 1000, and
 * "<0.001" below that: formatRate(0.0123) === "0.0123", formatRate(1234.5) === "1,235".
 */
export function formatRate(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude < 0.001) return value > 0 ? '<0.001' : '>-0.001';
  if (magnitude >= 1000) return countFormat.format(Math.round(value));
  return String(significant(value, 3));
}

/** Rows examined per row sent; per call instead for statements that send no rows. */
export interface ExaminedRatio {
  readonly value: number;
  /** `row`: per row sent; `call`: per call, the statement sent no rows (DML, DDL). */
  readonly per: 'row' | 'call';
}

/**
 * Rows examined per row sent, which points at missing indexes; for statements that send no
 * rows (UPDATE, DELETE, INSERT ... SELECT) rows examined per call instead, where a ratio to
 * nothing would be infinite. Null when a figure is unknown.
 */
export function examinedPerSent(
  examined: number | null | undefined,
  sent: number | null | undefined,
  calls: number,
): ExaminedRatio | null {
  if (examined === null || examined === undefined || sent === null || sent === undefined) {
    return null;
  }
  if (sent > 0) return { value: examined / sent, per: 'row' };
  if (examined === 0 || calls <= 0) return { value: 0, per: 'row' };
  return { value: examined / calls, per: 'call' };
}

/** "100" (per row sent), "1,234/call" (sent no rows), "–" (unknown). */
export function formatExamined(ratio: ExaminedRatio | null): string {
  if (ratio === null) return DASH;
  const value = formatRate(ratio.value);
  return ratio.per === 'call' ? `${value}/call` : value;
}

/**
 * A metric's rate: time metrics as time per second ("7.98 µs/s": that much query time every
 * second, i.e. a load), counts per second, or per minute or hour when that reads better
 * than a fraction ("12.3/s", "2.4/min", "1.67/h").
 */
export function formatPerSecond(name: string, value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  if (value === 0) return '0';
  if (isTimeMetric(name)) return formatTimePerSecond(value);
  if (value >= 0.1) return `${formatRate(value)}/s`;
  if (value * 60 >= 0.1) return `${formatRate(value * 60)}/min`;
  return `${formatRate(value * 3600)}/h`;
}

function isTimeMetric(name: string): boolean {
  return name.endsWith('_time') || name.endsWith('_wait');
}

/** A metric value in its own unit: durations for *_time metrics, plain numbers otherwise. */
export function formatMetric(name: string, value: number | null | undefined): string {
  if (value === null || value === undefined) return DASH;
  if (isTimeMetric(name)) return formatDuration(value);
  return formatRate(value);
}

const BYTE_UNITS = ['bytes', 'KB', 'MB', 'GB', 'TB', 'PB'];

/**
 * A size in bytes with a binary unit, as MySQL's tools print table sizes:
 * formatBytes(9977856) === "9.5 MB", formatBytes(16384) === "16 KB", formatBytes(0) === "0 bytes".
 */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return DASH;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${countFormat.format(value)} bytes`;
  const digits = value >= 100 || Number.isInteger(value) ? 0 : 1;
  return `${value.toFixed(digits)} ${BYTE_UNITS[unit]}`;
}
