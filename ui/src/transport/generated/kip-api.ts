// Generated from the Rust types of crates/kip-api by `UPDATE_BINDINGS=1 cargo test -p kip-api bindings`.
// Do not edit: a test fails when this file is stale.

/** Any JSON value (KIP results, attributes, metadata). */
export type JsonValue = number | string | boolean | null | JsonValue[] | { [key in string]?: JsonValue };

/**
 * Every error code a host of this API can return: KIP's own codes, as the
 * engine defines them, plus the few a host adds. Closed on purpose: a new
 * code is a breaking change for the UI, which matches on all of them.
 */
export type ErrorCode = "KIP_1001" | "KIP_1002" | "KIP_1003" | "KIP_2001" | "KIP_2002" | "KIP_2003" | "KIP_2004" | "KIP_3001" | "KIP_3002" | "KIP_3003" | "KIP_3004" | "KIP_3005" | "KIP_4001" | "KIP_4002" | "KIP_4003" | "API_BAD_REQUEST" | "API_UNKNOWN_OPERATION" | "API_UNAUTHORIZED" | "API_IO" | "MISSING_INPUT_PARAMS" | "LOGIC_LLM_UNAVAILABLE" | "LOGIC_LLM_INVALID_OUTPUT" | "LOGIC_OPERATOR_FAILED";

/**
 * An error object: `{code, message, hint, data?}`, the same shape as a KIP
 * error. `data` carries positions (`line`, `column`, `offset`, `length`),
 * `suggestions`, `errors` (all problems of a text), or a `path`.
 */
export type ApiError = { code: ErrorCode, message: string, hint: string, data?: { [key in string]?: JsonValue }, };

/**
 * The operations of the API, by their wire name (`/api/<name>`
 * over HTTP, the operation of the desktop shell's `api_call`).
 */
export type Operation = "execute" | "execute_readonly" | "validate" | "schema" | "import" | "profiles" | "install_profile" | "health" | "duplicates" | "duplicates_dismiss" | "schema_map" | "triage" | "triage_apply" | "contradictions" | "contradiction_resolve" | "diff" | "read_heat" | "recall" | "related" | "recall_action" | "neighbourhood" | "changes" | "info" | "format" | "watch_status" | "resolve_logic_properties" | "check_store" | "backup" | "paths" | "settings_get" | "settings_put" | "trace_list" | "trace_entry" | "trace_add" | "trace_flag" | "trace_revert" | "trace_import" | "prefs_get" | "prefs_put" | "trace_promote" | "list_logs" | "trace_revert_to";

/**
 * No body: the operation reads none (any body is ignored).
 */
export type NoBody = null;

/**
 * `{command | commands, parameters?, dry_run?}` (`ExecuteRequest` on the
 * wire of `kip-api`).
 */
export type ExecuteRequest = { 
/**
 * One KIP command. Mutually exclusive with `commands`.
 */
command?: string, 
/**
 * A batch, run in order, stopping at the first error.
 */
commands?: Array<BatchItem>, 
/**
 * Values for `:name` placeholders (shared by a batch's commands).
 */
parameters?: { [key in string]?: JsonValue }, 
/**
 * Validate (KQL, META) or preview in an aborted transaction (KML).
 */
dry_run?: boolean, 
/**
 * An extension of KIP Explorer: also return how a FIND was evaluated
 * (plan, rows per step, samples) and, when it found nothing, why.
 */
explain?: boolean, 
/**
 * An extension of KIP Explorer: why the caller sends this command. It
 * becomes a THINK `DecisionRationale` entry of the cognitive trace,
 * linked to the command's own entry (writes only).
 */
reason?: string, 
/**
 * An extension of KIP Explorer: run the reads as of a past time (ISO
 * 8601) or trace entry (`T:n`), on the nexus rebuilt from the trace's
 * before-images. Writes are refused.
 */
as_of?: string, };

/**
 * One command of a batch: text using the shared parameters, or an object
 * whose own parameters override the shared ones.
 */
export type BatchItem = string | { command: string, parameters?: { [key in string]?: JsonValue }, };

/**
 * A KIP response (seed 001 §6.2): `result` on success, `error` on failure,
 * `next_cursor` when more rows exist. A batch's `result` is an array of
 * such objects, one per executed command.
 */
export type KipResponse = { result?: JsonValue, error?: ApiError, next_cursor?: string, 
/**
 * With `explain: true` on a FIND: the plan, rows per step and, for an
 * empty result (or a refused query), why.
 */
explain?: Explain, };

/**
 * Check KIP text for an editor.
 */
export type ValidateRequest = { 
/**
 * The editor's whole text (one or more commands).
 */
text: string, 
/**
 * The parameters panel's values. When absent, placeholders are not
 * checked (the editor may not know them yet); when present, a missing
 * one is a `KIP_3001` diagnostic.
 */
parameters?: { [key in string]?: JsonValue }, };

/**
 * All problems found in a text, each with its exact range.
 */
export type ValidateResponse = { 
/**
 * No diagnostics.
 */
ok: boolean, 
/**
 * Commands in the text (0 when it does not parse).
 */
commands: number, 
/**
 * Whether the text was also checked against the live schema (defined
 * types and predicates). That check runs for KQL and META when the
 * text parses and binds; KML is only checked for syntax, because a
 * schema check of a write would take the nexus's write lock on every
 * keystroke.
 */
schema_checked: boolean, 
/**
 * In source order.
 */
diagnostics: Array<Diagnostic>, 
/**
 * The WHERE block of a single FIND, DELETE, UPDATE, MERGE or EXPORT as a diagram, when the
 * text parses (drawn by the console's query debugger as the user types).
 */
pattern?: Pattern, 
/**
 * Each command of the text, in source order: what it is, whether it
 * writes and its placeholders. Empty when the text does not parse (the
 * engine would then refuse to run it, so nothing can be written).
 */
outline: Array<CommandOutline>, };

/**
 * One command of a text, as the engine parsed it.
 */
export type CommandOutline = { kind: CommandKind, 
/**
 * Whether running the command changes the nexus (UPSERT, DELETE): an
 * editor previews such a text with a dry run before it applies it.
 */
writes: boolean, 
/**
 * Where the command starts.
 */
from: TextPosition, 
/**
 * Where it ends (exclusive).
 */
to: TextPosition, 
/**
 * Every `:name` of the command, in source order, repeats included.
 */
placeholders: Array<Placeholder>, };

/**
 * What a command does.
 */
export type CommandKind = "query" | "write" | "meta";

/**
 * One `:name` placeholder, whose value comes from `parameters`.
 */
export type Placeholder = { 
/**
 * The name without the `:`.
 */
name: string, 
/**
 * Where the `:` is.
 */
from: TextPosition, 
/**
 * The end of the name (exclusive).
 */
to: TextPosition, };

/**
 * One problem in a text, with the range an editor underlines.
 */
export type Diagnostic = { code: ErrorCode, message: string, hint: string, 
/**
 * Where the problem starts.
 */
from: TextPosition, 
/**
 * Where it ends (exclusive); equal to `from` for a point.
 */
to: TextPosition, 
/**
 * "Did you mean" candidates, best first.
 */
suggestions: Array<string>, };

/**
 * A position in a text in every unit an editor may need.
 */
