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
// The closed vocabularies of /queries, as the backend's schema lists them.
export type QuerySortKey = NonNullable<TopQueriesParams['sort']>;
export type SortOrder = NonNullable<TopQueriesParams['order']>;
export type GroupBy = NonNullable<TopQueriesParams['group_by']>;
export type TopQueryRow = TopQueries['rows'][number];
export type QueryTotals = TopQueries['totals'];
export type GroupRow = NonNullable<TopQueries['groups']>[number];
export type SparkPoint = TopQueryRow['sparkline'][number];
export type Filters = JsonOk<'list_filters'>;
export type FilterValue = Filters['schema'][number];
export type ScopeQuery = NonNullable<operations['list_filters']['parameters']['query']>;
export type QueryDetail = JsonOk<'get_query'>;
export type MetricStat = QueryDetail['metrics'][number];
export type SeriesPoint = QueryDetail['series'][number];
export type BreakdownRow = NonNullable<QueryDetail['breakdown'][string]>[number];
export type QueryExamples = JsonOk<'list_query_examples'>;
export type ClassCap = JsonOk<'list_class_caps'>[number];
export type QueryStages = JsonOk<'get_query_stages'>;
export type StageQueries = JsonOk<'list_stage_queries'>;
export type StageQueryRow = StageQueries['rows'][number];
export type QueryExample = QueryExamples['examples'][number];
type QueryOf<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
export type StageQueriesParams = QueryOf<'list_stage_queries'>;

export type Annotation = JsonOk<'list_annotations'>[number];
export type AnnotationsParams = QueryOf<'list_annotations'>;
export type AnnotationCreate = NonNullable<
  operations['create_annotation']['requestBody']
>['content']['application/json'];
export type AnnotationImpact = JsonOk<'get_annotation_impact'>;
export type ImpactQuery = AnnotationImpact['queries'][number];
export type ImpactMetric = NonNullable<ImpactQuery['metrics'][string]>;
export type ImpactVerdict = ImpactQuery['verdict'];
export type ImpactMetricName =
  'load' | 'count' | 'avg_latency' | 'p95_latency' | 'rows_examined_per_call';
export type ExplainRun = JsonOk<'get_explain'>;
export type ProfileRun = JsonOk<'get_profile'>;
export type SuggestionList = JsonOk<'list_suggestions'>;
export type Suggestion = SuggestionList['suggestions'][number];
export type SuggestionPatch = NonNullable<
  operations['update_suggestion']['requestBody']
>['content']['application/json'];
export type Instance = JsonOk<'list_instances'>[number];
export type TableSnapshot = JsonOk<'get_table_snapshot'>;
export type IndexPlanList = JsonOk<'get_index_plan'>;
export type TablePlan = IndexPlanList['plans'][number];
export type PlannedIndex = TablePlan['adds'][number];
export type ServedQuery = PlannedIndex['served'][number];
export type Channel = JsonOk<'list_channels'>[number];
export type TableWorkload = JsonOk<'list_table_workload'>;
export type TableWorkloadRow = TableWorkload['tables'][number];
export type TableQuery = TableWorkloadRow['queries'][number];
export type StatisticsCoverage = NonNullable<TableWorkload['coverage']>;
export type UserWorkload = JsonOk<'list_user_workload'>;
export type UserWorkloadRow = UserWorkload['users'][number];
export type IndexReview = JsonOk<'review_indexes'>;
export type IndexFinding = IndexReview['findings'][number];
export type IndexUsage = NonNullable<IndexReview['indexes']>[number];
export type WorkloadRange = QueryOf<'list_table_workload'>;
export type AgentSource = JsonOk<'list_agent_sources'>[number];
export type Regression = JsonOk<'list_regressions'>['regressions'][number];
export type RegressionsParams = QueryOf<'list_regressions'>;

type JsonCreated<Op extends keyof operations> = operations[Op]['responses'] extends {
  201: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;
type BodyOf<Op extends keyof operations> = NonNullable<
  operations[Op]['requestBody']
>['content']['application/json'];

export type LoginResult = JsonOk<'login'>;
export type SignInOptions = JsonOk<'sign_in_options'>;
export type InstanceCreate = BodyOf<'create_instance'>;
export type InstanceUpdate = BodyOf<'update_instance'>;
export type ConnectionTest = JsonOk<'test_instance_connection'>;
export type ChannelSave = BodyOf<'create_channel'>;
export type ChannelUpdate = BodyOf<'update_channel'>;
export type ChannelType = ChannelSave['type'];
export type ChannelTestResult = JsonOk<'send_test_message'>;
export type Delivery = JsonOk<'list_channel_deliveries'>[number];
export type TokenInfo = JsonOk<'list_tokens'>[number];
export type TokenCreate = BodyOf<'create_token'>;
export type TokenCreated = JsonCreated<'create_token'>;
export type User = JsonOk<'list_users'>[number];
export type UserCreate = BodyOf<'create_user'>;
export type UserUpdate = BodyOf<'update_user'>;
export type Role = User['role'];
export type PasswordResetResult = JsonOk<'reset_user_password'>;
export type SessionsEnded = JsonOk<'end_user_sessions'>;
export type AuditEntry = JsonOk<'list_audit_entries'>[number];
