import { useQuery } from '@tanstack/react-query';
import { profileOptions } from '../../api/diagnostics';
import { errorMessage } from '../../api/errors';
import { formatDuration } from '../../lib/format';
import type { StageRange } from '../../api/stages';
import { isWaiting } from '../../lib/runs';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';
import { ProductionProfile } from './ProductionProfile';
import { foldStages } from './profileView';
import { RequestAgain, RequestCollection } from './RequestCollection';
import { ExamplesUsed, RunHeader } from './RunHeader';
import { isNotCollected, type TabProps } from './tabState';

const micros = (us: number | null | undefined) =>
  us === null || us === undefined ? '–' : formatDuration(us / 1e6);

/** The query's profile on an instance: first from production (performance_schema's history,
 * nothing executed), then the latest replay on the execution target, or a request button. */
export function ProfileTab({ queryId, instance, range }: TabProps & { range: StageRange }) {
  return (
    <>
      <ProductionProfile queryId={queryId} instance={instance} range={range} />
      <h3>Replayed on the execution target</h3>
      <ReplayProfile queryId={queryId} instance={instance} />
    </>
  );
}

/** The latest replay profile (time per stage) of the query on an instance, or a request
 * button. */
function ReplayProfile({ queryId, instance }: TabProps) {
  const query = useQuery(profileOptions(queryId, instance));
  if (query.status === 'pending') return <LoadingState label="Loading the profile…" />;
  if (query.status === 'error') {
    if (isNotCollected(query.error)) {
      return (
        <RequestCollection
          kind="profile"
          what="profile"
          queryId={queryId}
          instance={instance}
          testId="profile-not-collected"
        />
      );
    }
    return <ErrorState title="Could not load the profile" message={errorMessage(query.error)} />;
  }
  const run = query.data;
  return (
    <div className="collected" data-testid="profile">
      <RunHeader run={run} kind="profile" />
      {run.rows.length > 0 && (
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">Stage</th>
              <th scope="col" className="num">
                Total
              </th>
              <th scope="col" className="num">
                Share
              </th>
              <th scope="col" className="num">
                Calls
              </th>
              <th scope="col" className="num">
                Per call
              </th>
            </tr>
          </thead>
          <tbody>
            {foldStages(run.rows).map((stage) => (
              <tr
                key={stage.state}
                className={stage.lost_time ? 'lost-time' : stage.stages > 1 ? 'folded' : undefined}
              >
                <td>{stage.state}</td>
                <td className="num">{micros(stage.total_us)}</td>
                <td className="num">{stage.percent.toFixed(1)}%</td>
                <td className="num">{stage.calls}</td>
                <td className="num">{micros(stage.per_call_us)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {run.response_us !== null && (
        <p className="muted" data-testid="profile-response">
          Response {micros(run.response_us)}
          {run.runs !== null && ` over ${run.runs} runs`}
          {run.lost_us !== null && ` · not accounted for ${micros(run.lost_us)}`}
        </p>
      )}
      <ExamplesUsed run={run} />
      {!isWaiting(run) && <RequestAgain kind="profile" queryId={queryId} instance={instance} />}
    </div>
  );
}
