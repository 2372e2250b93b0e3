// The one API client: every call to the daemon's /api/ goes through here,
// and only the stores (src/lib/stores) call it. Same-origin fetch with the
// browser's login cookie (in the Wails window no token is needed).
import type {
  ApplyRequest, AutostartState, CaptureState, ConfigUpdate, ConfigView, EditResult, MemoryHistory, Overview, ThresholdPreview, CaptureUpdate, DecisionEntry, Decision, ErrorBody, Hit,
  Health, ImportReport, ListRequest, ListResponse, Memory, MemoryPatch, NoiseProjection, NoiseState, Plan, PlanOptions, RecallRequest,
  Recalled, SearchRequest, Stats, StewardResult, StewardRun, TrashedMemory, UndoRequest,
} from './models';
import type { SetupApplyRequest, SetupList, SetupOptions, SetupPreview, SetupResult, SetupUndoRequest } from './models';
import type { EmbedderInfo, EmbedderQuery, ExportFileRequest, Job, PullRequest, ReembedRequest, WelcomeState } from './models';
import type { RecallEntry, RecallLogCleared, RecallLogStats } from './models';
import type { TeamSettings, TeamSettingsUpdate } from './models';

/** An error answer of the API, or a failure to reach it (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly fields: Record<string, string>;
  readonly method: string;
  readonly path: string;
  constructor(method: string, path: string, status: number, body: Partial<ErrorBody>) {
    super(body.error || (status ? `HTTP ${status}` : 'the memtray daemon does not answer'));
    this.name = 'ApiError';
    this.method = method;
    this.path = path;
    this.status = status;
    this.code = body.code ?? '';
    this.fields = body.fields ?? {};
  }
  get unauthorized(): boolean {
    return this.status === 401;
  }
  get offline(): boolean {
    return this.status === 0;
  }
}

export interface RequestOptions {
  body?: unknown;
  /** A raw body (import); sent as is with its own type. */
  raw?: Blob | string;
  signal?: AbortSignal;
  keepalive?: boolean;
}

