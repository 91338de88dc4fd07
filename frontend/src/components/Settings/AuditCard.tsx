import { useQuery } from '@tanstack/react-query';
import { auditOptions } from '../../api/audit';
import { auditSentence } from '../../lib/audit';
import { formatInstant } from '../../lib/format';
import { ListCard } from './ListCard';

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
              <th scope="col">What happened</th>
            </tr>
          </thead>
          <tbody>
            {items.map((entry) => (
              <tr key={entry.id} data-testid="audit-row">
                <td className="nowrap">{formatInstant(entry.at)}</td>
                {/* The recorded action (route template) stays at hand for those who grep. */}
                <td title={entry.action}>{auditSentence(entry)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
