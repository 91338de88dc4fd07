import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import {
  channelsOptions,
  deliveriesOptions,
  useDeleteChannel,
  useSaveChannel,
  useSendTestMessage,
} from '../../api/channels';
import type { Channel, ChannelSave, ChannelType } from '../../api/types';
import { formatInstant, formatShare } from '../../lib/format';
import { formatLabels, parseLabels } from '../../lib/labels';
import { ListCard, MutationError, RowActions, splitList } from './ListCard';

const TYPES: ChannelType[] = ['slack', 'teams', 'mattermost', 'discord', 'webhook'];
type ChannelEvent = NonNullable<ChannelSave['events']>[number];
const EVENTS: ChannelEvent[] = [
  'new_suggestion',
  'annotation_impact',
  'index_plan',
  'index_review',
];
/** What a new channel takes unless changed: index plans and reviews are opted into. */
const DEFAULT_EVENTS: ChannelEvent[] = ['new_suggestion', 'annotation_impact'];
/** What ticking an event means, where its name does not say it all. */
const EVENT_HINTS: Partial<Record<ChannelEvent, string>> = {
  index_plan: 'One message per table when its index plan changes, instead of one per query.',
  index_review: 'Weekly: the indexes newly found duplicate, redundant or unused, once each.',
};

function hourOrNull(text: string): number | null {
  return text.trim() === '' ? null : Number(text);
}

function ChannelForm({ channel, onDone }: { channel?: Channel; onDone: () => void }) {
  const [type, setType] = useState<ChannelType>(channel?.type ?? 'webhook');
  const [name, setName] = useState(channel?.name ?? '');
  // The API shows a stored URL redacted (its path holds the secret): blank keeps it.
  const [url, setUrl] = useState('');
  const [instances, setInstances] = useState((channel?.instances ?? []).join(', '));
  const [minShare, setMinShare] = useState(String((channel?.min_load_share ?? 0) * 100));
  const [tagText, setTagText] = useState(formatLabels(channel?.tags));
  const [labelText, setLabelText] = useState(formatLabels(channel?.labels));
  const tags = parseLabels(tagText);
  const labels = parseLabels(labelText);
  const [events, setEvents] = useState<ChannelEvent[]>(channel?.events ?? DEFAULT_EVENTS);
  const [quietStart, setQuietStart] = useState(String(channel?.quiet_start_hour ?? ''));
  const [quietEnd, setQuietEnd] = useState(String(channel?.quiet_end_hour ?? ''));
  const [enabled, setEnabled] = useState(channel?.enabled ?? true);
  const save = useSaveChannel(onDone);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if ('error' in tags || 'error' in labels) return;
    const body: ChannelSave = {
      type,
      name: name.trim(),
      url: url.trim(),
      instances: splitList(instances),
      min_load_share: Number(minShare || 0) / 100,
      tags,
      labels,
      events,
      quiet_start_hour: hourOrNull(quietStart),
      quiet_end_hour: hourOrNull(quietEnd),
      enabled,
    };
    if (!channel) {
      save.mutate({ body });
      return;
    }
    const { url: newUrl, ...rest } = body;
    save.mutate({ id: channel.id, body: newUrl ? body : rest });
  }

  function toggle(item: ChannelEvent, on: boolean) {
    setEvents(on ? [...events, item] : events.filter((e) => e !== item));
  }

  return (
    <form
      className="settings-form"
      aria-label={channel ? `Edit ${channel.name}` : 'Add a channel'}
      onSubmit={submit}
    >
      <label>
        Type
        <select value={type} onChange={(event) => setType(event.target.value as ChannelType)}>
          {TYPES.map((item) => (
            <option key={item} value={item}>
              {item}
            </option>
          ))}
        </select>
      </label>
      <label>
        Name
        <input required value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <label>
        Webhook URL{channel ? ' (blank keeps it)' : ''}
        <input
          required={!channel}
          type="url"
          placeholder={channel?.url ?? 'https://hooks.slack.com/services/…'}
          value={url}
          onChange={(event) => setUrl(event.target.value)}
        />
      </label>
      <label>
        Instances (blank: all)
        <input value={instances} onChange={(event) => setInstances(event.target.value)} />
      </label>
      <label>
        Only queries with tags (blank: any)
        <input
          placeholder="team=payments"
          value={tagText}
          onChange={(event) => setTagText(event.target.value)}
          aria-invalid={'error' in tags}
          data-testid="channel-tags"
        />
        {'error' in tags && <span className="form-error">{tags.error}</span>}
      </label>
      <label>
        Only instances with labels (blank: any)
        <input
          placeholder="environment=prod"
          value={labelText}
          onChange={(event) => setLabelText(event.target.value)}
          aria-invalid={'error' in labels}
          data-testid="channel-labels"
        />
        {'error' in labels && <span className="form-error">{labels.error}</span>}
      </label>
      <label>
        Min. load share (%)
        <input
          type="number"
          min={0}
          max={100}
          step="0.1"
          value={minShare}
          onChange={(event) => setMinShare(event.target.value)}
        />
      </label>
      <label>
        Quiet from (hour, UTC)
        <input
          type="number"
          min={0}
          max={23}
          value={quietStart}
          onChange={(event) => setQuietStart(event.target.value)}
        />
      </label>
      <label>
        Quiet until (hour, UTC)
        <input
          type="number"
          min={0}
          max={23}
          value={quietEnd}
          onChange={(event) => setQuietEnd(event.target.value)}
        />
      </label>
      {EVENTS.map((item) => (
        <label className="check" key={item} title={EVENT_HINTS[item]}>
          <input
            type="checkbox"
            checked={events.includes(item)}
            onChange={(event) => toggle(item, event.target.checked)}
          />
          {item.replace('_', ' ')}
        </label>
      ))}
      <label className="check">
        <input
          type="checkbox"
          checked={enabled}
          onChange={(event) => setEnabled(event.target.checked)}
        />
        Enabled
      </label>
      <MutationError error={save.error} testId="channel-form-error" />
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={save.isPending}>
          {channel ? 'Save' : 'Add channel'}
        </button>
        <button type="button" className="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Every delivery of a channel with each of its attempts (#11: retries must be visible). */
function Deliveries({ channelId }: { channelId: number }) {
  const deliveries = useQuery(deliveriesOptions(channelId));
  if (deliveries.isPending) return <p className="muted">Loading deliveries…</p>;
  if (deliveries.isError) return <MutationError error={deliveries.error} />;
  if (deliveries.data.length === 0) return <p className="muted">Nothing sent yet.</p>;
  return (
    <table className="data-table" data-testid="deliveries-table">
      <caption>Deliveries</caption>
      <thead>
        <tr>
          <th scope="col">Created (UTC)</th>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Attempt (UTC)</th>
          <th scope="col">HTTP</th>
          <th scope="col">Error</th>
          <th scope="col">Next retry (UTC)</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.data.flatMap((delivery) => {
          const attempts = delivery.attempts.length > 0 ? delivery.attempts : [null];
          return attempts.map((attempt, index) => (
            <tr key={`${delivery.id}-${index}`} data-testid="delivery-attempt">
              <td className="nowrap">{index === 0 ? formatInstant(delivery.created_at) : ''}</td>
              <td>{index === 0 ? `${delivery.event}: ${delivery.summary}` : ''}</td>
              <td>{index === 0 ? delivery.status : ''}</td>
              <td className="nowrap">
                {attempt ? formatInstant(attempt.attempted_at) : 'not tried yet'}
              </td>
              <td>{attempt?.status_code ?? '—'}</td>
              <td>{attempt?.error ?? (index === 0 ? delivery.last_error : null) ?? ''}</td>
              <td className="nowrap">
                {attempt?.next_retry_at
                  ? formatInstant(attempt.next_retry_at)
                  : !attempt && delivery.next_attempt_at
                    ? formatInstant(delivery.next_attempt_at)
                    : '—'}
              </td>
            </tr>
          ));
        })}
      </tbody>
    </table>
  );
}