export type TextPosition = { 
/**
 * 1-based line.
 */
line: number, 
/**
 * 1-based column in Unicode scalar values (`阿司匹林` is 4 columns).
 */
column: number, 
/**
 * Byte offset in the UTF-8 text.
 */
offset: number, 
/**
 * Offset in UTF-16 code units: what JavaScript strings and CodeMirror count.
 */
utf16: number, };

/**
 * An element, by id or by its concept identity.
 */
export type ElementRef = { id: string, } | { type: string, name: string, };

/**
 * Which end of a link the element is.
 */
export type Direction = "outgoing" | "incoming";

/**
 * An element's neighbourhood: its links counted by predicate and
 * direction, and, when `predicate` is given, one page of those links.
 */
export type NeighbourhoodRequest = { element: ElementRef, 
/**
 * The predicate whose links to page through.
 */
predicate?: string, 
/**
 * With `predicate`: which direction (default `outgoing`).
 */
direction?: Direction, 
/**
 * Links to skip (default 0).
 */
offset?: number, 
/**
 * Page size (default 50, at most 1,000).
 */
limit?: number, 
/**
 * The neighbourhood as of a past time (ISO 8601) or trace entry
 * (`T:n`), rebuilt from the trace (see `Nexus::as_of`).
 */
as_of?: string, };

/**
 * The answer to a [`NeighbourhoodRequest`].
 */
export type NeighbourhoodResponse = { 
/**
 * The element's full object (as FIND returns it for a bare `?x`).
 */
element: JsonValue, 
/**
 * Links where the element is the subject, counted per predicate
 * (largest count first, then by name).
 */
outgoing: Array<PredicateCount>, 
/**
 * Links where the element is the object, counted per predicate.
 */
incoming: Array<PredicateCount>, total_outgoing: number, total_incoming: number, 
/**
 * The requested page, when a predicate was given.
 */
page?: LinkPage, };

export type PredicateCount = { predicate: string, count: number, };

/**
 * One page of an element's links with one predicate in one direction:
 * "showing `links.length` of `total`".
 */
export type LinkPage = { predicate: string, direction: Direction, offset: number, limit: number, 
/**
 * All links with this predicate in this direction.
 */
total: number, 
/**
 * In a stable order (by the neighbour's id), so pages neither repeat
 * nor skip while nothing is written.
 */
links: Array<Link>, 
/**
 * The `offset` of the next page, if there is one.
 */
next_offset?: number, };

/**
 * A link and the element at its other end.
 */
export type Link = { 
/**
 * The proposition object (`_type: "PropositionLink"`).
 */
proposition: JsonValue, 
/**
 * The concept or proposition at the other end.
 */
neighbour: JsonValue, };

/**
 * Poll the change log.
 */
export type ChangesRequest = { 
/**
 * The last sequence number already seen (0 for "from the start of the log").
 */
since: number, 
/**
 * At most this many entries (default and maximum 1,000).
 */
limit?: number, };

/**
 * New change-log entries, oldest first.
 */
export type ChangesResponse = { 
/**
 * The sequence number of the last committed change.
 */
last_seq: number, changes: Array<Change>, 
/**
 * Entries after `since` were already dropped from the log (it keeps the
 * last 10,000), or the nexus was replaced: reload everything.
 */
reset: boolean, 
/**
 * More entries exist after the last one returned (ask again from its `seq`).
 */
more: boolean, };

/**
 * One committed write, as the engine logged it in the same transaction.
 */
export type Change = { seq: number, 
/**
 * Which program wrote: `kip-cli`, `kip-serve`, `kip-mcp`, `kip-explorer`, …
 */
origin: string, 
/**
 * Who the trace names as acting (`cli`, `curator`, an agent's name);
 * absent in entries an earlier version logged.
 */
originator?: string, 
/**
 * The write's trace entry (`T:…`), when it was traced.
 */
trace?: string, 
/**
 * The writing process.
 */
pid: number, 
/**
 * When (ISO 8601, UTC).
 */
at: string, 
/**
 * Whether the writing process is the one answering this request:
 * `false` marks another process's write (an agent, `kip exec`, …).
 */
own_process: boolean, stats: ChangeStats, };

/**
 * Concepts and propositions created, updated and deleted.
 */
export type ChangeStats = { concepts_created: number, concepts_updated: number, concepts_deleted: number, propositions_created: number, propositions_updated: number, propositions_deleted: number, };

/**
 * Import one file's contents (a `.kip` capsule or a YAML knowledge bundle).
 */
export type ImportRequest = { 
/**
 * The file's name; its extension (`.kip`, `.yaml`, `.yml`) picks the
 * format, and it names the file in error locations.
 */
file_name: string, 
/**
 * The file's text.
 */
text: string, 
/**
 * Check everything and run the import in a transaction that is then
 * aborted: the report says exactly what an import would do, and
 * nothing is written.
 */
dry_run?: boolean, };

/**
 * The outcome of importing one file.
 */
export type ImportReport = { 
/**
 * The file as it was named to the importer.
 */
file: string, 
/**
 * `None` when the extension is not a capsule's.
 */
format?: Format, status: Status, 
/**
 * A validation and an aborted transaction: nothing was written.
 */
dry_run?: boolean | undefined, 
/**
 * `sha256:<hex>` of the file's bytes.
 */
hash?: string | undefined, 
/**
 * Items of a bundle, or commands of a capsule.
 */
items: number, 
/**
 * What changed (all zero when the file failed, or repeated knowledge
 * the nexus already held).
 */
stats: ChangeStats, 
/**
 * Wall-clock time of the whole import, reading to commit.
 */
duration_ms: number, 
/**
 * Every problem found (at most [`MAX_ERRORS`]); empty when imported.
 * Each is a KIP error object (`ApiError` in the bindings).
 */
errors: Array<ApiError>, 
/**
 * Errors found beyond the first [`MAX_ERRORS`].
 */
errors_omitted?: number | undefined, 
/**
 * A dry run's diff, the engine's own: each element the import would
 * change, before → after (the first [`MAX_PREVIEW_CHANGES`]). Empty
 * for a committed import (the trace keeps its before-image) and for
 * a capsule imported part by part.
 */
changes?: Array<ElementChange> | undefined, 
/**
 * Changes of a dry run beyond the first [`MAX_PREVIEW_CHANGES`].
 */
changes_omitted?: number | undefined, };

/**
 * The kind of file, chosen by its extension.
 */
export type Format = "kip" | "yaml";

/**
 * Whether a file landed.
 */
export type Status = "imported" | "failed";

/**
 * `get_knowledge_schema`'s answer: the bundle schema of the live types and
 * an example bundle that validates against it.
 */
export type KnowledgeSchema = { 
/**
 * A draft-07 JSON Schema of a knowledge bundle (the array form).
 */
full_bundle_schema: JsonValue, 
/**
 * A small bundle in YAML using the live types.
 */
example_yaml: string, };

/**
 * What a host serves.
 */
export type NexusInfo = { 
/**
 * The nexus folder.
 */
path: string, 
/**
 * Writes are refused with `KIP_3004`.
 */
read_only: boolean, 
/**
 * The origin this host writes under.
 */
origin: string, pid: number, concepts: number, propositions: number, last_change_seq: number, 
/**
 * The version of KIP Explorer.
 */
version: string, };

/**
 * Format KIP text.
 */
export type FormatRequest = { text: string, };

/**
 * The canonical form of a text (comments kept).
 */
