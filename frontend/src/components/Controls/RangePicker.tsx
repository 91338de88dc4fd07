import { type FormEvent, useState } from 'react';
import { RANGE_LABELS, RANGE_PRESETS, type RangeState } from '../../lib/viewState';

/** "2026-11-22T10:00" (a datetime-local value, read as UTC) from an ISO instant. */
function toLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? '' : new Date(ms).toISOString().slice(0, 16);
}

function fromLocalInput(value: string): string | undefined {
  if (!value) return undefined;
  const ms = Date.parse(`${value}:00Z`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** Presets 1 h … 30 d, or a custom from/to in UTC. */
export function RangePicker({
  range,
  onChange,
  resolved,
}: {
  range: RangeState;
  onChange: (range: RangeState) => void;
  /** The bounds the server last resolved, to prefill the custom inputs. */
  resolved?: { from: string; to: string };
}) {
  const [editing, setEditing] = useState(false);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [error, setError] = useState<string | null>(null);

  function openCustom() {
    setFrom(toLocalInput(range.kind === 'custom' ? range.from : resolved?.from));
    setTo(toLocalInput(range.kind === 'custom' ? range.to : resolved?.to));
    setError(null);
    setEditing(true);
  }

  function apply(event: FormEvent) {
    event.preventDefault();
    const start = fromLocalInput(from);
    const end = fromLocalInput(to);
    if (start === undefined) return setError('Enter a start time.');
    if (end !== undefined && Date.parse(end) <= Date.parse(start)) {
      return setError('The end must be after the start.');
    }
    setEditing(false);
    onChange(
      end === undefined
        ? { kind: 'custom', from: start }
        : { kind: 'custom', from: start, to: end },
    );
  }

  return (
    <div className="range-picker">
      <div className="segmented" role="group" aria-label="Time range">
        {RANGE_PRESETS.map((preset) => {
          const active = range.kind === 'preset' && range.preset === preset;
          return (
            <button
              key={preset}
              type="button"
              className={active ? 'segment segment-active' : 'segment'}
              aria-pressed={active}
              title={RANGE_LABELS[preset]}
              onClick={() => onChange({ kind: 'preset', preset })}
            >
              {preset}
            </button>
          );
        })}
        <button
          type="button"
          className={range.kind === 'custom' ? 'segment segment-active' : 'segment'}
          aria-pressed={range.kind === 'custom'}
          aria-expanded={editing}
          onClick={() => (editing ? setEditing(false) : openCustom())}
        >
          Custom
        </button>
      </div>
      {editing && (
        <form className="custom-range" onSubmit={apply} aria-label="Custom time range">
          <label>
            From (UTC)
            <input type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} />
          </label>
          <label>
            To (UTC)
            <input type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} />
          </label>
          <button type="submit" className="button button-primary">
            Apply
          </button>
          {error && (
            <p className="form-error" role="alert">
              {error}
            </p>
          )}
        </form>
      )}
    </div>
  );
}
