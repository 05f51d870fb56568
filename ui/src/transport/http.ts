// The HTTP transport: talks to `kip serve` (BRIEF §5). `POST /api/kip` is
// execute_kip; every other kip-api operation is `POST /api/<operation>`;
// `GET /api/events` is a server-sent event stream that fires after writes.
import { toReport, toWatchView } from './reports';
import {
  ApiFailure,
  type Change,
  type ChangeNotice,
  type ChangesRequest,
  type ChangesResponse,
  type ExecuteRequest,
  type ImportReportView,
  type ImportRequest,
  type KipResponse,
  type KnowledgeSchema,
  type NeighbourhoodRequest,
  type NeighbourhoodResponse,
  type NexusInfo,
  type JsonValue,
  type PathsRequest,
  type PathsResponse,
  type ResolveRequest,
  type ResolveResponse,
  type SettingsResponse,
  type Transport,
  type ValidateRequest,
  type ValidateResponse,
  type WatchView,
  type BackupRequest,
  type BackupResponse,
  type StoreCheck,
  type OperationName,
  type RequestOf,
  type ResponseOf,
} from './types';

const POLL_MS = 1500;
const SAFETY_POLL_MS = 5000;
/** The watched folder's status: at rest, and while a file is queued or importing. */
const WATCH_POLL_MS = 1500;
const WATCH_BUSY_POLL_MS = 300;

/** Who the cognitive trace names for this UI's requests (BRIEF §7):
 * `curator`, unless the settings chose another name (`kip.originator`). */
function originator(): string {
  try {
    return globalThis.localStorage?.getItem('kip.originator')?.trim() || 'curator';
  } catch {
    return 'curator';
  }
}

export class HttpTransport implements Transport {
  readonly kind = 'http' as const;
  constructor(private readonly base = '') {}

