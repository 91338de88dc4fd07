/** A value from an API row as table text. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '–';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Rows of unknown shape (EXPLAIN output, index lists) as a table of their keys. */
export function ResultTable({
  rows,
  caption,
  testId,
}: {
  rows: readonly Record<string, unknown>[];
  caption?: string;
  testId?: string;
}) {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  if (rows.length === 0) return <p className="muted">No rows.</p>;
  return (
    <div className="scroll-x">
      <table className="data-table" data-testid={testId}>
        {caption && <caption>{caption}</caption>}
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={index}>
              {columns.map((column) => (
                <td key={column}>{cellText(row[column])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