export type FormatResponse = { formatted: string, 
/**
 * The text was not already canonical.
 */
changed: boolean, };

/**
 * The watched capsule folder as a host sees it.
 */
export type WatchStatus = { 
/**
 * The folder, or `null` when this host watches none.
 */
folder: string | null, 
/**
 * The files present when watching started have all been taken up.
 */
ready: boolean, 
/**
 * By path.
 */
files: Array<WatchedFile>, 
/**
 * Why the folder is not watched, or the last trouble watching it.
 */
note?: string, };

/**
 * One file of the watched folder.
 */
export type WatchedFile = { path: string, status: FileStatus, 
/**
 * The last import's errors (`{code, message, path?, line?, column?, hint, suggestions?}`).
 */
errors: Array<JsonValue>, 
/**
 * The last import report, when there was one.
 */
report?: JsonValue, 
/**
 * How far the import under way is (large files, while `importing`).
 */
progress?: ImportProgress, };

/**
 * How far a file's import is: the importer's latest report (a few a
 * second at most).
 */
export type ImportProgress = { 
/**
 * `parsing`, `validating` or `applying`.
 */
phase: string, 
/**
 * Items of the phase done and in all (checked, then written).
 */
items: number, total_items: number, 
/**
 * Bytes of the file taken in, and its size.
 */
bytes: number, total_bytes: number, 
/**
 * Since the file's import started, in milliseconds.
 */
elapsed_ms: number, };

/**
 * Where a watched file stands.
 */
export type FileStatus = "pending" | "importing" | "imported" | "failed" | "removed";

/**
 * `POST /api/kn/logic-property-resolver`, the MCP tool
 * `resolve_logic_properties`, `kip resolve` and kip-api's
 * `resolve_logic_properties` operation all take this.
 */
export type ResolveRequest = { 
/**
 * The nexus (`""` for the one the host serves).
 */
kn_id: string, 
/**
 * The concept type whose logic properties are resolved.
 */
ot_id: string, 
/**
 * The user's question, for the LLM.
 */
query: string, 
/**
 * The instances, in the order `datas` answers them.
 */
unique_identities: Array<Identity>, 
/**
 * The logic properties to compute.
 */
properties: Array<string>, 
/**
 * Free text (or a JSON string) for the LLM: instance facts, constraints,
 * time hints.
 */
additional_context: string, 
/**
 * Parameters per property (`{property: {param: value}}`), used as given;
 * the LLM (if configured) fills the properties left out.
 */
dynamic_params?: { [key in string]?: { [key in string]?: JsonValue } }, 
/**
 * "Now" in ms since the epoch; the server's clock when left out.
 */
now_ms?: number, options: ResolveOptions, };

/**
 * One instance to resolve for: by id (`{"id": "C:12"}`) or by name within
 * the type (`{"name": "Aspirin"}`).
 */
export type Identity = { id?: string, name?: string, };

/**
 * `options` of a request.
 */
export type ResolveOptions = { 
/**
 * Add `debug` to the answer: now_ms, the parameters used and where
 * they came from, per-property timings and span ids.
 */
return_debug: boolean, 
/**
 * Repair calls to the LLM after an answer that is not valid (default 1).
 */
max_repair_rounds: number, 
/**
 * LLM calls in flight at once (default 4; the seed's `max_concurrency`).
 */
max_concurrency?: number, };

/**
 * A successful answer: one object per identity, in order, with `id`,
 * `name` and each property's value (a number, or for a series
 * `[{"t": <bucket start ms>, "value": …}]`, or an operator's answer).
 */
export type ResolveResponse = { datas: Array<{ [key in string]?: JsonValue }>, debug?: ResolveDebug, };

/**
 * `debug` of an answer (`options.return_debug`).
 */
export type ResolveDebug = { trace_id: string, 
/**
 * The "now" used (the server's clock unless the request gave one).
 */
now_ms: number, 
/**
 * The parameters used, per property.
 */
dynamic_params: { [key in string]?: { [key in string]?: JsonValue } }, properties: Array<PropertyDebug>, total_ms: number, };

/**
 * One property's part of `debug`.
 */
export type PropertyDebug = { property: string, 
/**
 * `metric` or `operator`.
 */
kind: string, 
/**
 * The id of the property's `tracing` span (`logic_property`).
 */
span_id: string, params_from: ParamsFrom, 
/**
 * Chat-completion calls made (retries and repairs included).
 */
llm_calls: number, repair_rounds: number, 
/**
 * Time to get and check the parameters, in ms.
 */
params_ms: number, 
/**
 * Time to compute the property for every instance, in ms.
 */
eval_ms: number, };

/**
 * Where a property's parameters came from.
 */
export type ParamsFrom = "request" | "llm";

/**
 * The missing parameters of one property.
 */
export type MissingInputs = { property: string, params: Array<MissingParam>, };

/**
 * One parameter a caller must supply (`MISSING_INPUT_PARAMS`).
 */
export type MissingParam = { name: string, 
/**
 * INTEGER, NUMBER, STRING, BOOLEAN, OBJECT or ARRAY.
 */
type: string, hint: string, };

/**
 * What [`Store::check`] found (`kip check-store`, the `check_store`
 * operation: `StoreCheck` on the wire).
 */
export type StoreCheck = { 
/**
 * No invariant is violated.
 */
ok: boolean, 
/**
 * What was read.
 */
counts: StoreCounts, 
/**
 * The violations, in the order found (at most [`MAX_LISTED_VIOLATIONS`]).
 */
violations: Array<StoreViolation>, 
/**
 * Violations found beyond those listed.
 */
unlisted: number, };

/**
 * The sizes of what [`Store::check`] read.
 */
export type StoreCounts = { concepts: number, propositions: number, names: number, documents: number, postings: number, terms: number, changes: number, last_change_seq: number, };

/**
 * One broken invariant.
 */
export type StoreViolation = { 
/**
 * Which invariant (see the module documentation for the list).
 */
invariant: string, 
/**
 * The database where it shows.
 */
database: string, 
/**
 * What exactly is wrong, naming the element, key or count.
 */
detail: string, };

/**
 * `backup`: copy the nexus now and/or set the scheduled backup. With no
 * field, backs up now into the scheduled folder.
 */
export type BackupRequest = { 
/**
 * The folder that receives the backups (each one in a new subfolder
 * `kip-backup-<seq>-<unix seconds>`); default: the scheduled folder.
 */
dest?: string, 
/**
 * Back up now (default `true`).
 */
now?: boolean, 
/**
 * Set the schedule: back up into `dest` every this many hours (the
 * host runs it while it is open); `0` turns the schedule off.
 */
every_hours?: number, };

/**
 * One backup written.
 */
export type BackupDone = { 
/**
 * The copy's data file.
 */
path: string, bytes: number, 
/**
 * The last change the copy may include.
 */
last_change_seq: number, 
/**
 * When, in seconds since the Unix epoch.
 */
at: number, };

/**
 * The scheduled backup, as the nexus's host state remembers it.
 */
export type BackupSchedule = { dest: string, every_hours: number, 
/**
 * The last scheduled or manual backup into `dest`.
 */
last: BackupDone | null, };

/**
 * What `backup` did, and the schedule now in force.
 */
export type BackupResponse = { backup: BackupDone | null, schedule: BackupSchedule | null, };

/**
 * Find the shortest paths between two elements.
 */
