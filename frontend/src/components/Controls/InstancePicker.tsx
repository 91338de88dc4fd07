import type { FilterValue } from '../../api/types';

/** One instance or all of them; the choices are the instances with data in the range. */
export function InstancePicker({
  selected,
  options,
  onChange,
}: {
  selected: readonly string[];
  options: readonly FilterValue[];
  onChange: (instances: string[]) => void;
}) {
  const names = options.map((option) => option.value);
  for (const name of selected) if (!names.includes(name)) names.push(name);
  const value = selected.length === 1 ? (selected[0] ?? '') : '';
  return (
    <label className="instance-picker">
      <span>Instance</span>
      <select
        value={selected.length > 1 ? '__many' : value}
        onChange={(event) => onChange(event.target.value ? [event.target.value] : [])}
        data-testid="instance-picker"
      >
        <option value="">All instances</option>
        {selected.length > 1 && (
          <option value="__many" disabled>
            {selected.length} instances
          </option>
        )}
        {names.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}
