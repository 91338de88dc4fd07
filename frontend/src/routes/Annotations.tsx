import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useMemo, useState } from 'react';
import { Link } from 'react-router';
import { annotationsOptions, useCreateAnnotation, useDeleteAnnotation } from '../api/annotations';
import { errorMessage } from '../api/errors';
import type { Annotation } from '../api/types';
import { RangePicker } from '../components/Controls/RangePicker';
import { EmptyState } from '../components/Status/EmptyState';
import { ErrorState } from '../components/Status/ErrorState';
import { LoadingState } from '../components/Status/LoadingState';
import { useHasScope } from '../hooks/useMe';
import { useUrlState } from '../hooks/useUrlState';
import { formatInstant } from '../lib/format';
import {
  parseAnnotations,
  rangeLabel,
  scopeToParams,
  serializeAnnotations,
} from '../lib/viewState';

/** "a, b ,, c" -> ["a", "b", "c"] */
export function splitList(text: string): string[] {
  return [
    ...new Set(
      text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean),
    ),
  ];
}

function isoFromLocal(value: string): string | undefined {
  if (!value) return undefined;
  const ms = Date.parse(`${value}:00Z`);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function aDayAhead(): string {
  return new Date(Date.now() + 86_400_000).toISOString();
}

/** Annotations of a range, newest first, with a form to add one. */
export function Annotations() {
  const [state, setState] = useUrlState(parseAnnotations, serializeAnnotations);
  // Viewers (read only) do not see what the API would refuse them.
  const canAnnotate = useHasScope('annotate');
  // Presets start relative (`now-7d`) and end a day ahead, so that annotations made just
  // now (or scheduled) are listed; the end moves on when one is added here.
  const [until, setUntil] = useState(aDayAhead);
  const bounds = useMemo(() => {
    const { from, to } = scopeToParams({ range: state.range, instances: [] });
    return { from, to: to ?? until };
  }, [state.range, until]);
  const query = useQuery(
    annotationsOptions({ ...bounds, ...(state.tag !== undefined && { tag: [state.tag] }) }),
  );
  const sorted = useMemo(
    () => [...(query.data ?? [])].sort((a, b) => Date.parse(b.time) - Date.parse(a.time)),
    [query.data],
  );

  return (
    <section className="annotations" aria-labelledby="annotations-title">
      <div className="page-header">
        <div>
          <h1 id="annotations-title">Annotations</h1>
          <p className="range">
            {rangeLabel(state.range)}
            {state.tag && (
              <>
                {' '}
                · tag <code>{state.tag}</code>{' '}
                <button
                  type="button"
                  className="link-button"
                  onClick={() => setState({ range: state.range })}
                >
                  clear
                </button>
              </>
            )}
          </p>
        </div>
        <div className="toolbar">
          <RangePicker
            range={state.range}
            onChange={(range) =>
              setState({ range, ...(state.tag !== undefined && { tag: state.tag }) })
            }
          />
        </div>
      </div>
      {canAnnotate && <CreateAnnotation onCreated={() => setUntil(aDayAhead())} />}
      {query.status === 'pending' && <LoadingState label="Loading annotations…" />}
      {query.status === 'error' && (
        <ErrorState
          title="Could not load annotations"
          message={errorMessage(query.error)}
          onRetry={() => void query.refetch()}
          testId="annotations-error"
        />
      )}
      {query.status === 'success' && sorted.length === 0 && (
        <EmptyState title="No annotations in this range." testId="annotations-empty">
          <p>
            Mark deploys and schema changes from CI: <code>quanta annotate "Deploy v42"</code>.
          </p>
        </EmptyState>
      )}
      {sorted.length > 0 && (
        <table
          className="data-table annotations-table"
          aria-busy={query.isFetching}
          data-testid="annotations-table"
        >
          <colgroup>
            <col className="col-when" />
            <col />
            <col className="col-tags" />
            <col className="col-instances" />
            <col className="col-by" />
            <col className="col-actions" />
          </colgroup>
          <thead>
            <tr>
              <th scope="col">When (UTC)</th>
              <th scope="col">Text</th>
              <th scope="col">Tags</th>
              <th scope="col">Instances</th>
              <th scope="col">By</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {sorted.map((annotation) => (
              <AnnotationRow
                key={annotation.id}
                annotation={annotation}
                canDelete={canAnnotate}
                onTag={(tag) => setState({ range: state.range, tag })}
              />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function AnnotationRow({
  annotation,
  canDelete,
  onTag,
}: {
  annotation: Annotation;
  canDelete: boolean;
  onTag: (tag: string) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const remove = useDeleteAnnotation(annotation.id);
  return (
    <tr data-testid="annotation-row">
      <td className="nowrap">
        {formatInstant(annotation.time)}
        {annotation.end_time && <> – {formatInstant(annotation.end_time)}</>}
      </td>
      <td>
        <Link to={`/annotations/${annotation.id}`} data-testid="annotation-impact-link">
          {annotation.text}
        </Link>
      </td>
      <td>
        {annotation.tags.map((tag) => (
          <button key={tag} type="button" className="tag" onClick={() => onTag(tag)}>
            {tag}
          </button>
        ))}
      </td>
      <td>{annotation.instances.length === 0 ? 'all' : annotation.instances.join(', ')}</td>
      <td className="muted">{annotation.created_by}</td>
      <td>
        <div className="actions">
          <Link className="button button-small" to={`/annotations/${annotation.id}`}>
            Impact
          </Link>
          {!canDelete ? null : confirming ? (
            <>
              <button
                type="button"
                className="button button-small button-danger"
                onClick={() => remove.mutate()}
                disabled={remove.isPending}
              >
                Confirm delete
              </button>
              <button
                type="button"
                className="button button-small"
                onClick={() => setConfirming(false)}
              >
                Keep
              </button>
            </>
          ) : (
            <button
              type="button"
              className="button button-small"
              onClick={() => setConfirming(true)}
            >
              Delete
            </button>
          )}
          {remove.isError && <span className="form-error">{errorMessage(remove.error)}</span>}
        </div>
      </td>
    </tr>
  );
}

function CreateAnnotation({ onCreated }: { onCreated: () => void }) {
  const [text, setText] = useState('');
  const [tags, setTags] = useState('');
  const [instances, setInstances] = useState('');
  const [time, setTime] = useState('');
  const [endTime, setEndTime] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const create = useCreateAnnotation(() => {
    setText('');
    setTags('');
    setInstances('');
    setTime('');
    setEndTime('');
    onCreated();
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setProblem(null);
    if (text.trim() === '') return setProblem('Say what happened, e.g. "Deploy v42".');
    const start = isoFromLocal(time);
    const end = isoFromLocal(endTime);
    if (end !== undefined && Date.parse(end) <= Date.parse(start ?? new Date().toISOString())) {
      return setProblem('The end must be after the start.');
    }
    create.mutate({
      text: text.trim(),
      tags: splitList(tags),
      instances: splitList(instances),
      ...(start !== undefined && { time: start }),
      ...(end !== undefined && { end_time: end }),
    });
  }

  return (
    <form className="card create-annotation" onSubmit={submit} aria-label="New annotation">
      <h2>New annotation</h2>
      <div className="form-grid">
        <label className="wide">
          Text
          <input
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="Deploy v42, ALTER TABLE orders ADD INDEX…"
            data-testid="annotation-text"
          />
        </label>
        <label>
          <span>
            Tags <span className="muted">(comma-separated)</span>
          </span>
          <input value={tags} onChange={(e) => setTags(e.target.value)} placeholder="deploy" />
        </label>
        <label>
          <span>
            Instances <span className="muted">(empty: all)</span>
          </span>
          <input value={instances} onChange={(e) => setInstances(e.target.value)} />
        </label>
        <label>
          Time (UTC, empty: now)
          <input type="datetime-local" value={time} onChange={(e) => setTime(e.target.value)} />
        </label>
        <label>
          End (UTC, optional)
          <input
            type="datetime-local"
            value={endTime}
            onChange={(e) => setEndTime(e.target.value)}
          />
        </label>
      </div>
      <div className="form-actions">
        <button
          type="submit"
          className="button button-primary"
          disabled={create.isPending}
          data-testid="annotation-create"
        >
          {create.isPending ? 'Adding…' : 'Add annotation'}
        </button>
        {create.isSuccess && <span role="status">Added.</span>}
        {(problem ?? create.isError) && (
          <span className="form-error" role="alert">
            {problem ?? errorMessage(create.error)}
          </span>
        )}
      </div>
    </form>
  );
}