export type PathsRequest = { from: ElementRef, to: ElementRef, 
/**
 * The longest path looked for, in links (default 4, at most 8).
 */
max_hops?: number, 
/**
 * Walk only links with these predicates (default: every predicate).
 */
predicates?: Array<string>, 
/**
 * Follow links only from subject to object (default `false`: a path
 * may walk a link either way, as a curator reads "connected").
 */
directed?: boolean, 
/**
 * At most this many paths (default 10, at most 100).
 */
limit?: number, };

/**
 * The shortest paths found: all of the same, smallest length.
 */
export type PathsResponse = { 
/**
 * The length in links of every path returned; `null` when no path of
 * at most `max_hops` links exists (or none was found within the budget).
 */
hops: number | null, 
/**
 * In a stable order (the index order of the links walked).
 */
paths: Array<GraphPath>, 
/**
 * Every element on the returned paths (concepts and links), each once,
 * as FIND returns it for a bare `?x`.
 */
elements: Array<JsonValue>, 
/**
 * More paths may exist: the path limit was reached, or the search
 * stopped at its budget of links examined.
 */
truncated: boolean, 
/**
 * Links examined.
 */
examined: number, };

/**
 * One path: `nodes[i]` and `nodes[i + 1]` are joined by `links[i]`.
 */
export type GraphPath = { 
/**
 * Element ids from `from` to `to`.
 */
nodes: Array<string>, 
/**
 * Proposition ids, one per hop.
 */
links: Array<string>, };

/**
 * Read a client's settings.
 */
export type SettingsGetRequest = { 
/**
 * Only keys starting with this (default: every key).
 */
prefix?: string, };

/**
 * Store one setting.
 */
export type SettingsPutRequest = { 
/**
 * Letters, digits and `._-/`, at most 200 bytes (e.g. `ui.styles`).
 */
key: string, 
/**
 * Any JSON of at most 1 MiB; `null` forgets the key.
 */
value: JsonValue, };

/**
 * Settings by key.
 */
export type SettingsResponse = { values: { [key in string]?: JsonValue }, };

/**
 * The `explain` member of a FIND response (and of the error response of
 * a FIND the engine refused, with an empty plan).
 */
export type Explain = { 
/**
 * The steps in the order they ran.
 */
plan: Array<Step>, 
/**
 * Solution rows before duplicates collapse and before paging.
 */
rows: number, why_empty?: Array<Cause>, 
/**
 * The WHERE block as a diagram, with the same ranges as the steps.
 */
pattern?: Pattern, };

/**
 * One evaluation step of the top-level WHERE block.
 */
export type Step = { 
/**
 * 1-based position in evaluation order.
 */
order: number, 
/**
 * `concept`, `proposition`, `path`, `filter`, `not`, `optional` or `union`.
 */
kind: 'concept' | 'proposition' | 'path' | 'filter' | 'not' | 'optional' | 'union', clause: Range, 
/**
 * The clause as written.
 */
text: string, 
/**
 * The index the step read, e.g. `type index`, `spo`, `pos`, `osp`.
 */
index?: string, 
/**
 * The planner's estimate of the rows after the step.
 */
estimated_rows?: number, rows_in: number, rows_out: number, time_ms: number, 
/**
 * Step-specific counts: rows removed by NOT, extended and padded by
 * OPTIONAL, rows per UNION branch, nodes visited and depth of a path.
 */
detail?: { [key in string]: number }, 
/**
 * Up to [`SAMPLE`] rows after the step: variable → bound value (a
 * concept as `{id, type, name}`, a link as `{id, predicate}`).
 */
sample: Array<{ [key in string]?: JsonValue }>, };

/**
 * Why a query returned nothing: one entry per responsible clause.
 */
export type Cause = { clause: Range, text: string, 
/**
 * A machine-readable reason: `unknown_name`, `name_under_other_type`,
 * `name_differs_in_case_or_spacing`, `similar_name`, `no_instances`,
 * `no_links`, `opposite_direction`, `path_too_short`, `no_join`,
 * `filter_removed_all`, `not_removed_all`, and for a query the engine
 * refused, `unknown_type` and `unknown_predicate`.
 */
reason: string, 
/**
 * The reason in words.
 */
message: string, 
/**
 * A suggested replacement for the clause's text, when there is one.
 */
fix?: Fix, };

/**
 * Replace `range` of the source by `replacement`.
 */
export type Fix = { range: Range, replacement: string, 
/**
 * What the fix does, for a button label.
 */
label: string, };

/**
 * A source range as the UI needs it to point at a clause.
 */
export type Range = { line: number, column: number, offset: number, length: number, };

/**
 * The diagram of one WHERE block and the blocks nested in it.
 */
export type Pattern = { 
/**
 * Block 0 is the WHERE block itself; NOT, OPTIONAL and UNION blocks
 * follow in source order.
 */
blocks: Array<Block>, nodes: Array<Node>, edges: Array<Edge>, filters: Array<Filter>, };

/**
 * `where`, `not`, `optional` or `union`.
 */
export type Block = { id: number, kind: 'where' | 'not' | 'optional' | 'union', 
/**
 * The block's braces (the range a NOT / OPTIONAL / UNION step reports).
 */
range: Range, parent?: number, };

/**
 * A concept (a variable, or an inline `{…}` term), or a proposition that
 * another proposition is about.
 */
export type Node = { id: number, 
/**
 * The variable's name without `?`, for a node that is a variable.
 */
var?: string, 
/**
 * `concept` or `proposition` (an inline `(…)` term, or a variable
 * bound to a link).
 */
kind: 'concept' | 'proposition', 
/**
 * The type as written (`:param` for a placeholder).
 */
type?: string, 
/**
 * The name as written, or `id: …` for an id matcher.
 */
name?: string, 
/**
 * A short label: `?drug`, `Symptom "Fever"`, `(…)`.
 */
label: string, 
/**
 * The block the node first appears in.
 */
block: number, 
/**
 * The clauses that constrain this node: concept clauses on the
 * variable, or the inline term itself.
 */
clauses: Array<Range>, };

/**
 * One proposition clause (or an inline proposition term): subject → object.
 */
export type Edge = { id: number, from: number, to: number, 
/**
 * `treats`, `treats | relieves`, or `?p` for a predicate variable.
 */
predicate: string, 
/**
 * The hop range as written (`{1,3}`), for a path.
 */
hops?: string, 
/**
 * The variable the link is bound to (`?l (…)`).
 */
var?: string, 
/**
 * The node standing for this link when another clause is about it.
 */
node?: number, clause: Range, 
/**
 * Where the predicate (with its hop range) is written.
 */
predicate_range: Range, block: number, };

/**
 * A FILTER, drawn as a badge on the nodes whose variables it reads.
 */
export type Filter = { clause: Range, 
/**
 * The nodes of the variables it reads.
 */
nodes: Array<number>, block: number, };

/**
 * One element's change. A concept carries `type` and `name`; a
 * proposition carries `subject`, `predicate` and `object`. `before` is
 * absent for a creation, `after` for a deletion.
 */
export type ElementChange = { op: ChangeOp, kind: ChangeKind, 
/**
 * `C:…` or `P:…`. In a dry run, a created element's id is the one it
 * would have had; the aborted transaction frees it again.
 */
id: string, type?: string, name?: string, subject?: ChangeEnd, predicate?: string, object?: ChangeEnd, before?: ChangeState, after?: ChangeState, };

