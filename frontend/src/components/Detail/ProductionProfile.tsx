import { useQuery } from '@tanstack/react-query';
import { errorMessage } from '../../api/errors';
import { type StageRange, queryStagesOptions } from '../../api/stages';
import { formatDuration } from '../../lib/format';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';
import { productionRows, samplingNote } from './productionView';

const seconds = (value: number | null) => (value === null ? '–' : formatDuration(value));

/** Where the query's time goes in production: the stages performance_schema's history kept
 * for its executions in the range, ranked, with the lost time and the waits under their
 * stage; nothing is executed. */
export function ProductionProfile({
  queryId,
  instance,
  range,
}: {
  queryId: string;
  instance: string;
  range: StageRange;
}) {
  const query = useQuery(queryStagesOptions(queryId, instance, range));
  if (query.status === 'pending') return <LoadingState label="Loading the production profile…" />;
  if (query.status === 'error') {
    return (
      <ErrorState
        title="Could not load the production profile"
        message={errorMessage(query.error)}
      />
    );
  }
  const profile = query.data;
  return (
    <section className="production-profile" data-testid="production-profile">
      <h3>From production</h3>
      {profile.executions_sampled === 0 ? (
        <p className="muted" data-testid="production-profile-empty">
          {profile.reason}
        </p>
      ) : (
        <>
          <p className="muted" data-testid="production-sampling">
            {samplingNote(profile)}
          </p>
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
              {productionRows(profile).map((row) => (
                <tr
                  key={`${row.kind}:${row.label}:${row.time_s}`}
                  className={
                    row.kind === 'lost'
                      ? 'lost-time'
                      : row.kind === 'wait'
                        ? 'wait-row'
                        : row.kind === 'folded'
                          ? 'folded'
                          : undefined
                  }
                >
                  <td>
                    {row.kind === 'wait' ? (
                      <span className="wait-name">{row.label}</span>
                    ) : (
                      row.label
                    )}
                  </td>
                  <td className="num">{seconds(row.time_s)}</td>
                  <td className="num">{(row.share * 100).toFixed(1)}%</td>
                  <td className="num">{row.calls ?? '–'}</td>
                  <td className="num">{seconds(row.per_call_s)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted">
            Response {formatDuration(profile.response_s)} · not accounted for{' '}
            {formatDuration(profile.lost_time_s)}
          </p>
        </>
      )}
    </section>
  );
}
