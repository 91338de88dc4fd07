import { formatShare, shareBarPercent } from '../../lib/format';

/** The fraction of the total query time a row accounts for, as a bar and a percentage. */
export function ShareBar({ share }: { share: number }) {
  const label = formatShare(share);
  return (
    <div className="share" title={`${label} of total query time`}>
      <div className="share-track" aria-hidden="true">
        <div className="share-fill" style={{ width: `${shareBarPercent(share)}%` }} />
      </div>
      <span className="share-label">{label}</span>
    </div>
  );
}