/**
 * What happened to an element.
 */
export type ChangeOp = "created" | "updated" | "deleted";

/**
 * Whether the element is a concept or a proposition (a link).
 */
export type ChangeKind = "concept" | "proposition";

/**
 * One end of a link, named so a reader need not look it up: a concept's
 * type and name, or for a link about a link only its id.
 */
export type ChangeEnd = { id: string, type?: string, name?: string, };

/**
 * The part of an element a write can change.
 */
export type ChangeState = { attributes: Record<string, unknown>, metadata: Record<string, unknown>, 
/**
 * A link's subject, only when the write moved its ends (a MERGE
 * repoints the source's links to the target): in `before` the old
 * end, which a revert puts back; in `after` the new one.
 */
subject?: ChangeEnd, 
/**
 * A link's object, as `subject`.
 */
object?: ChangeEnd, };

/**
 * `trace_entry`: one entry by id.
 */
export type TraceEntryRequest = { 
/**
 * `T:…`.
 */
id: string, };

/**
 * A new entry written by a face (`record_trace`, `kip trace add`, the
 * `trace_add` operation: `TraceAddRequest` on the wire).
 */
export type TraceAddRequest = { 
/**
 * Who acted; a host fills in its own originator when absent.
 */
originator?: string, 
/**
 * `THINK` or `SAY`.
 */
type: string, message: string, tag: Array<string>, flags: Array<string>, data?: Record<string, unknown>, };

/**
 * `trace_flag`: the review state of an entry.
 */
export type TraceFlagRequest = { id: string, 
/**
 * Flags to set, e.g. `["Reviewed"]`.
 */
set: Array<string>, 
/**
 * Flags to clear.
 */
clear: Array<string>, };

/**
 * `trace_revert`: undo the write an entry describes.
 */
export type TraceRevertRequest = { id: string, 
/**
 * Revert even though later writes touched the same elements.
 */
force: boolean, };

/**
 * `trace_revert_to`: put an element back as entry `to` left it ("revert
 * to here" in an element's history).
 */
export type TraceRevertToRequest = { 
/**
 * The element (`C:…` / `P:…`).
 */
element: string, 
/**
 * An entry that touched it (`T:…`).
 */
to: string, 
/**
 * Revert even though later writes touched other elements of those writes.
 */
force: boolean, };

/**
 * `trace_import`: an exported trace, JSON Lines.
 */
export type TraceImportRequest = { jsonl: string, };

/**
 * What `trace_import` did.
 */
export type TraceImportResponse = { imported: number, };

/**
 * `list_logs`: the official KIP MCP bridge's log tool (BRIEF §5,
 * `specs/kip-v1.0-rc11/mcp-bridge/README.md`), the cognitive trace oldest
 * first, a page at a time.
 */
export type ListLogsRequest = { 
/**
 * Where the previous page ended (its `next_cursor`); none: the start.
 */
cursor?: string, 
/**
 * Entries per page: default [`LIST_LOGS_DEFAULT`], at most
 * [`LIST_LOGS_MAX`]; 0 answers an empty page.
 */
limit?: number, };

/**
 * One page of `list_logs`: `{result: [entries…], next_cursor?}`.
 */
export type ListLogsResponse = { result: Array<TraceEntry>, 
/**
 * Pass as `cursor` for the next page; absent after the last entry.
 */
next_cursor?: string, };

/**
 * `trace_promote`: a selection of entries becomes one episodic memory, a
 * Genesis `Event` concept linked by `involves` to the concepts the
 * entries touched (BRIEF §7).
 */
export type TracePromoteRequest = { 
/**
 * The entries (`T:…`), in any order.
 */
ids: Array<string>, 
/**
 * The Event's name (default: "Trace session <start> by <originators>").
 */
name?: string, 
/**
 * The Event's `event_class` (default `TraceSession`).
 */
event_class?: string, 
/**
 * The Event's `outcome`.
 */
outcome?: string, };

/**
 * What `trace_promote` wrote.
 */
export type TracePromoteResponse = { 
/**
 * The Event concept's id (`C:…`).
 */
event: string, name: string, 
/**
 * The concepts it is linked to by `involves`.
 */
linked: Array<string>, 
/**
 * How many entries it sums up.
 */
entries: number, };

/**
 * Which entries to list.
 */
export type TraceFilter = { originator?: string, type?: string, tag?: string, flag?: string, 
/**
 * ISO 8601; entries at or after.
 */
since?: string, 
/**
 * ISO 8601; entries at or before.
 */
until?: string, 
/**
 * Free text, case-insensitive, over the message, the command and the
 * originator.
 */
text?: string, 
/**
 * Only entries that touched this element (`C:…` / `P:…`).
 */
element?: string, 
/**
 * `true`: only folded reads (with the ids they returned in
 * `data.returned`); `false`: everything but them.
 */
reads?: boolean, 
/**
 * Paging: entries older than this id (`T:…`).
 */
before?: string, 
/**
 * Entries newer than this id, oldest first (for live updates; `T:0`,
 * the `last_id` of an empty trace: from the first entry).
 */
after?: string, limit?: number, };

/**
 * One page of entries, newest first (oldest first when listing `after`).
 */
export type TracePage = { entries: Array<TraceEntry>, 
/**
 * Pass as `before` for the next (older) page, if there is one.
 */
next_before?: string, 
/**
 * The id of the newest entry of the whole trace (`T:0` if none).
 */
last_id: string, };

/**
 * One entry, as every face shows it and as `kip trace export` writes it
 * (one JSON object per line).
 */
export type TraceEntry = { 
/**
 * `T:{n}`.
 */
id: string, originator: string, type: TraceEntryType, 
/**
 * The entry's decimal sequence number within its originator.
 */
seq: string, message: string, tag: Array<string>, flags: Array<string>, 
/**
 * ISO 8601, UTC.
 */
at: string, 
/**
 * For commands: `command`, `parameters`, `outcome` (the change counts
 * or the error code), `duration_ms`, `change_seq`, `elements` and the
 * before-image `changes` (plus, for a bulk write, `created`: the
 * ranges `[first, last]` of the ids it created, which `changes` and
 * `elements` then leave out); for folded reads `count` and `last_at`.
 */
data?: Record<string, unknown>, };

/**
 * The four kinds of entry of seed 003.
 */
export type TraceEntryType = "TRACE" | "THINK" | "SAY" | "SPACE";

/**
 * What a revert did.
 */
export type Reverted = { 
/**
 * The entry reverted.
 */
reverted: string, 
/**
 * The compensating write's own entry.
 */
entry: TraceEntry, };

/**
 * What [`Nexus::revert_to`] did.
 */
export type RevertedTo = { 
/**
 * The element (`C:…` / `P:…`).
 */
element: string, 
/**
 * The entry whose state the element is back to.
 */
to: string, 
/**
 * One revert per later write, newest first (empty: nothing later stood).
 */
reverted: Array<Reverted>, };

/**
 * Two concepts that may be one, best first by `score` (0–1).
 */
export type Duplicate = { a: DuplicateEnd, b: DuplicateEnd, score: number, 
/**
 * Why, in words: "same name after normalising case, width, spaces and
 * punctuation", "one edit apart", "an alias of the other", "3 shared
 * neighbours".
 */
reasons: Array<string>, };

