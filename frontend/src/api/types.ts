// Names for the response shapes this UI reads, taken from the operations (operationId)
// rather than from component schema names, which the backend may rename freely.
import type { operations } from './schema';

type JsonOk<Op extends keyof operations> = operations[Op]['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

export type Me = JsonOk<'whoami'>;
export type TopQueries = JsonOk<'list_queries'>;
export type TopQueriesParams = NonNullable<operations['list_queries']['parameters']['query']>;
export type TopQueryRow = TopQueries['rows'][number];
export type QueryTotals = TopQueries['totals'];
export type SparkPoint = TopQueryRow['sparkline'][number];
export type Filters = JsonOk<'list_filters'>;
export type FilterValue = Filters['schema'][number];
export type ScopeQuery = NonNullable<operations['list_filters']['parameters']['query']>;
export type QueryDetail = JsonOk<'get_query'>;
export type MetricStat = QueryDetail['metrics'][number];
export type SeriesPoint = QueryDetail['series'][number];
export type BreakdownRow = NonNullable<QueryDetail['breakdown'][string]>[number];
export type QueryExamples = JsonOk<'list_query_examples'>;
export type QueryExample = QueryExamples['examples'][number];
