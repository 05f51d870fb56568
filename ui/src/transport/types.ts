// The transport-independent surface of the UI: what every host (the desktop
// shell, `kip serve`) offers, in the types kip-api generates.
import type {
  ApiError,
  BackupRequest,
  BackupResponse,
  StoreCheck,
  ChangeStats,
  ChangesRequest,
  ChangesResponse,
  ElementChange,
  ExecuteRequest,
  ImportProgress,
  ImportReport,
  ImportRequest,
  JsonValue,
  KipResponse,
  KnowledgeSchema,
  NeighbourhoodRequest,
  NeighbourhoodResponse,
  NexusInfo,
  Operations,
  PathsRequest,
  PathsResponse,
  ResolveRequest,
  ResolveResponse,
  SettingsResponse,
  ValidateRequest,
  ValidateResponse,
} from './generated/kip-api';

export type * from './generated/kip-api';

/** A kip-api operation's wire name (the generated `Operations` map's keys). */
export type OperationName = keyof Operations;
/** The body `call` sends for an operation. */
export type RequestOf<K extends OperationName> = Operations[K]['request'];
/** What `call` answers for an operation. */
export type ResponseOf<K extends OperationName> = Operations[K]['response'];

/** An operation that failed before or outside KIP execution (`{code, message, hint, data}`). */
export class ApiFailure extends Error {
  readonly error: ApiError;
  constructor(error: ApiError) {
    super(error.message);
    this.error = error;
  }
  get code() {
    return this.error.code;
  }
}

/** One problem of an imported file, wherever it came from. */
export interface ImportProblem {
  message: string;
  hint?: string;
  line?: number;
  column?: number;
  path?: string;
  code?: string;
  /** "Did you mean" names, best first. */
  suggestions?: string[];
}

/**
 * An import report as the views show it: kip-api's `ImportReport` (generated)
 * with each error read as an `ImportProblem`.
 */
export type ImportReportView = Pick<ImportReport, 'file' | 'status'> & {
  stats?: ChangeStats;
  duration_ms?: number;
  errors: ImportProblem[];
  /** A dry run: nothing was written; `changes` is the engine's diff. */
  dry_run?: boolean;
  changes?: ElementChange[];
  changes_omitted?: number;
  /** Where a file dropped on the desktop window was (to apply it again as the owner). */
  path?: string;
};

/** What "apply as owner" imports: a chosen file's text, or a dropped file's path. */
export interface OwnerImportRequest {
  file_name: string;
  text?: string;
  path?: string;
  dry_run: boolean;
}

/** A file being imported, by name, and how far it is. */
export interface ImportUnderWay {
  name: string;
  progress: ImportProgress;
}

/** One file of the watched capsule folder, its errors read like import problems. */
export interface WatchedFileView {
  path: string;
  status: 'imported' | 'failed' | 'pending' | 'importing' | 'removed' | string;
  errors: ImportProblem[];
  /** How far its import is, while importing (large files). */
  progress?: ImportProgress;
  /** The last import's counts and time, when it imported. */
  stats?: ChangeStats;
  duration_ms?: number;
}

/** The watched folder (kip-api's `WatchStatus`, errors normalised). */
export interface WatchView {
  /** `null` when this host watches no folder; `note` then says why. */
  folder: string | null;
  ready: boolean;
  files: WatchedFileView[];
  note?: string;
}

/** Something changed in the nexus (by this or another process). */
export interface ChangeNotice {
  last_seq: number;
  changes: ChangesResponse['changes'];
  reset: boolean;
}

export interface Transport {
  readonly kind: 'http' | 'tauri';
  execute(request: ExecuteRequest): Promise<KipResponse>;
  validate(request: ValidateRequest): Promise<ValidateResponse>;
  neighbourhood(request: NeighbourhoodRequest): Promise<NeighbourhoodResponse>;
  schema(): Promise<KnowledgeSchema>;
  importFile(request: ImportRequest): Promise<ImportReportView>;
  info(): Promise<NexusInfo>;
  changes(request: ChangesRequest): Promise<ChangesResponse>;
  /** Canonical KIP text, or an ApiFailure with the syntax error. */
  format(text: string): Promise<string>;
  /** The shortest paths between two elements (the engine's bounded search). */
  paths(request: PathsRequest): Promise<PathsResponse>;
  /**
   * Computes a type's logic properties for instances, in one batch
   * (`resolve_logic_properties`); fails with `MISSING_INPUT_PARAMS` naming
   * the inputs to ask for.
   */
  resolveLogicProperties(request: ResolveRequest): Promise<ResolveResponse>;
  /** Settings kept with the nexus (styling, saved queries, scenes), by key. */
  settingsGet(prefix?: string): Promise<SettingsResponse>;
  /** Stores one setting with the nexus; `null` forgets it. */
  settingsPut(key: string, value: JsonValue): Promise<SettingsResponse>;
  /** This machine's preferences kept by the host (`prefs_get`); absent or refused where it keeps none. */
  prefsGet?(prefix?: string): Promise<SettingsResponse>;
  /** Stores one preference with the host; `null` forgets it. */
  prefsPut?(key: string, value: JsonValue): Promise<SettingsResponse>;
  /** The watched capsule folder (`folder: null` when this host watches none). */
  watchStatus(): Promise<WatchView>;
  /** Verify the store's invariants (`check_store`); absent where the host does not offer it. */
  checkStore?(): Promise<StoreCheck>;
  /** A consistent copy now and/or the scheduled backup (`backup`); absent where the host does not offer it. */
  backup?(request: BackupRequest): Promise<BackupResponse>;
  /**
   * Saves an exported file where the host keeps downloads and answers its
   * path (desktop only: a webview ignores `<a download>`; a browser
   * downloads the file itself). Never overwrites: a taken name gets a number.
   */
  saveFile?(name: string, bytes: Uint8Array): Promise<string>;
  /** Watch another folder (desktop only). */
  setCapsuleFolder?(folder: string): Promise<WatchView>;
  /**
   * Imports a capsule with the nexus owner's authority over the protected
   * scope (desktop only: the person at the window owns the nexus; no
   * HTTP or MCP client can). A dry run's report carries the engine's diff.
   */
  importAsOwner?(request: OwnerImportRequest): Promise<ImportReportView>;
  /**
   * Any kip-api operation by its wire name, typed by the generated
   * `Operations` map (e.g. `call('trace_list', {limit: 50})` answers a `TracePage`).
   */
  call<K extends OperationName>(operation: K, body: RequestOf<K>): Promise<ResponseOf<K>>;
  /** Calls `onChange` after every committed write, by any process. Returns an unsubscribe. */
  subscribe(onChange: (notice: ChangeNotice) => void): () => void;
  /** Watched-folder status updates (desktop, or a server that watches). */
  onWatch(callback: (status: WatchView) => void): () => void;
  /** Files dropped onto the desktop window were imported (desktop only). */
  onDropImport(callback: (reports: ImportReportView[]) => void): () => void;
  /**
   * The imports of dropped files under way, with their progress (a few
   * updates a second; `[]` when done). Desktop only: a browser sends a
   * dropped file in one request.
   */
  onDropProgress(callback: (imports: ImportUnderWay[]) => void): () => void;
  /**
   * Files are being dragged over the desktop window (`true`) or left it or
   * were dropped (`false`). Desktop only: in a browser the page's own drag
   * events say so.
   */
  onFileDrag(callback: (over: boolean) => void): () => void;
}
