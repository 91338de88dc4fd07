import { Link } from 'react-router';
import { useIsAdmin } from '../../hooks/useMe';
import type { Prerequisite } from './prerequisites';

/**
 * What the instance lacks, with a link to where it is set: for an admin the instance's edit
 * form in Settings; for anyone else where an admin would set it.
 */
export function MissingPrerequisite({
  missing,
  id,
}: {
  missing: Prerequisite;
  /** For aria-describedby of a control it disables. */
  id?: string;
}) {
  const admin = useIsAdmin();
  return (
    <p className="muted" data-testid="missing-prerequisite" id={id}>
      {missing.reason}{' '}
      {admin && missing.fixAt ? (
        <>
          Set it in{' '}
          <Link to={missing.fixAt} data-testid="prerequisite-link">
            {missing.fixLabel}
          </Link>
          .
        </>
      ) : (
        <>An admin sets it in {missing.fixLabel}.</>
      )}{' '}
      {missing.guide}
    </p>
  );
}
