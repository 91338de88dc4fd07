import { type KeyboardEvent, type ReactNode } from 'react';
import type { ScopeQuery } from '../../api/types';
import { DETAIL_TABS, type DetailTab } from '../../lib/viewState';
import { EmptyState } from '../Status/EmptyState';
import { ExamplesTab } from './ExamplesTab';
import { ExplainTab } from './ExplainTab';
import { ProfileTab } from './ProfileTab';
import { SuggestionsTab } from './SuggestionsTab';
import { TablesTab } from './TablesTab';

const TAB_LABELS: Record<DetailTab, string> = {
  examples: 'Examples',
  explain: 'Explain',
  profile: 'Profile',
  tables: 'Tables',
  suggestions: 'Suggestions',
};

/** The instance a tab needs, or a note that there is none. */
function WithInstance({
  instance,
  children,
}: {
  instance: string | undefined;
  children: (instance: string) => ReactNode;
}) {
  if (instance === undefined) {
    return (
      <EmptyState title="Pick an instance">
        <p>This query ran on no instance in the range, so there is nowhere to collect it.</p>
      </EmptyState>
    );
  }
  return <>{children(instance)}</>;
}

/** The query's tabs (the one shown is in the URL), arrow keys moving between them. */
export function DetailTabs({
  tab,
  onTab,
  queryId,
  params,
  instance,
  schema,
  tables,
}: {
  tab: DetailTab;
  onTab: (tab: DetailTab) => void;
  queryId: string;
  params: ScopeQuery;
  instance: string | undefined;
  schema: string | undefined;
  tables: readonly string[];
}) {
  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const index = DETAIL_TABS.indexOf(tab);
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
    if (step === 0) return;
    event.preventDefault();
    const next = DETAIL_TABS[(index + step + DETAIL_TABS.length) % DETAIL_TABS.length];
    if (next) {
      onTab(next);
      document.getElementById(`tab-${next}`)?.focus();
    }
  }
  return (
    <section className="card tabs-card">
      <div className="tabs" role="tablist" aria-label="Query details" onKeyDown={onKeyDown}>
        {DETAIL_TABS.map((name) => (
          <button
            key={name}
            id={`tab-${name}`}
            type="button"
            role="tab"
            aria-selected={tab === name}
            aria-controls={`panel-${name}`}
            tabIndex={tab === name ? 0 : -1}
            className={tab === name ? 'tab tab-active' : 'tab'}
            onClick={() => onTab(name)}
            data-testid={`tab-${name}`}
          >
            {TAB_LABELS[name]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel">
        {tab === 'examples' && <ExamplesTab queryId={queryId} params={params} />}
        {tab === 'explain' && (
          <WithInstance instance={instance}>
            {(name) => <ExplainTab queryId={queryId} instance={name} />}
          </WithInstance>
        )}
        {tab === 'profile' && (
          <WithInstance instance={instance}>
            {(name) => (
              <ProfileTab
                queryId={queryId}
                instance={name}
                range={{
                  ...(params.from && { from: params.from }),
                  ...(params.to && { to: params.to }),
                }}
              />
            )}
          </WithInstance>
        )}
        {tab === 'tables' && (
          <WithInstance instance={instance}>
            {(name) => <TablesTab tables={tables} instance={name} schema={schema} />}
          </WithInstance>
        )}
        {tab === 'suggestions' && (
          <WithInstance instance={instance}>
            {(name) => <SuggestionsTab queryId={queryId} instance={name} />}
          </WithInstance>
        )}
      </div>
    </section>
  );
}