function ChannelRow({ channel }: { channel: Channel }) {
  const [editing, setEditing] = useState(false);
  const [showDeliveries, setShowDeliveries] = useState(false);
  const test = useSendTestMessage(channel.id, () => setShowDeliveries(true));
  const remove = useDeleteChannel(channel.id);
  return (
    <>
      <tr data-testid="channel-row">
        <th scope="row">{channel.name}</th>
        <td>{channel.type}</td>
        <td>{channel.events.join(', ') || 'all'}</td>
        <td>
          {channel.instances.join(', ') || 'all'}
          {[formatLabels(channel.tags), formatLabels(channel.labels)]
            .filter(Boolean)
            .map((limit) => (
              <div key={limit} className="muted">
                {limit}
              </div>
            ))}
        </td>
        <td>{formatShare(channel.min_load_share)}</td>
        <td>
          {channel.quiet_start_hour !== null && channel.quiet_end_hour !== null
            ? `${channel.quiet_start_hour}:00–${channel.quiet_end_hour}:00`
            : 'none'}
        </td>
        <td>{channel.enabled ? 'yes' : 'no'}</td>
        <td>
          <RowActions
            test={test}
            testLabel="Send test message"
            testPendingLabel="Sending…"
            extra={
              <button
                type="button"
                className="button button-small"
                onClick={() => setShowDeliveries(!showDeliveries)}
              >
                Deliveries
              </button>
            }
            onEdit={() => setEditing(!editing)}
            remove={remove}
            confirmDelete={`Delete channel ${channel.name}?`}
          />
        </td>
      </tr>
      {(editing || showDeliveries || test.data || test.error || remove.error) && (
        <tr>
          <td colSpan={8}>
            {editing && <ChannelForm channel={channel} onDone={() => setEditing(false)} />}
            {test.data && (
              <p className="result-panel" data-testid="test-message-result">
                {test.data.delivered ? (
                  <strong className="ok">Delivered</strong>
                ) : (
                  <strong className="not-ok">Not delivered</strong>
                )}
                {test.data.status_code !== null && ` (HTTP ${test.data.status_code})`} in{' '}
                {test.data.duration_ms} ms{test.data.error && `: ${test.data.error}`}
              </p>
            )}
            <MutationError error={test.error} />
            <MutationError error={remove.error} />
            {showDeliveries && <Deliveries channelId={channel.id} />}
          </td>
        </tr>
      )}
    </>
  );
}

/** Chat channels (admin only): where regressions and suggestions are posted. */
export function ChannelsCard() {
  const channels = useQuery(channelsOptions());
  const [adding, setAdding] = useState(false);
  return (
    <ListCard
      title="Channels"
      query={channels}
      testId="channels"
      empty="No chat channels yet: add one to get regressions in Slack, Teams or a webhook."
      actions={
        adding ? (
          <ChannelForm onDone={() => setAdding(false)} />
        ) : (
          <button type="button" className="button" onClick={() => setAdding(true)}>
            Add channel
          </button>
        )
      }
    >
      {(items) => (
        <table className="data-table" data-testid="channels-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Events</th>
              <th scope="col">Instances</th>
              <th scope="col">Min. load share</th>
              <th scope="col">Quiet hours (UTC)</th>
              <th scope="col">Enabled</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((channel) => (
              <ChannelRow key={channel.id} channel={channel} />
            ))}
          </tbody>
        </table>
      )}
    </ListCard>
  );
}