/**
 * A concept of a candidate pair.
 */
export type DuplicateEnd = { 
/**
 * `C:…`.
 */
id: string, type: string, name: string, };

/**
 * `duplicates`: which types (all but the meta-types when absent), how many.
 */
export type DuplicatesRequest = { types?: Array<string>, 
/**
 * At most this many, best first (default 100).
 */
limit?: number, };

/**
 * The candidates, best first.
 */
export type DuplicatesResponse = { candidates: Array<Duplicate>, };

/**
 * `duplicates_dismiss`: two concepts (`C:…`) that are not the same.
 */
export type DismissRequest = { a: string, b: string, };

/**
 * What `duplicates_dismiss` did.
 */
export type DismissResponse = { dismissed: boolean, };

/**
 * The health of a memory at one moment (see the module doc).
 */
export type Health = { 
/**
 * When it was read (ISO 8601, UTC).
 */
at: string, concepts: number, links: number, 
/**
 * Concepts per type (the schema's own types aside).
 */
by_type: { [key in string]: number }, 
/**
 * Links per predicate.
 */
by_predicate: { [key in string]: number }, 
/**
 * Concepts per domain (by `belongs_to_domain`).
 */
by_domain: { [key in string]: number }, orphans: Counted, expired: Counted, fading: Counted, low_confidence: Counted, unconsolidated: Counted, 
/**
 * Subjects with more than one live object of a functional predicate
 * (the queue: `Nexus::contradictions`).
 */
contradictions: Counted, thresholds: Thresholds, };

/**
 * A count and the first elements it counts (`C:…` / `P:…`).
 */
export type Counted = { count: number, sample: Array<string>, };

/**
 * The thresholds the counts used.
 */
export type Thresholds = { fading_below: number, low_confidence_below: number, };

/**
 * `health`: the engine's counts, and the agent writes no curator has
 * reviewed yet (from the trace).
 */
export type HealthResponse = { 
/**
 * Trace entries flagged `Unverified` and neither `Reviewed` nor
 * `Rejected` (`T:…` ids), newest first.
 */
unreviewed: Counted, 
/**
 * When it was read (ISO 8601, UTC).
 */
at: string, concepts: number, links: number, 
/**
 * Concepts per type (the schema's own types aside).
 */
by_type: { [key in string]: number }, 
/**
 * Links per predicate.
 */
by_predicate: { [key in string]: number }, 
/**
 * Concepts per domain (by `belongs_to_domain`).
 */
by_domain: { [key in string]: number }, orphans: Counted, expired: Counted, fading: Counted, low_confidence: Counted, unconsolidated: Counted, 
/**
 * Subjects with more than one live object of a functional predicate
 * (the queue: `Nexus::contradictions`).
 */
contradictions: Counted, thresholds: Thresholds, };

/**
 * `schema_map`: how many best-connected concepts (default
 * [`kip_nexus::overview::DEFAULT_HUBS`], at most 500).
 */
export type SchemaMapRequest = { hubs?: number, };

/**
 * The memory's shape (see the module doc).
 */
export type SchemaMap = { 
/**
 * When it was read (ISO 8601, UTC).
 */
at: string, 
/**
 * Concepts that are not schema definitions.
 */
concepts: number, links: number, 
/**
 * Types with instances, most first.
 */
types: Array<TypeCount>, 
/**
 * Most first.
 */
edges: Array<EdgeCount>, 
/**
 * Links whose subject or object is a link.
 */
higher_order: number, 
/**
 * Most links first.
 */
hubs: Array<Hub>, };

/**
 * A concept type and how many concepts it has.
 */
export type TypeCount = { name: string, 
/**
 * The type's definition (`C:…`, a `$ConceptType` concept).
 */
definition: string | null, count: number, };

/**
 * How many links of one predicate go from one type to another.
 */
export type EdgeCount = { subject_type: string, predicate: string, object_type: string, count: number, };

/**
 * A concept with many links.
 */
export type Hub = { id: string, type: string, name: string, 
/**
 * Links in and out, `belongs_to_domain` aside.
 */
degree: number, };

/**
 * Which list.
 */
export type TriageList = "expired" | "fading" | "untouched";

/**
 * What to list: the list, its setting, and the page.
 */
export type TriageQuery = { list: TriageList, 
/**
 * Fading: `memory_strength` below this (default 0.2).
 */
below?: number, 
/**
 * Untouched: not written for this many days (default 90).
 */
days?: number, 
/**
 * Also list pinned memories.
 */
include_pinned?: boolean, offset?: number, 
/**
 * Items per page (default 50, at most 1,000).
 */
limit?: number, };

/**
 * One memory of a list, with the metadata triage decides by.
 */
export type TriageItem = { 
/**
 * `C:…` or `P:…`.
 */
id: string, 
/**
 * `concept` or `proposition`.
 */
kind: string, 
/**
 * A concept's type, a link's predicate.
 */
type: string, 
/**
 * A concept's name; a link as `subject —predicate→ object`.
 */
name: string, expires_at?: string, memory_strength?: number, memory_tier?: string, pinned: boolean, 
/**
 * The last write (`metadata._updated_at`).
 */
updated_at?: string, };

/**
 * One page of a list.
 */
export type TriagePage = { list: TriageList, 
/**
 * When it was read (ISO 8601, UTC).
 */
at: string, 
/**
 * How many memories the whole list holds.
 */
total: number, offset: number, items: Array<TriageItem>, 
/**
 * The settings the list used: the fading threshold, the days and the
 * cut-off time they make.
 */
below: number, days: number, cutoff: string, };

/**
 * What to do with the chosen memories.
 */
export type TriageAction = "pin" | "renew" | "archive" | "delete";

/**
 * An action over `ids` and/or every memory of `all_of`'s list.
 */
export type TriageApply = { action: TriageAction, 
/**
 * `C:…` / `P:…`.
 */
ids: Array<string>, 
/**
 * Every memory of this list (its page settings aside).
 */
all_of?: TriageQuery, 
/**
 * Renew: the new `memory_strength` (default 1.0).
 */
strength?: number, 
/**
 * Renew: `expires_at` this many days from now; absent, it is removed.
 */
expires_in_days?: number, 
/**
 * Preview: run exactly, then abort.
 */
dry_run?: boolean, 
/**
 * Why, for the trace (a `DecisionRationale` entry).
 */
message?: string, };

/**
 * A memory the action left alone, and why.
 */
export type TriageSkipped = { id: string, reason: string, };

/**
 * What an action did, or (a dry run) would do.
 */
export type TriageOutcome = { action: TriageAction, dry_run: boolean, 
/**
 * The memories acted on.
 */
targets: number, skipped: Array<TriageSkipped>, 
/**
 * Elements created, changed and deleted, one count per element.
 */
counts: ChangeStats, 
/**
 * Each element's change, before → after (the first [`MAX_DIFF`]).
 */
changes: Array<ElementChange>, 
/**
 * How many element changes there are in all.
 */
changes_total: number, 
/**
 * The KIP the engine ran (its first lines when long).
 */
kip: string, 
/**
 * The trace entry of a committed write: revert it to undo the action.
 */
trace_entry?: string, };

/**
 * The contradictions found, and how many there are in all.
 */
