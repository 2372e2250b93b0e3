// The API's types, as the UI imports them: every module imports from here,
// never from types.ts directly, so there is one place that names them.
//
// INTERIM: frontend/src/lib/api/types.ts (generated from the Go API types)
// has not landed yet. Until it does, these declarations mirror the Go types
// they name (backend/memory, backend/httpapi, backend/steward, backend/store,
// backend/search, backend/noise, backend/capture) field for field, JSON names
// as the Go tags give them. When types.ts lands, replace this file's body by
// re-exports from './types'.

export type Kind = string;
export type MemoryType = string;
export type Verdict = 'stored' | 'updated' | 'merged' | 'skipped-duplicate' | 'rejected';

/** memory.Memory */
export interface Memory {
  id: string;
  text: string;
  kind: Kind;
  type: MemoryType;
  project?: string;
  source?: string;
  surface?: string;
  importance: number;
  pinned?: boolean;
  access_count: number;
  reinforced_count: number;
  feedback_sum: number;
  feedback_n: number;
  hits?: string[];
  created_at: string;
  updated_at: string;
  last_accessed?: string;
  last_reinforced_at?: string;
  cooldown_until?: string;
  supersedes?: string;
  superseded_by?: string;
  extends_source?: string;
  content_hash: string;
  embedding_model?: string;
}

/** memory.ScoreBreakdown */
export interface ScoreBreakdown {
  relevance: number;
  vector_rank?: number;
  text_rank?: number;
  importance: number;
  recency: number;
  access: number;
  anti_sticky: number;
  kind_boost: number;
  surface: number;
  project_boost: number;
  feedback: number;
  keyword: number;
  composite: number;
}

/** memory.Hit */
export interface Hit {
  memory: Memory;
  score: number;
  breakdown: ScoreBreakdown;
}

/** memory.StageTiming */
export interface StageTiming {
  stage: string;
  duration_ns: number;
}

/** memory.Decision */
export interface Decision {
  id: string;
  session_id?: string;
  turn?: number;
  verdict: Verdict;
  stage: string;
  reason: string;
  scores?: Record<string, number>;
  timings?: StageTiming[];
  memory_ids?: string[];
  chunks?: number;
  at: string;
  preview?: string;
}

/** httpapi.DecisionEntry */
export interface DecisionEntry extends Decision {
  user?: string;
  assistant?: string;
  project?: string;
  source?: string;
}

/** httpapi.SearchRequest */
export interface SearchRequest {
  query: string;
  project?: string;
  k?: number;
  mode?: string;
  kinds?: string[];
}

/** httpapi.ListedMemory: a memory with the list's computed columns. */
export interface ListedMemory extends Memory {
  stickiness: number;
  age_days: number;
  snoozed: boolean;
}

/** httpapi.ListResponse */
export interface ListResponse {
  memories: ListedMemory[] | null;
  total: number;
}

/** httpapi.EditResult */
export interface EditResult {
  memory: ListedMemory;
  previous?: string;
}

/** httpapi.MemoryHistory */
export interface MemoryHistory {
  id: string;
  versions: Memory[] | null;
  merged: TrashedMemory[] | null;
  truncated?: boolean;
}

/** httpapi.MemoryEvent: the payload of a "memory" event. */
export interface MemoryEvent {
  op: string;
  ids: string[] | null;
  memory?: Memory;
}

/** httpapi.StewardEvent */
export interface StewardEvent {
  op: string;
  plan_id?: string;
  run_id?: string;
  scope?: string;
  scheduled?: boolean;
  counts: Record<string, number> | null;
  actions: number;
  trashed?: number;
  skipped?: number;
  error?: string;
}

/** httpapi.StatsEvent */
export interface StatsEvent {
  memories: number;
  capturing: boolean;
  today: Record<string, number> | null;
  embedder: string;
  embedder_degraded: boolean;
  warnings: number;
  subscribers: number;
}

/** httpapi.ResetEvent */
export interface ResetEvent {
  reason: string;
}

export interface NameCount {
  name: string;
  count: number;
}

export interface DayCount {
  day: string;
  count: number;
}

/** httpapi.FilterBucket */
export interface FilterBucket {
  hour: string;
  total: number;
  verdicts: Record<string, number> | null;
  rejected: Record<string, number> | null;
}

/** httpapi.Overview */
export interface Overview {
  at: string;
  memories: number;
  snoozed: number;
  superseded: number;
  pinned: number;
  by_kind: NameCount[] | null;
  by_project: NameCount[] | null;
  other_projects: number;
  other_memories: number;
  store_bytes: number;
  created_per_day: DayCount[] | null;
  recall: RecallStats & { per_session: number };
  filter: FilterBucket[] | null;
  embedder: { model: string; reason?: string; degraded: boolean };
  judge: {
    enabled: boolean; name?: string; calls_last_hour: number; calls_last_day: number;
    max_per_hour: number; max_per_day: number; tokens: number; exhausted: boolean;
  };
  capture: CaptureState;
  warnings: { code: string; message: string }[] | null;
}

/** httpapi.ConfigView (config.Config is kept loose: it is large and nested). */
export interface ConfigView {
  config: Record<string, unknown>;
  path?: string;
  runtime: string[] | null;
}

/** httpapi.ConfigUpdate */
export interface ConfigUpdate extends ConfigView {
  changed: string[] | null;
  applied: string[] | null;
  needs_restart: string[] | null;
  saved: boolean;
  note?: string;
}

/** httpapi.ThresholdFlip */
export interface ThresholdFlip {
  decision_id: string;
  score: number;
  verdict: string;
  preview?: string;
}

