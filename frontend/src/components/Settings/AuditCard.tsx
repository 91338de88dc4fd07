import { useQuery } from '@tanstack/react-query';
import { auditOptions } from '../../api/queries';
import { formatInstant } from '../../lib/format';
import { ListCard } from './ListCard';

function compact(value: Record<string, unknown>): string {
  return Object.entries(value)
    .map(([key, item]) => `${key}=${typeof item === 'string' ? item : JSON.stringify(item)}`)
    .join(' ');
}

/** The audit log (admin only, read-only): who changed what, newest first as served. */
export function AuditCard() {
  const audit = useQuery(auditOptions());
  return (
    <ListCard title="Audit log" query={audit} testId="audit" empty="Nothing audited yet.">
      {(items) => (
        <table className="data-table" data-testid="audit-table">
          <thead>
            <tr>
              <th scope="col">Time (UTC)</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {items.map((entry) => (
              <tr key={entry.id} data-testid="audit-row">
                <td className="nowrap">{formatInstant(entry.at)}</td>
                <td>{entry.actor}</td>
                <td>
                  <code>{entry.action}</code>
                </td>
                <td>{compact(entry.target)}</td>
                <td>{compact(entry.detail)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