export type Contradictions = { total: number, 
/**
 * The functional predicates looked at.
 */
functional: Array<string>, 
/**
 * The first `limit`: the functional ones by subject id then predicate,
 * then the attribute ones by element then attribute.
 */
contradictions: Array<Contradiction>, };

/**
 * A subject with more than one live object of a functional predicate.
 */
export type Contradiction = { 
/**
 * Stable while the contradiction stands: `functional:<subject>/<predicate>`
 * or `attribute:<element>/<attribute>`.
 */
id: string, 
/**
 * `functional` or `attribute` (see the module doc).
 */
kind: string, 
/**
 * The subject (`functional`) or the element (`attribute`).
 */
subject: ContradictionEnd, 
/**
 * The functional predicate (empty for `attribute`).
 */
predicate: string, 
/**
 * The attribute two sources disagree on (`attribute` only).
 */
attribute?: string, 
/**
 * The live links, oldest first; or the earlier and the current value.
 */
sides: Array<ContradictionSide>, };

/**
 * One side of a contradiction: a live link and where it came from.
 */
export type ContradictionSide = { 
/**
 * The link (`P:…`), or `attribute:<element>/<attribute>#earlier` /
 * `#current`.
 */
id: string, 
/**
 * A link side's object (`functional`); none for an `attribute` side.
 */
object: ContradictionEnd | null, 
/**
 * An `attribute` side's value.
 */
value?: JsonValue, 
/**
 * The trace entry (`T:…`) that wrote an `attribute` side's value over
 * the other's.
 */
written_by?: string, 
/**
 * `metadata.source` (a string or an array), if any.
 */
source: JsonValue, author: string | null, confidence: number | null, 
/**
 * `metadata._created_at` (the engine's).
 */
created_at: string | null, 
/**
 * `metadata._updated_at` (the engine's).
 */
updated_at: string | null, };

/**
 * A concept (or, for a higher-order link, a link) a contradiction names.
 */
export type ContradictionEnd = { 
/**
 * `C:…` or `P:…`.
 */
id: string, 
/**
 * The concept's type (empty for a link).
 */
type: string, 
/**
 * The concept's name (the link's id for a link).
 */
name: string, };

/**
 * What a resolution ran: its KIP text and parameters, and the engine's
 * response (the changes it made, or would make in a dry run).
 */
export type Resolved = { command: string, parameters: { [key in string]?: JsonValue }, dry_run: boolean, 
/**
 * The `execute` response's `result`.
 */
result: JsonValue, };

/**
 * `contradictions`: which subject types (all when absent), how many.
 */
export type ContradictionsRequest = { 
/**
 * Only subjects of these concept types.
 */
types?: Array<string>, 
/**
 * At most this many listed (default 100); `total` counts them all.
 */
limit?: number, };

/**
 * `contradiction_resolve`: keep one link (`P:…`), retire the others of
 * the same subject and predicate, with the curator's reason; or keep one
 * side of an attribute contradiction (`attribute:C:…/KEY#earlier` or
 * `#current`) and retire the other.
 */
export type ContradictionResolveRequest = { keep: string, retire: Array<string>, reason?: string, 
/**
 * Preview only: the write run and rolled back, its changes returned.
 */
dry_run?: boolean, };

/**
 * Where a view stands, as every face reports it.
 */
export type AsOfPoint = { 
/**
 * What was asked for: a time as the engine stamps times (ISO 8601,
 * UTC, whole seconds), or a trace entry id.
 */
at: string, 
/**
 * The newest write entry the view includes (`T:0`: none).
 */
entry: string, 
/**
 * When that entry was written.
 */
entry_at?: string, 
/**
 * How far back the trace reaches: the time of its oldest kept entry
 * (absent when the trace is empty).
 */
oldest_at?: string, 
/**
 * Whether retention dropped older entries (then no view reaches
 * before `oldest_at`).
 */
dropped: boolean, 
/**
 * Whether the view is the nexus as it is now (no write after the
 * point).
 */
now: boolean, 
/**
 * Writes committed after the point while the trace was off: the
 * trace holds no before-image of them, so the view (and a diff) does
 * not undo them and is not exact when this is above 0.
 */
untraced: number, };

/**
 * What [`Nexus::diff`] found.
 */
export type Diff = { since: AsOfPoint, until: AsOfPoint, added: Array<DiffElement>, changed: Array<DiffElement>, removed: Array<DiffElement>, totals: DiffTotals, 
/**
 * Some list stopped at the limit (the totals count them all).
 */
truncated: boolean, };

/**
 * One element of a diff: what it is, and its state at both points
 * (`before` absent: added; `after` absent: removed).
 */
export type DiffElement = { id: string, kind: ChangeKind, 
/**
 * A concept's type, or a link's predicate.
 */
type?: string, 
/**
 * A concept's name.
 */
name?: string, 
/**
 * A link's subject, named.
 */
subject?: ChangeEnd, 
/**
 * A link's object, named.
 */
object?: ChangeEnd, before: DiffState | null, after: DiffState | null, };

/**
 * An element's state at one point.
 */
export type DiffState = { attributes: Record<string, unknown>, metadata: Record<string, unknown>, 
/**
 * A link's subject (`C:…` / `P:…`).
 */
subject?: string, 
/**
 * A link's object.
 */
object?: string, };

/**
 * How many elements each list holds in all (the lists stop at the limit).
 */
export type DiffTotals = { added: number, changed: number, removed: number, };

/**
 * `diff`: what changed between `since` and `until` (now when absent),
 * each an ISO 8601 time or a trace entry id (`T:n`).
 */
export type DiffRequest = { since: string, until?: string, 
/**
 * At most this many elements per list (default 1,000, at most 10,000).
 */
limit?: number, };

/**
 * A profile and whether this nexus carries it.
 */
export type ProfileInfo = { 
/**
 * What `kip init --profile` and `install_profile` name it by.
 */
name: string, title: string, 
/**
 * The concept types it defines.
 */
types: Array<string>, 
/**
 * The predicates it defines.
 */
predicates: Array<string>, 
/**
 * Every type and predicate it defines is defined here.
 */
installed: boolean, 
/**
 * What of it this nexus does not define yet.
 */
missing: Array<string>, };

/**
 * The profiles this version offers (`profiles`).
 */
export type ProfilesResponse = { profiles: Array<ProfileInfo>, };

/**
 * `install_profile`: the profile's name, e.g. `"memory"`.
 */
export type InstallProfileRequest = { name: string, 
/**
 * Check and run it in a transaction that is then aborted.
 */
dry_run?: boolean, };

/**
 * What installing a profile did: one import report per capsule, in the
 * order they were applied (it stops at the first that fails).
 */
export type InstallProfileResponse = { profile: ProfileInfo, reports: Array<ImportReport>, };

/**
 * Which reads to count.
 */
export type HeatQuery = { 
/**
 * ISO 8601: reads folded at or after (all kept entries when absent).
 */
since?: string, 
/**
 * ISO 8601: reads folded at or before.
 */
until?: string, 
/**
 * Only this originator's reads.
 */
originator?: string, 
/**
 * At most this many elements, hottest first (default 1,000, at most
 * 10,000).
 */
limit?: number, };

/**
 * The heat of the window, hottest first.
 */