/** httpapi.ThresholdPreview */
export interface ThresholdPreview {
  current: number;
  proposed: number;
  scored: number;
  now_rejected: number;
  now_passed: number;
  rejected_examples: ThresholdFlip[] | null;
  passed_examples: ThresholdFlip[] | null;
}

/** store.Info */
export interface StoreInfo {
  dir: string;
  embedding_model: string;
  dim: number;
  count: number;
  seq: number;
  format_version: number;
  repaired_on_open: number;
  warnings?: string[];
}

/** httpapi.PipelineStats */
export interface PipelineStats {
  content_gate: boolean;
  noise_buffer: number;
  judge?: string;
  judge_calls_last_hour: number;
  judge_calls_last_day: number;
  judge_max_per_hour: number;
  judge_max_per_day: number;
  judge_tokens: number;
  decisions: Record<string, number>;
}

/** search.RecallStats */
export interface RecallStats {
  requests: number;
  searches: number;
  skipped_tool_loop: number;
  skipped_repeat: number;
  empty: number;
  given: number;
  sessions: number;
}

/** capture.Stats */
export interface CaptureStats {
  requests: number;
  captured: number;
  dropped: number;
  not_captured_status: number;
  upstream_errors: number;
  too_large: number;
  paused_skipped: number;
  excluded: number;
  unparsed: number;
  handler_errors: number;
  handler_panics: number;
  handled: number;
  queue_len: number;
  queue_cap: number;
  queue_bytes: number;
  enabled: boolean;
  last_error?: string;
  last_capture?: string;
}

/** httpapi.CaptureState */
export interface CaptureState {
  enabled: boolean;
  exclude_projects: string[] | null;
  anthropic_upstream: string;
  openai_upstream: string;
  stats: CaptureStats | null;
}

/** httpapi.CaptureUpdate */
export interface CaptureUpdate {
  enabled?: boolean;
  exclude_projects?: string[];
  exclude?: string[];
  include?: string[];
}

/** httpapi.Stats */
export interface Stats {
  version: string;
  pid: number;
  started_at: string;
  listen?: string;
  store: StoreInfo;
  embedder: string;
  embedder_reason?: string;
  by_kind: Record<string, number> | null;
  by_project: Record<string, number> | null;
  snoozed: number;
  superseded: number;
  pipeline: PipelineStats;
  capture?: CaptureState;
  recall: RecallStats;
}

/** noise.State */
export interface NoiseScorerState {
  threshold: number;
  quality_prototypes: string[] | null;
  noise_prototypes: string[] | null;
  learned: number;
  buffer_len: number;
  buffer_size: number;
  recent: number;
  rebuild_every: number;
  until_rebuild: number;
  rebuilds: number;
  built_at: string;
  recent_scores: number[] | null;
  last_error?: string;
}

/** httpapi.NoiseState */
export interface NoiseState {
  scorer: NoiseScorerState | null;
  judge?: string;
  judge_stats?: Record<string, unknown> | null;
}

/** search.RecallRequest (the fields the UI sends) */
export interface RecallRequest {
  session_id: string;
  prompt: string;
  project?: string;
  k?: number;
}

/** search.Recalled */
export interface Recalled {
  hits: Hit[] | null;
  context?: string;
  skipped?: string;
  already_given?: string[];
  given: number;
  warning?: string;
}

/** steward.PlanOptions */
export interface PlanOptions {
  project?: string;
  all?: boolean;
  ops?: string[];
  full_merge?: boolean;
}

/** steward.Snapshot */
export interface Snapshot {
  importance: number;
  cooldown_until?: string;
  access_count: number;
  reinforced_count: number;
  feedback_sum: number;
  feedback_n: number;
  hits: number;
  last_accessed?: string;
  last_reinforced_at?: string;
  text?: string;
  updated_at: string;
  trashed?: boolean;
}

/** steward.Action */
export interface Action {
  op: string;
  id: string;
  project?: string;
  kind: Kind;
  type: MemoryType;
  preview: string;
  before: Snapshot;
  after: Snapshot;
  survivor?: string;
  merged_ids?: string[];
  merged_before?: Snapshot[];
  kept_text?: string;
  similarity?: number;
  quality?: number;
  reason: string;
}

/** steward.Plan */
export interface Plan {
  id: string;
  created_at: string;
  scope: string;
  project?: string;
  all?: boolean;
  ops: string[];
  counts: Record<string, number>;
  scanned: number;
  duration_ns: number;
  events: number;
  max_hits: number;
  scored: boolean;
  merge_since?: string;
  merge_queried: number;
  actions: Action[] | null;
  refused?: Action[];
}

/** steward.Skip */
export interface Skip {
  op?: string;
  id: string;
  reason: string;
}

/** steward.Result */
export interface StewardResult {
  run_id: string;
  plan_id?: string;
  at: string;
  applied?: Action[];
  counts: Record<string, number>;
  trashed?: number;
  skipped?: Skip[];
}

/** httpapi.ApplyRequest */
export interface ApplyRequest {
  plan_id: string;
  ops?: string[];
}

/** store.TrashedMemory */
export interface TrashedMemory {
  memory: Memory;
  trashed_at: string;
  reason: string;
}

/** store.ImportReport */
export interface ImportReport {
  total: number;
  imported: number;
  duplicates: number;
  reembedded: number;
}

/** The JSON of every error answer (httpapi.errorBody). */
export interface ErrorBody {
  error: string;
  code: string;
  /** Field errors of a form (config), when the API gives them. */
  fields?: Record<string, string>;
}