/** fetch is looked up at call time so tests can replace it. */
export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  let body: BodyInit | undefined;
  if (opts.raw !== undefined) {
    body = opts.raw;
    headers['Content-Type'] = 'application/x-ndjson';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(path, {
      method, headers, body, credentials: 'same-origin', signal: opts.signal, keepalive: opts.keepalive,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(method, path, 0, { error: `the memtray daemon does not answer (${String(e)})` });
  }
  if (!res.ok) {
    let eb: Partial<ErrorBody> = {};
    const text = await res.text().catch(() => '');
    try {
      eb = JSON.parse(text) as ErrorBody;
    } catch {
      eb = { error: text.trim() || res.statusText };
    }
    throw new ApiError(method, path, res.status, eb);
  }
  if (res.status === 204) return undefined as T;
  const ct = res.headers.get('Content-Type') ?? '';
  if (!ct.includes('json')) return (await res.text()) as T;
  return (await res.json()) as T;
}

const enc = encodeURIComponent;

function query(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const api = {
  health: () => request<Health>('GET', '/api/health'),
  stats: () => request<Stats>('GET', '/api/stats'),
  overview: () => request<Overview>('GET', '/api/overview'),

  listMemories: (p: ListRequest = {}) => request<ListResponse>('GET', `/api/memories${query({ ...p })}`),
  getMemory: (id: string) => request<Memory>('GET', `/api/memories/${enc(id)}`),
  patchMemory: (id: string, patch: MemoryPatch) => request<EditResult>('PATCH', `/api/memories/${enc(id)}`, { body: patch }),
  history: (id: string) => request<MemoryHistory>('GET', `/api/memories/${enc(id)}/history`),
  deleteMemory: (id: string, keepalive = false) => request<void>('DELETE', `/api/memories/${enc(id)}`, { keepalive }),
  reinforce: (id: string) => request<Memory>('POST', `/api/memories/${enc(id)}/reinforce`),
  snooze: (id: string, days: number) => request<Memory>('POST', `/api/memories/${enc(id)}/snooze`, { body: { days } }),
  pin: (id: string, pinned: boolean) => request<Memory>('POST', `/api/memories/${enc(id)}/pin`, { body: { pinned } }),
  /** Moves a memory to a scope: shared with the team, or kept on this machine (issue 23). */
  setScope: (id: string, scope: 'team' | 'personal') => request<Memory>('POST', `/api/memories/${enc(id)}/scope`, { body: { scope } }),
  /** Changes the team's settings in the team database (a team admin's; issue 23). */
  setTeamSettings: (u: TeamSettingsUpdate) => request<TeamSettings>('PATCH', '/api/team/settings', { body: u }),
  markNoise: (id: string, keepalive = false) => request<void>('POST', `/api/memories/${enc(id)}/noise`, { keepalive }),
  search: (req: SearchRequest) => request<{ hits: Hit[] }>('POST', '/api/search', { body: req }),
  recall: (req: RecallRequest) => request<Recalled>('POST', '/api/recall', { body: req }),
  /** The recall log, newest first: one session's, and before an entry's seq to page back. */
  recallLog: (p: { session?: string; limit?: number; before?: number } = {}) => request<RecallEntry[] | null>('GET', `/api/recall/log${query(p)}`),
  recallStats: (days?: number) => request<RecallLogStats>('GET', `/api/recall/stats${query({ days })}`),
  /** Deletes every logged recall (those not yet written too); answers how many went. */
  clearRecallLog: () => request<RecallLogCleared>('DELETE', '/api/recall/log'),

  decisions: (limit = 500) => request<DecisionEntry[] | null>('GET', `/api/decisions${query({ limit })}`),
  keep: (decisionId: string) => request<Decision>('POST', `/api/decisions/${enc(decisionId)}/keep`),

  noise: () => request<NoiseState>('GET', '/api/noise'),
  noiseProjection: () => request<NoiseProjection>('GET', '/api/noise/projection'),
  previewThreshold: (threshold: number) =>
    request<ThresholdPreview>('POST', '/api/config/preview-threshold', { body: { content_threshold: threshold } }),

  capture: () => request<CaptureState>('GET', '/api/capture'),
  setCapture: (u: CaptureUpdate) => request<CaptureState>('POST', '/api/capture', { body: u }),
  config: () => request<ConfigView>('GET', '/api/config'),
  setConfig: (patch: Record<string, unknown>) => request<ConfigUpdate>('PUT', '/api/config', { body: patch }),
  welcome: () => request<WelcomeState>('GET', '/api/welcome'),
  finishWelcome: () => request<WelcomeState>('POST', '/api/welcome/done'),
  autostart: () => request<AutostartState>('GET', '/api/autostart'),
  setAutostart: (enabled: boolean) => request<AutostartState>('PUT', '/api/autostart', { body: { enabled } }),

  stewardPlan: (o: PlanOptions = {}) => request<Plan>('POST', '/api/steward/plan', { body: o }),
  stewardApply: (req: ApplyRequest) => request<StewardResult>('POST', '/api/steward/apply', { body: req }),
  stewardUndo: (req: UndoRequest = {}) => request<StewardResult>('POST', '/api/steward/undo', { body: req }),
  stewardRuns: () => request<StewardRun[] | null>('GET', '/api/steward/runs'),
  trash: () => request<TrashedMemory[] | null>('GET', '/api/trash'),
  restore: (ids: string[]) => request<{ restored: number }>('POST', '/api/trash/restore', { body: { ids } }),
  purgeTrash: (ids: string[]) => request<{ purged: number }>('POST', '/api/trash/purge', { body: { ids } }),

  setupList: () => request<SetupList>('GET', '/api/setup'),
  setupPreview: (client: string, o: SetupOptions = {}) => request<SetupPreview>('POST', `/api/setup/${enc(client)}/preview`, { body: o }),
  setupApply: (client: string, req: SetupApplyRequest) => request<SetupResult>('POST', `/api/setup/${enc(client)}/apply`, { body: req }),
  setupUndoPreview: (client: string) => request<SetupPreview>('POST', `/api/setup/${enc(client)}/undo/preview`),
  setupUndo: (client: string, req: SetupUndoRequest) => request<SetupResult>('POST', `/api/setup/${enc(client)}/undo`, { body: req }),

  exportText: () => request<string>('GET', '/api/export'),
  importFile: (data: Blob | string) => request<ImportReport>('POST', '/api/import', { raw: data }),
  exportFile: (req: ExportFileRequest = {}) => request<Job>('POST', '/api/export/file', { body: req }),
  importJob: (data: Blob | string) => request<Job>('POST', '/api/import/job', { raw: data }),

  /** The embedder's state; q names an OpenAI-compatible server to test instead of the configured one. */
  embedder: (q: EmbedderQuery = {}) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== '' && v !== 0) p.set(k, String(v));
    const qs = p.toString();
    return request<EmbedderInfo>('GET', qs ? `/api/embedder?${qs}` : '/api/embedder');
  },
  pullModel: (req: PullRequest = {}) => request<Job>('POST', '/api/embedder/pull', { body: req }),
  reembed: (req: ReembedRequest) => request<Job>('POST', '/api/embedder/reembed', { body: req }),
  jobs: () => request<Job[] | null>('GET', '/api/jobs'),
  cancelJob: (id: string) => request<Job>('POST', `/api/jobs/${enc(id)}/cancel`),
};

/** Where the browser downloads an export from (a plain link, cookie-authenticated). */
export const exportURL = '/api/export';
/** The event stream (see stores/events.ts). */
export const eventsURL = '/api/events';
