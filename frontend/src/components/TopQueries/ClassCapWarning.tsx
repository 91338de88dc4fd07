import { useQuery } from '@tanstack/react-query';
import { classCapsOptions } from '../../api/queryClasses';
import { capSentence, foldingInstances } from './classCaps';

/** A warning above the top queries when an instance in view is at a query-class cap. */
export function ClassCapWarning({ instances }: { instances: readonly string[] }) {
  const caps = useQuery(classCapsOptions());
  const folding = foldingInstances(caps.data ?? [], instances);
  if (folding.length === 0) return null;
  return (
    <div className="notice" role="status" data-testid="class-cap-warning">
      <strong>Query-class cap reached.</strong>
      {folding.map((cap) => (
        <p key={cap.instance}>{capSentence(cap)}</p>
      ))}
    </div>
  );
}