  private async post<T>(path: string, body: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-kip-originator': originator() },
        body: JSON.stringify(body ?? {}),
      });
    } catch (e) {
      throw new ApiFailure({
        code: 'API_IO',
        message: `cannot reach the KIP server: ${(e as Error).message}`,
        hint: 'Is `kip serve` still running?',
      });
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      throw new ApiFailure({
        code: response.status === 404 ? 'API_UNKNOWN_OPERATION' : 'API_BAD_REQUEST',
        message: `${path} answered ${response.status} ${response.statusText}`,
        hint: response.status === 404 ? 'This server does not offer that operation.' : text.slice(0, 200),
      });
    }
    // Non-KIP operations report failures as `{error: {...}}` with a non-200 status.
    if (!response.ok || (path !== '/api/kip' && isErrorObject(json))) {
      const error = (json as { error?: unknown })?.error;
      if (error && typeof error === 'object') throw new ApiFailure(error as ApiFailure['error']);
      throw new ApiFailure({
        code: response.status === 404 ? 'API_UNKNOWN_OPERATION' : 'API_BAD_REQUEST',
        message: `${path} answered ${response.status} ${response.statusText}`,
        hint: 'This server does not offer that operation.',
      });
    }
    return json as T;
  }

  /** `POST /api/<operation>` (`execute` is BRIEF §5's `POST /api/kip`). */
  call<K extends OperationName>(operation: K, body: RequestOf<K>): Promise<ResponseOf<K>> {
    return this.post(operation === 'execute' ? '/api/kip' : `/api/${operation}`, body ?? {});
  }

  execute(request: ExecuteRequest): Promise<KipResponse> {
    return this.call('execute', request);
  }
  validate(request: ValidateRequest): Promise<ValidateResponse> {
    return this.call('validate', request);
  }
  neighbourhood(request: NeighbourhoodRequest): Promise<NeighbourhoodResponse> {
    return this.call('neighbourhood', request);
  }
  schema(): Promise<KnowledgeSchema> {
    return this.call('schema', null);
  }
  async importFile(request: ImportRequest): Promise<ImportReportView> {
    try {
      return toReport(await this.call('import', request), request.file_name);
    } catch (e) {
      if (e instanceof ApiFailure) return toReport({ error: e.error }, request.file_name);
      throw e;
    }
  }
  info(): Promise<NexusInfo> {
    return this.call('info', null);
  }
  changes(request: ChangesRequest): Promise<ChangesResponse> {
    return this.call('changes', request);
  }
  resolveLogicProperties(request: ResolveRequest): Promise<ResolveResponse> {
    return this.call('resolve_logic_properties', request);
  }
  paths(request: PathsRequest): Promise<PathsResponse> {
    return this.call('paths', request);
  }
  settingsGet(prefix?: string): Promise<SettingsResponse> {
    return this.call('settings_get', prefix === undefined ? {} : { prefix });
  }
  settingsPut(key: string, value: JsonValue): Promise<SettingsResponse> {
    return this.call('settings_put', { key, value });
  }
  prefsGet(prefix?: string): Promise<SettingsResponse> {
    return this.call('prefs_get', prefix === undefined ? {} : { prefix });
  }
  prefsPut(key: string, value: JsonValue): Promise<SettingsResponse> {
    return this.call('prefs_put', { key, value });
  }
  async format(text: string): Promise<string> {
    return (await this.call('format', { text })).formatted;
  }
  async watchStatus(): Promise<WatchView> {
    return toWatchView(await this.call('watch_status', null));
  }
  checkStore(): Promise<StoreCheck> {
    return this.call('check_store', null);
  }
  backup(request: BackupRequest): Promise<BackupResponse> {
    return this.call('backup', request);
  }

  subscribe(onChange: (notice: ChangeNotice) => void): () => void {
    let stopped = false;
    let since: number | null = null;
    let buffer: Change[] = [];
    let flushTimer: ReturnType<typeof setTimeout> | null = null;
    let pollTimer: ReturnType<typeof setInterval> | null = null;

    // Changes arrive one event per write; a burst (an import) is delivered
    // as one notice so views reload once.
    const deliver = (changes: Change[], lastSeq: number, reset: boolean) => {
      if (!stopped) onChange({ last_seq: lastSeq, changes, reset });
    };
    const queue = (change: Change) => {
      if (since !== null && change.seq <= since) return;
      buffer.push(change);
      since = Math.max(since ?? 0, change.seq);
      if (flushTimer) return;
      flushTimer = setTimeout(() => {
        flushTimer = null;
        const batch = buffer;
        buffer = [];
        deliver(batch, since ?? 0, false);
      }, 120);
    };

    // Without an event stream: poll the change log.
    const pull = async () => {
      try {
        if (since === null) {
          since = (await this.info()).last_change_seq;
          return;
        }
        const r = await this.changes({ since });
        if (r.reset) {
          since = r.last_seq;
          deliver([], r.last_seq, true);
        } else for (const c of r.changes) queue(c);
      } catch {
        // The server is restarting: the next tick retries.
      }
    };
    const poll = (ms: number) => {
      if (stopped) return;
      if (pollTimer) clearInterval(pollTimer);
      void pull();
      pollTimer = setInterval(pull, ms);
    };

    let source: EventSource | null = null;
    if (typeof EventSource !== 'undefined') {
      source = new EventSource(`${this.base}/api/events`);
      source.addEventListener('ready', (e) => {
        // The first connection starts from now; a reconnection keeps our
        // place (the server replays from the last event id, and anything
        // older than `since` is dropped as already seen).
        if (since === null) {
          try {
            since = JSON.parse((e as MessageEvent).data).last_seq ?? null;
          } catch {
            /* the poll below learns it */
          }
        }
        // The stream is up: a slow safety poll only catches what a
        // silently stalled connection might miss.
        poll(SAFETY_POLL_MS);
      });
      source.addEventListener('change', (e) => {
        try {
          queue(JSON.parse((e as MessageEvent).data) as Change);
        } catch {
          /* a malformed event: ignore it */
        }
      });
      source.addEventListener('reset', (e) => {
        try {
          since = JSON.parse((e as MessageEvent).data).last_seq ?? since;
        } catch {
          /* keep the old sequence number */
        }
        deliver([], since ?? 0, true);
      });
      // Reconnecting (or refused): poll until the stream is back.
      source.onerror = () => poll(POLL_MS);
    } else {
      poll(POLL_MS);
    }
    return () => {
      stopped = true;
      source?.close();
      if (flushTimer) clearTimeout(flushTimer);
      if (pollTimer) clearInterval(pollTimer);
    };
  }

  onWatch(callback: (status: WatchView) => void): () => void {
    // Event streams carry only change notices, and a file that fails to
    // import changes nothing: poll the watcher's status while someone
    // listens (one small loopback request every 1.5 s), reporting changes.
    // While a file is queued or importing, poll faster so its progress
    // (which the importer reports a few times a second) moves smoothly.
    let last = '';
    let stopped = false;
    let unwatched = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const poll = async () => {
      let busy = false;
      try {
        const status = await this.watchStatus();
        // A server started without --capsules never gains a folder.
        if (status.folder === null) unwatched = true;
        busy = status.files.some((f) => f.status === 'importing' || f.status === 'pending');
        const seen = JSON.stringify(status);
        if (!stopped && seen !== last) {
          last = seen;
          callback(status);
        }
      } catch {
        // The server is restarting or gone; the next poll tries again.
      }
      if (!stopped && !unwatched) timer = setTimeout(() => void poll(), busy ? WATCH_BUSY_POLL_MS : WATCH_POLL_MS);
    };
    timer = setTimeout(() => void poll(), WATCH_POLL_MS);
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }

  onDropImport(): () => void {
    return () => {};
  }

  onDropProgress(): () => void {
    return () => {};
  }

  onFileDrag(): () => void {
    return () => {};
  }
}

function isErrorObject(json: unknown): boolean {
  return !!json && typeof json === 'object' && 'error' in json && !('result' in json);
}
