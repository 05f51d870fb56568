// The desktop transport: Tauri commands and events of `src-tauri/`, each a
// thin adapter over kip-api. This module (and only it, with index.ts) may
// import `@tauri-apps/*`.
import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { toReport, toWatchView } from './reports';
import {
  ApiFailure,
  type ApiError,
  type ChangeNotice,
  type ChangesRequest,
  type ChangesResponse,
  type ExecuteRequest,
  type ImportReportView,
  type ImportUnderWay,
  type ImportRequest,
  type OwnerImportRequest,
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
  type WatchStatus,
  type WatchView,
  type StoreCheck,
  type BackupRequest,
  type BackupResponse,
  type OperationName,
  type RequestOf,
  type ResponseOf,
} from './types';

async function call<T>(command: string, args: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    if (e && typeof e === 'object' && 'code' in e) throw new ApiFailure(e as ApiError);
    throw new ApiFailure({ code: 'KIP_4003', message: String(e), hint: 'The desktop shell failed; see its log.' });
  }
}

function api<K extends OperationName>(operation: K, body: RequestOf<K>): Promise<ResponseOf<K>> {
  return call<ResponseOf<K>>('api_call', { operation, body });
}

function subscribeEvent<T>(name: string, callback: (payload: T) => void): () => void {
  let unlisten: UnlistenFn | null = null;
  let cancelled = false;
  void listen<T>(name, (event) => callback(event.payload)).then((u) => {
    if (cancelled) u();
    else unlisten = u;
  });
  return () => {
    cancelled = true;
    unlisten?.();
  };
}

export class TauriTransport implements Transport {
  readonly kind = 'tauri' as const;

  execute(request: ExecuteRequest): Promise<KipResponse> {
    return api('execute', request);
  }
  validate(request: ValidateRequest): Promise<ValidateResponse> {
    return api('validate', request);
  }
  neighbourhood(request: NeighbourhoodRequest): Promise<NeighbourhoodResponse> {
    return api('neighbourhood', request);
  }
  schema(): Promise<KnowledgeSchema> {
    return api('schema', null);
  }
  call<K extends OperationName>(operation: K, body: RequestOf<K>): Promise<ResponseOf<K>> {
    return api(operation, body);
  }
  async importFile(request: ImportRequest): Promise<ImportReportView> {
    try {
      return toReport(await api('import', request), request.file_name);
    } catch (e) {
      if (e instanceof ApiFailure) return toReport({ error: e.error }, request.file_name);
      throw e;
    }
  }
  info(): Promise<NexusInfo> {
    return api('info', null);
  }
  checkStore(): Promise<StoreCheck> {
    return api('check_store', null);
  }
  backup(request: BackupRequest): Promise<BackupResponse> {
    return api('backup', request);
  }
  changes(request: ChangesRequest): Promise<ChangesResponse> {
    return api('changes', request);
  }
  resolveLogicProperties(request: ResolveRequest): Promise<ResolveResponse> {
    return api('resolve_logic_properties', request);
  }
  paths(request: PathsRequest): Promise<PathsResponse> {
    return api('paths', request);
  }
  settingsGet(prefix?: string): Promise<SettingsResponse> {
    return api('settings_get', prefix === undefined ? {} : { prefix });
  }
  settingsPut(key: string, value: JsonValue): Promise<SettingsResponse> {
    return api('settings_put', { key, value });
  }
  prefsGet(prefix?: string): Promise<SettingsResponse> {
    return api('prefs_get', prefix === undefined ? {} : { prefix });
  }
  prefsPut(key: string, value: JsonValue): Promise<SettingsResponse> {
    return api('prefs_put', { key, value });
  }
  async format(text: string): Promise<string> {
    return (await api('format', { text })).formatted;
  }
  async watchStatus(): Promise<WatchView> {
    return toWatchView(await api('watch_status', null));
  }
  async saveFile(name: string, bytes: Uint8Array): Promise<string> {
    try {
      return await invoke<string>('save_file', bytes, { headers: { 'x-kip-file-name': encodeURIComponent(name) } });
    } catch (e) {
      if (e && typeof e === 'object' && 'code' in e) throw new ApiFailure(e as ApiError);
      throw new ApiFailure({ code: 'KIP_4003', message: String(e), hint: 'The desktop shell failed; see its log.' });
    }
  }
  async importAsOwner(request: OwnerImportRequest): Promise<ImportReportView> {
    return toReport(await call<unknown>('import_as_owner', { request }), request.file_name);
  }
  async setCapsuleFolder(folder: string): Promise<WatchView> {
    return toWatchView(await call<WatchStatus>('set_capsule_folder', { folder }));
  }
  subscribe(onChange: (notice: ChangeNotice) => void): () => void {
    return subscribeEvent<ChangeNotice>('kip://changes', onChange);
  }
  onWatch(callback: (status: WatchView) => void): () => void {
    return subscribeEvent<WatchStatus>('kip://watch', (s) => callback(toWatchView(s)));
  }
  onDropImport(callback: (reports: ImportReportView[]) => void): () => void {
    return subscribeEvent<unknown[]>('kip://dropped', (raw) =>
      callback(raw.map((r, i) => toReport(r, `dropped file ${i + 1}`))),
    );
  }

  onDropProgress(callback: (imports: ImportUnderWay[]) => void): () => void {
    return subscribeEvent<ImportUnderWay[]>('kip://import-progress', callback);
  }

  onFileDrag(callback: (over: boolean) => void): () => void {
    // Tauri takes file drags over the window from the OS (the page gets no
    // drag events for them) and announces them with these events.
    const offs = [
      subscribeEvent('tauri://drag-enter', () => callback(true)),
      subscribeEvent('tauri://drag-leave', () => callback(false)),
      subscribeEvent('tauri://drag-drop', () => callback(false)),
    ];
    return () => offs.forEach((off) => off());
  }
}

