// Reading import reports leniently: the capsule pipeline owns their shape
// (`ImportReport`, generated from kip-capsule), and the UI must show
// whatever a host says about a failure, even one that never reached it.
import type { ChangeStats, ElementChange, ImportProblem, ImportReportView, WatchStatus, WatchView } from './types';

function asNumber(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) && v.length && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
}

export function toProblem(raw: unknown): ImportProblem {
  if (typeof raw === 'string') return { message: raw };
  const r = (raw ?? {}) as Record<string, unknown>;
  const inner = (r.error ?? r) as Record<string, unknown>;
  const data = (inner.data ?? {}) as Record<string, unknown>;
  const loc = (inner.location ?? inner.position ?? {}) as Record<string, unknown>;
  return {
    message: String(inner.message ?? JSON.stringify(raw)),
    hint: typeof inner.hint === 'string' ? inner.hint : undefined,
    code: typeof inner.code === 'string' ? inner.code : undefined,
    line: asNumber(inner.line) ?? asNumber(loc.line) ?? asNumber(data.line),
    column: asNumber(inner.column) ?? asNumber(loc.column) ?? asNumber(data.column),
    path: typeof inner.path === 'string' ? inner.path : typeof data.path === 'string' ? data.path : undefined,
    suggestions: strings(inner.suggestions) ?? strings(data.suggestions),
  };
}

export function toReport(raw: unknown, fallbackName: string): ImportReportView {
  const r = (raw ?? {}) as Record<string, unknown>;
  if (r.error && !r.status) {
    return { file: fallbackName, status: 'failed', errors: [toProblem(r.error)] };
  }
  const errors = Array.isArray(r.errors) ? r.errors.map(toProblem) : [];
  const imported = r.status === 'imported' || (r.status === undefined && errors.length === 0);
  return {
    file: String(r.file ?? r.file_name ?? fallbackName),
    status: imported ? 'imported' : 'failed',
    stats: (r.stats as ChangeStats | undefined) ?? undefined,
    duration_ms: asNumber(r.duration_ms),
    errors,
    ...(r.dry_run === true ? { dry_run: true } : {}),
    ...(Array.isArray(r.changes) ? { changes: r.changes as ElementChange[] } : {}),
    ...(asNumber(r.changes_omitted) ? { changes_omitted: asNumber(r.changes_omitted) } : {}),
    ...(typeof r.path === 'string' ? { path: r.path } : {}),
  };
}

/** kip-api's watch status with each file's errors read like import problems. */
export function toWatchView(status: WatchStatus): WatchView {
  return {
    folder: status.folder,
    ready: status.ready,
    note: status.note,
    files: status.files.map((f) => ({
      path: f.path,
      status: f.status,
      errors: (f.errors ?? []).map(toProblem),
      ...(f.progress && f.status === 'importing' ? { progress: f.progress } : {}),
      ...lastImport(f.report),
    })),
  };
}

/** The counts and time of a watched file's last import, when it imported. */
function lastImport(report: unknown): { stats?: ChangeStats; duration_ms?: number } {
  if (!report || typeof report !== 'object') return {};
  const r = report as { status?: unknown; stats?: unknown; duration_ms?: unknown };
  if (r.status !== 'imported' || !r.stats || typeof r.stats !== 'object') return {};
  return { stats: r.stats as ChangeStats, ...(typeof r.duration_ms === 'number' ? { duration_ms: r.duration_ms } : {}) };
}
