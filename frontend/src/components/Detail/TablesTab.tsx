import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { errorMessage } from '../../api/errors';
import { instancesOptions, tableSnapshotOptions } from '../../api/instances';
import type { TableSnapshot } from '../../api/types';
import { formatInstant } from '../../lib/format';
import { tableHref } from '../../lib/workload';
import { EmptyState } from '../Status/EmptyState';
import { ErrorState } from '../Status/ErrorState';
import { LoadingState } from '../Status/LoadingState';
import { MissingPrerequisite } from './MissingPrerequisite';
import { missingPrerequisite } from './prerequisites';
import { snapshotFacts, snapshotSections } from './tableView';
import { isNotCollected } from './tabState';

/** "orders" -> "shop.orders" with the query's schema; "shop.orders" stays. */
export function qualifyTable(name: string, schema: string | undefined): string | undefined {
  if (name.includes('.')) return name;
  return schema ? `${schema}.${name}` : undefined;
}

/** The latest snapshot of each table the query reads, on an instance. */
export function TablesTab({
  tables,
  instance,
  schema,
}: {
  tables: readonly string[];
  instance: string;
  schema: string | undefined;
}) {
  const instances = useQuery(instancesOptions());
  if (tables.length === 0) {
    return <EmptyState title="This query reads no tables." />;
  }
  if (instances.status === 'pending') return <LoadingState label="Loading instances…" />;
  if (instances.status === 'error') {
    return <ErrorState title="Could not load instances" message={errorMessage(instances.error)} />;
  }
  const found = instances.data.find((candidate) => candidate.name === instance);
  if (!found) {
    return (
      <EmptyState title={`Instance ${instance} is not registered.`}>
        <p>Register it with a DSN to read its table definitions.</p>
      </EmptyState>
    );
  }
  const missing = missingPrerequisite('tables', found);
  if (missing) {
    return (
      <EmptyState title="No table definitions." testId="tables-missing-prerequisite">
        <MissingPrerequisite missing={missing} />
      </EmptyState>
    );
  }
  return (
    <div className="tables-tab" data-testid="tables">
      {tables.map((table) => {
        const qualified = qualifyTable(table, schema);
        return qualified ? (
          <TableCard key={table} instanceId={found.id} table={qualified} />
        ) : (
          <p key={table} className="muted">
            {table}: unknown schema
          </p>
        );
      })}
    </div>
  );
}

function TableCard({ instanceId, table }: { instanceId: number; table: string }) {
  const query = useQuery(tableSnapshotOptions(instanceId, table));
  return (
    <section className="card">
      <h3>
        <code>{table}</code>
      </h3>
      <p>
        <Link to={tableHref(instanceId, table)} data-testid="table-workload-link">
          Reads, writes, indexes and queries of this table →
        </Link>
      </p>
      {query.status === 'pending' && <LoadingState label="Loading…" />}
      {query.status === 'error' &&
        (isNotCollected(query.error) ? (
          <p className="muted">
            Not collected yet: snapshots are taken when an EXPLAIN or index advice runs.
          </p>
        ) : (
          <p className="form-error">{errorMessage(query.error)}</p>
        ))}
      {query.data && <Snapshot snapshot={query.data} />}
    </section>
  );
}

function Snapshot({ snapshot }: { snapshot: TableSnapshot }) {
  const facts = snapshotFacts(snapshot.document);
  const sections = snapshotSections(snapshot.document);
  return (
    <>
      <p className="muted">
        Taken {formatInstant(snapshot.taken_at)} UTC · last changed{' '}
        {formatInstant(snapshot.changed_at)} UTC · {snapshot.server.flavor}{' '}
        {snapshot.server.version}
      </p>
      <dl className="table-info" data-testid="table-facts">
        {facts.map((fact) => (
          <div key={fact.label}>
            <dt>{fact.label}</dt>
            <dd>{fact.value}</dd>
          </div>
        ))}
      </dl>
      {sections.map((section) => (
        <section key={section.key} className="table-section" data-testid={`table-${section.key}`}>
          <h4>{section.title}</h4>
          {section.rows.length === 0 ? (
            <p className="muted">{section.empty}</p>
          ) : (
            <div className="scroll-x">
              <table className="data-table">
                <thead>
                  <tr>
                    {section.columns.map((column) => (
                      <th key={column} scope="col">
                        {column}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {section.rows.map((row, index) => (
                    <tr key={index}>
                      {section.columns.map((column) => (
                        <td key={column}>{row[column]}</td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      ))}
    </>
  );
}
