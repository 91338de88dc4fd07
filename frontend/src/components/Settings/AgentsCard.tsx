import { useQuery } from '@tanstack/react-query';
import { agentSourcesOptions } from '../../api/agents';
import type { AgentSource } from '../../api/types';
import {
  agentText,
  errorText,
  lagText,
  lastBatchText,
  spoolText,
  stateText,
} from '../../lib/agents';
import { ListCard } from './ListCard';

const STATE_TONE: Record<AgentSource['state'], string> = {
  reporting: 'ok',
  failing: 'not-ok',
  stopped: 'not-ok',
};

/**
 * The agents' health per instance and source: the last batch and its lag, the agent's
 * version, host and spool, its last error, and whether it reports, fails or stopped.
 */
export function AgentsCard({ admin }: { admin: boolean }) {
  const query = useQuery(agentSourcesOptions());
  // Relative times from when the answer arrived, not from each render.
  const now = query.dataUpdatedAt;
  return (
    <ListCard
      title="Agents"
      query={query}
      testId="agents"
      empty="No agent has reported yet: run quanta-agent next to a server (see the README, “Point an agent at a real server”)."
    >
      {(sources) => (
        <table className="data-table" data-testid="agents-table">
          <thead>
            <tr>
              <th scope="col">Instance</th>
              <th scope="col">Source</th>
              <th scope="col">State</th>
              <th scope="col">Last batch</th>
              <th scope="col" title="From the newest data of the last batch to its arrival">
                Lag
              </th>
              <th scope="col">Agent</th>
              <th scope="col">Spool</th>
              <th scope="col">Last error{admin ? '' : ' (text for admins)'}</th>
            </tr>
          </thead>
          <tbody>
            {sources.map((source) => (
              <tr key={`${source.instance_id}-${source.source}`} data-testid="agent-row">
                <th scope="row">{source.instance}</th>
                <td>{source.source}</td>
                <td data-testid="agent-state">
                  <span className={STATE_TONE[source.state]}>{stateText(source)}</span>
                </td>
                <td className="nowrap" data-testid="agent-last-batch">
                  {lastBatchText(source, now)}
                </td>
                <td className="nowrap">{lagText(source)}</td>
                <td data-testid="agent-version">{agentText(source)}</td>
                <td data-testid="agent-spool">{spoolText(source)}</td>
                <td className="muted" data-testid="agent-error">
                  {errorText(source, now)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
