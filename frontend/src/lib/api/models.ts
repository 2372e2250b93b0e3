// The API's types, as the UI imports them: every module imports from here,
// never from types.ts directly, so there is one place that names them.
// types.ts is generated from the Go API types (go run ./cmd/tsgen); only
// what the generator cannot see is declared here: the JSON the Go side
// passes through as json.RawMessage (noise.State, capture.Stats) and the
// UI's own names.
import type * as gen from './types';

export type {
  Action, ApplyRequest, AutostartState, Build, CaptureUpdate, ConfigUpdate, ConfigView, DayCount, Decision, DecisionEntry,
  EditResult, ErrorBody, FilterBucket, Health, Hit, ImportReport, ListFacets, ListRequest, ListResponse, ListedMemory, Memory, MemoryEvent,
  MemoryHistory, MemoryPatch, NameCount, NoiseProjection, Overview, Plan, PlanOptions, RecallRequest, RecallStats, Recalled, ResetEvent,
  ProjectionPoint, ScoreBreakdown, SearchRequest, Skip, Snapshot, StageTiming, Stats, StatsEvent, StewardEvent, ThresholdFlip,
  ThresholdPreview, TrashedMemory, UndoRequest,
} from './types';
export type {
  SetupApplyRequest, SetupClient, SetupFile, SetupFileHash, SetupFileStatus, SetupList, SetupOptions, SetupPreview,
  SetupResult, SetupUndoRequest,
} from './types';

export type StoreInfo = gen.Info;
export type StewardResult = gen.Result;
export type StewardRun = gen.Run;
export type { EmbedderInfo, EmbedderQuery, ExportFileRequest, Job, OllamaInfo, OllamaModel, OpenAIInfo, PullRequest, ReembedRequest, WelcomeState } from './types';
export type { TeamSettings, TeamSettingsUpdate, TeamStatus } from './types';
export type { RecallDay, RecallEntry, RecallFeedback, RecallLogCleared, RecallLogStats, RecallMemory, RecallTop, Withheld } from './types';

/** The states of a Job (httpapi.Job* constants). */
export type JobState = 'running' | 'done' | 'failed' | 'canceled';

/** The verdicts of memory.Decision (memory.Verdict* constants). */
export type Verdict = 'stored' | 'updated' | 'merged' | 'skipped-duplicate' | 'rejected';

/** The kinds of a ProjectionPoint (httpapi.Point* constants). */
export type PointKind = 'quality' | 'noise' | 'learned' | 'stored' | 'rejected';

/** noise.State: NoiseState.scorer (a json.RawMessage on the Go side). */
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

/** capture.Stats: CaptureState.stats (a json.RawMessage on the Go side). */
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

/** httpapi.NoiseState with its scorer typed. */
export interface NoiseState extends Omit<gen.NoiseState, 'scorer'> {
  scorer: NoiseScorerState | null;
}

/** httpapi.CaptureState with its stats typed. */
export interface CaptureState extends Omit<gen.CaptureState, 'stats'> {
  stats: CaptureStats | null;
}