export type ReadHeat = { elements: Array<Heat>, 
/**
 * Reads counted (a folded entry counts its `count`).
 */
reads: number, 
/**
 * Returned ids past the per-read bound, not attributed to an element.
 */
unrecorded: number, 
/**
 * Trace entries read.
 */
scanned: number, 
/**
 * Whether the scan reached the window's start (else it stopped after
 * [`MAX_HEAT_SCAN`] entries and older reads are not counted).
 */
complete: boolean, };

/**
 * One element's heat.
 */
export type Heat = { 
/**
 * `C:…` or `P:…`.
 */
id: string, 
/**
 * How many reads returned it.
 */
reads: number, 
/**
 * The same, per originator, most reads first.
 */
by: Array<ReadsBy>, };

/**
 * How many reads of one originator returned an element.
 */
export type ReadsBy = { originator: string, reads: number, };

/**
 * What to recall.
 */
export type RecallQuery = { 
/**
 * What the agent would search for.
 */
text: string, 
/**
 * `keyword`, `semantic` or `hybrid`; absent: SEARCH's default.
 */
mode?: string, 
/**
 * At most this many hits (default 10, at most 100).
 */
limit?: number, };

/**
 * What the agent would recall.
 */
export type Recall = { 
/**
 * The SEARCH an agent would send for it.
 */
search: string, 
/**
 * The mode that ranked the hits.
 */
mode: string, warning?: string, results: Array<Recalled>, };

/**
 * One hit, best first.
 */
export type Recalled = { id: string, type: string, name: string, 
/**
 * The `_score` SEARCH gives it (rounded as SEARCH rounds).
 */
score: number, parts: ScoreParts, memory_strength?: number, pinned: boolean, context: Array<ContextLink>, 
/**
 * Whether it has more links than `context` lists.
 */
context_more: boolean, };

/**
 * The parts of a hit's score.
 */
export type ScoreParts = { 
/**
 * The keyword (BM25) score, normalised to 0–1, if the keyword ranking
 * found it.
 */
keyword?: number, 
/**
 * The meaning (cosine) score, 0–1, if the meaning ranking found it.
 */
semantic?: number, 
/**
 * The fused score (hybrid only): `1 − (1 − keyword) × (1 − semantic)`
 * or reciprocal-rank fusion (`KIP_SEARCH_FUSION=rrf`).
 */
fused?: number, 
/**
 * Hybrid's exact-name boost: the name or an alias equals the query,
 * so the hit scores 1. (Keyword ranking's own bonus for a name equal
 * to the query is inside `keyword`.)
 */
exact_name: boolean, };

/**
 * One element a hit links to.
 */
export type ContextLink = { 
/**
 * The link, `P:…`.
 */
link: string, predicate: string, 
/**
 * `out` (the hit is the subject) or `in`.
 */
direction: string, 
/**
 * The other end: `{id, type, name}` (a link as an end: `{id}`).
 */
other: { id: string; type?: string; name?: string }, };

/**
 * A curator's action on a recalled concept.
 */
export type RecallAction = { 
/**
 * `pin` or `demote`.
 */
action: string, 
/**
 * The concept, `C:…`.
 */
id: string, 
/**
 * Demote's factor, above 0 and below 1 (default 0.5).
 */
factor?: number, 
/**
 * Preview only: the engine's dry run, nothing changes.
 */
dry_run?: boolean, };

/**
 * What an action did (or would do).
 */
export type RecallActionOutcome = { 
/**
 * The KIP command, with its parameters written in.
 */
command: string, dry_run: boolean, 
/**
 * The engine's result (with `changes`: before and after).
 */
result: unknown, 
/**
 * The write's trace entry (`T:…`), when committed: reverting it
 * undoes the action.
 */
entry?: string, };

/**
 * `related`: the concepts nearest in meaning to one concept (the
 * inspector's "related by meaning").
 */
export type RelatedRequest = { 
/**
 * The concept (`C:…`).
 */
id: string, 
/**
 * At most this many (8 by default, 50 at most).
 */
limit?: number, };

/**
 * What [`Nexus::related_by_meaning`] found.
 */
export type Related = { 
/**
 * This nexus searches by meaning (an embedding model is installed);
 * when not, `related` is empty.
 */
available: boolean, 
/**
 * Concepts still waiting for their vector (not found until embedded).
 */
backlog: number, 
/**
 * Best first.
 */
related: Array<RelatedConcept>, };

/**
 * One concept near in meaning.
 */
export type RelatedConcept = { id: string, type: string, name: string, 
/**
 * SEARCH's `_score` by meaning, in [0, 1].
 */
score: number, };

/** Every operation: its request body and its answer (`call` in the UI's transport). */
export interface Operations {
  execute: { request: ExecuteRequest; response: KipResponse };
  execute_readonly: { request: ExecuteRequest; response: KipResponse };
  validate: { request: ValidateRequest; response: ValidateResponse };
  schema: { request: NoBody; response: KnowledgeSchema };
  import: { request: ImportRequest; response: ImportReport };
  profiles: { request: NoBody; response: ProfilesResponse };
  install_profile: { request: InstallProfileRequest; response: InstallProfileResponse };
  health: { request: NoBody; response: HealthResponse };
  duplicates: { request: DuplicatesRequest; response: DuplicatesResponse };
  duplicates_dismiss: { request: DismissRequest; response: DismissResponse };
  schema_map: { request: SchemaMapRequest; response: SchemaMap };
  triage: { request: TriageQuery; response: TriagePage };
  triage_apply: { request: TriageApply; response: TriageOutcome };
  contradictions: { request: ContradictionsRequest; response: Contradictions };
  contradiction_resolve: { request: ContradictionResolveRequest; response: Resolved };
  diff: { request: DiffRequest; response: Diff };
  read_heat: { request: HeatQuery; response: ReadHeat };
  recall: { request: RecallQuery; response: Recall };
  related: { request: RelatedRequest; response: Related };
  recall_action: { request: RecallAction; response: RecallActionOutcome };
  neighbourhood: { request: NeighbourhoodRequest; response: NeighbourhoodResponse };
  changes: { request: ChangesRequest; response: ChangesResponse };
  info: { request: NoBody; response: NexusInfo };
  format: { request: FormatRequest; response: FormatResponse };
  watch_status: { request: NoBody; response: WatchStatus };
  resolve_logic_properties: { request: ResolveRequest; response: ResolveResponse };
  check_store: { request: NoBody; response: StoreCheck };
  backup: { request: BackupRequest; response: BackupResponse };
  paths: { request: PathsRequest; response: PathsResponse };
  settings_get: { request: SettingsGetRequest; response: SettingsResponse };
  settings_put: { request: SettingsPutRequest; response: SettingsResponse };
  trace_list: { request: TraceFilter; response: TracePage };
  trace_entry: { request: TraceEntryRequest; response: TraceEntry };
  trace_add: { request: TraceAddRequest; response: TraceEntry };
  trace_flag: { request: TraceFlagRequest; response: TraceEntry };
  trace_revert: { request: TraceRevertRequest; response: Reverted };
  trace_import: { request: TraceImportRequest; response: TraceImportResponse };
  prefs_get: { request: SettingsGetRequest; response: SettingsResponse };
  prefs_put: { request: SettingsPutRequest; response: SettingsResponse };
  trace_promote: { request: TracePromoteRequest; response: TracePromoteResponse };
  list_logs: { request: ListLogsRequest; response: ListLogsResponse };
  trace_revert_to: { request: TraceRevertToRequest; response: RevertedTo };
}
