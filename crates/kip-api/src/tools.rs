//! The agent-facing function definitions: `execute_kip` (seed 001 §6.1),
//! `execute_kip_readonly`, `get_knowledge_schema` and
//! `import_knowledge_bundle` (seed 002), `resolve_logic_properties`
//! (seed 004), with descriptions written for an
//! LLM to call them correctly the first time, and the KIP reference an
//! agent can read.
//!
//! They are data, not a protocol: `kip mcp` turns them into MCP tools, and
//! any other agent host (an OpenAI-style function list, an HTTP discovery
//! endpoint) can serve the same definitions.

use serde_json::{Value as Json, json};

/// A concise KIP syntax reference written for LLMs: the commands, the result
/// shapes, the error codes and how to recover from each.
pub const KIP_REFERENCE: &str = include_str!("../../../docs/kip-reference.md");

/// The URI under which agent hosts publish [`KIP_REFERENCE`].
pub const REFERENCE_URI: &str = "kip://docs/syntax-reference";

/// How to use the memory well, written for agents: a session's steps,
/// search, the sleep cycle's maintenance, the protected scope, errors.
pub const AGENT_GUIDE: &str = include_str!("../../../docs/agent-guide.md");

/// The URI under which agent hosts publish [`AGENT_GUIDE`].
pub const GUIDE_URI: &str = "kip://docs/agent-guide";

/// The name of the prompt that bootstraps an agent (the official KIP MCP
/// bridge's `kip_bootstrap`).
pub const BOOTSTRAP_PROMPT: &str = "kip_bootstrap";

/// `kip_bootstrap`: a system prompt, ready to inject, that makes an agent
/// use this memory: the guide, then the syntax reference.
pub fn bootstrap() -> String {
    format!(
        "You have a long-term memory: the Cognitive Nexus behind the tools `execute_kip` and `execute_kip_readonly`. Use it as this guide and reference say.\n\n{AGENT_GUIDE}\n\n---\n\n{KIP_REFERENCE}"
    )
}
/// The URI under which agent hosts publish the live `DESCRIBE PRIMER` result.
pub const PRIMER_URI: &str = "kip://nexus/primer";

/// One function an agent can call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// JSON Schema (draft 2020-12 subset every function-calling model accepts:
    /// no top-level `oneOf`) of the arguments object.
    pub input_schema: Json,
    /// The operation it calls: its [`crate::Effect`] says whether the tool
    /// may change the nexus.
    pub operation: crate::Operation,
    /// The tool may delete knowledge.
    pub destructive: bool,
}

/// The parameter descriptions of seed 001 §6.1, translated faithfully.
pub mod param {
    pub const COMMAND: &str =
        "Contains the complete KIP command text. **Mutually exclusive with `commands`.**";
    pub const COMMANDS: &str = "An array of KIP commands for batch execution. **Mutually exclusive with `command`.** Each element can be a `String` (uses the shared `parameters`) or an `Object` (`{command, parameters}`, whose own parameters override the shared ones). Commands are executed in order and **execution stops at the first error**.";
    pub const PARAMETERS: &str = "An optional key-value object for placeholder substitution. Placeholders in the command text (such as `:symptom_name`) are safely replaced before execution. A placeholder must occupy a \"complete JSON value position\" (such as `name: :symptom_name`) and cannot be embedded inside a string (such as `\"Hello :name\"`), because substitution is done by JSON serialization.";
    pub const DRY_RUN: &str =
        "If `true`, only validates the command's syntax and logic without executing it.";
    /// An extension of KIP Explorer (BRIEF §7), not a parameter of the spec.
    /// An extension of KIP Explorer (BRIEF §5), not a parameter of the spec.
    pub const IDEMPOTENCY_KEY: &str = "Optional (a KIP Explorer extension): a unique string for this write, e.g. a UUID (reads ignore it). If you are not sure a write went through (a time-out), send the very same request with the same key: it is applied at most once, and the repeat answers the first response. Use a new key for every new write.";
    pub const REASON: &str = "Optional (a KIP Explorer extension): why you send this command, in one or two sentences in the first person. It is kept in the memory's trace as your reasoning (a THINK DecisionRationale entry linked to the command), so the user can review why the memory changed. Give it with every write.";
}

/// The URI under which agent hosts publish the latest trace entries.
pub const TRACE_URI: &str = "kip://trace/recent";

const RECORD_TRACE: &str = r#"Record an entry in the memory's cognitive trace: the audit trail the user reads to see who changed the memory, when and why. Every execute_kip command is traced automatically; use this tool for what the commands cannot say:
- type THINK: your reasoning, in the first person. Record it BEFORE a write that is not obvious (tag DecisionRationale: why you will UPSERT or DELETE), when you draw a conclusion (Interpretation, Hypothesis), plan several steps (ActionPlan), correct yourself (SelfCorrection) or are unsure (ConfidenceReport, with flags ["Uncertain"]).
- type SAY: a note addressed to the user or to other agents (tag Annotation).

Arguments: type ("THINK" or "SAY"), message (natural language, at most 64 KiB), tag (optional array of words such as "DecisionRationale", "Observation", "ActionPlan", "Interpretation", "Hypothesis", "SelfCorrection", "ConfidenceReport", "ExternalInput", "Annotation"), flags (optional array: "Uncertain", "PossibleHallucination", "Contradiction", …), data (optional object, e.g. {"about": "C:12"}).
Answer: the stored entry ({id: "T:…", originator, type, seq, message, tag, flags, at}). A bad type, an empty message or a malformed tag is an error and records nothing. To give the reason for one command, you may instead pass `reason` to execute_kip."#;

/// `record_trace`: an agent's THINK / SAY entry.
pub fn record_trace() -> ToolDefinition {
    ToolDefinition {
        name: "record_trace",
        title: "Record your reasoning in the trace",
        description: RECORD_TRACE,
        input_schema: json!({
            "type": "object",
            "properties": {
                "type": {"type": "string", "enum": ["THINK", "SAY"], "description": "THINK for your reasoning, SAY for a note to others."},
                "message": {"type": "string", "description": "What you think or say, in natural language (first person)."},
                "tag": {"type": "array", "items": {"type": "string"}, "description": "Words classifying the entry, e.g. [\"DecisionRationale\"]."},
                "flags": {"type": "array", "items": {"type": "string"}, "description": "Uncertainty and risk marks, e.g. [\"Uncertain\"]."},
                "data": {"type": "object", "description": "Optional structured details."}
            },
            "required": ["type", "message"],
            "additionalProperties": false
        }),
        operation: crate::Operation::TraceAdd,
        destructive: false,
    }
}

const EXECUTE_KIP: &str = r#"Execute KIP (Knowledge Interaction Protocol) commands against the Cognitive Nexus: your persistent long-term memory, a knowledge graph of concept nodes ({type, name}) and proposition links ((subject, "predicate", object)).

Three kinds of command:
- KQL (recall): FIND(?d.name, ?d.attributes.risk_level) WHERE { ?d {type: "Drug"} (?d, "treats", {type: "Symptom", name: "Headache"}) } LIMIT 20
- KML (learn): UPSERT { CONCEPT ?e { {type: "Event", name: :name} SET ATTRIBUTES { content_summary: :summary } } } WITH METADATA { source: "conversation", confidence: 0.9 }
  DELETE CONCEPT ?x DETACH WHERE { ?x {type: "Drug", name: "OldDrug"} } (also DELETE ATTRIBUTES / METADATA / PROPOSITIONS)
  UPDATE ?p SET ATTRIBUTES { evidence_count: ADD(COALESCE(?p.attributes.evidence_count, 0), 1) } WHERE { ?p {type: "Preference", name: :name} } (bulk change of every match)
  MERGE CONCEPT ?dup INTO ?keep WHERE { ?dup {type: "SkillTopic", name: "JS"} ?keep {type: "SkillTopic", name: "JavaScript"} } (fold a duplicate)
- META (explore): DESCRIBE PRIMER | DESCRIBE DOMAINS | DESCRIBE CONCEPT TYPES | DESCRIBE CONCEPT TYPE "Drug" | DESCRIBE PROPOSITION TYPES | DESCRIBE PROPOSITION TYPE "treats" | SEARCH CONCEPT "aspirin" WITH TYPE "Drug" LIMIT 5 | EXPORT ?n WHERE { ?n {type: "Drug"} } LIMIT 100

How to work:
1. Start with DESCRIBE PRIMER: who you are ($self) and what the memory holds (domains, types, predicates).
2. Ground every name before using it: type and predicate names are case-sensitive and must already be defined; use DESCRIBE or SEARCH to find exact names instead of guessing.
3. Pass values through `parameters` (`name: :name`) rather than pasting them into the text.
4. Before writing a new kind of thing, define it: UPSERT a {type: "$ConceptType", name: "NewType"} or {type: "$PropositionType", name: "new_predicate"} node first (see DESCRIBE CONCEPT TYPE "$ConceptType").
5. Use `dry_run: true` to preview a KML change without writing it.

Response: {"result": ...} on success (FIND is columnar: one array per FIND expression; with exactly one expression, that array itself), with "next_cursor" when more rows exist (send `CURSOR "<next_cursor>"` with the same query); or {"error": {"code", "message", "hint", "data"}}. On an error, read `hint` and fix the command: KIP_1001 syntax (data.line, data.column point at it), KIP_2001 unknown type or predicate (see data.suggestions, run DESCRIBE), KIP_3001 undefined variable or missing parameter, KIP_3002 not found (SEARCH first), KIP_3004 protected or read-only (do not retry), KIP_3005 an EXPECT VERSION guard failed (re-read, re-apply, retry). Read the resource kip://docs/syntax-reference for the full syntax."#;

const EXECUTE_KIP_READONLY: &str = r#"Execute KIP read commands against the Cognitive Nexus (your long-term memory) without any risk of changing it: KQL (FIND) and META (DESCRIBE, SEARCH, EXPORT) only. Any UPSERT, UPDATE, MERGE or DELETE in the request is refused with error KIP_3004 before anything runs; use execute_kip to write.

Same arguments and response as execute_kip. Typical use: DESCRIBE PRIMER at the start of a session, SEARCH CONCEPT "term" to find exact names, then FIND(...) WHERE {...} to recall facts. Read the resource kip://docs/syntax-reference for the full syntax."#;

const GET_KNOWLEDGE_SCHEMA: &str = r#"Get the validation rules for knowledge bundles, generated from the types and predicates currently defined in the Cognitive Nexus. Returns {"full_bundle_schema": <JSON Schema draft-07 for a YAML bundle: an array whose items are concepts (type, name, attributes, optional metadata and action) or propositions (type = a predicate, source and target as {type, name} or {id})>, "example_yaml": "<a valid example bundle>"}.

Call this before writing a bundle for import_knowledge_bundle, and follow the schema exactly: only defined types and predicates are accepted, and required attributes must be present."#;

const IMPORT_KNOWLEDGE_BUNDLE: &str = r#"Import a YAML knowledge bundle (or a .kip capsule) into the Cognitive Nexus in one atomic transaction: everything is validated first against the live schema (see get_knowledge_schema), and either every item is applied or nothing is.

Pass the bundle text in `yaml` (preferred), or the absolute `path` of a .yaml / .yml / .kip file the server can read. A bundle is an array of items, e.g.:
- type: Drug
  name: Aspirin
  risk_level: 2
  metadata: { source: "conversation", confidence: 0.9 }
- type: treats
  source: { type: Drug, name: Aspirin }
  target: { type: Symptom, name: Headache }
An item with `action: delete` removes that concept (with its links) or link.

Returns the import report: status, statistics, and on failure every error with its path (such as [4].name), line and column, and a hint (e.g. "Entity type 'Human' is not defined. Did you mean 'Person'?"). Fix all reported errors and import again; nothing was written."#;

const RESOLVE_LOGIC_PROPERTIES: &str = r#"Compute logic properties — values that are computed on demand, not stored — of a concept type for a batch of its instances. A type declares them in its definition (DESCRIBE CONCEPT TYPE "<Type>" lists them under logic_properties with their inputs): a metric is a value over a time window, or a series with one value per step; an operator is computed by a service.

Arguments: ot_id (the concept type, e.g. "Drug"), unique_identities (the instances: [{"name": "Aspirin"}] or [{"id": "C:12"}]), properties (names of its logic properties), query (the user's question), additional_context (facts, constraints and time hints that help fill parameters), dynamic_params (optional: the parameters yourself, {"<property>": {"<param>": value}}), now_ms (optional: "now" in ms; the server's clock otherwise), options {return_debug, max_repair_rounds}.

Parameters: every input of a metric includes instant (true: one value over [start, end]; false: a series, which needs step), start and end (integers, ms since 1970-01-01 UTC, start <= end) and step (day, week, month, quarter or year). Other inputs are listed by DESCRIBE with their types.

How to work:
1. If the server has an LLM configured, you may leave dynamic_params out: it fills them from query and additional_context.
2. If it has none (the error's hint says "No LLM is configured"), YOU are the LLM: compute dynamic_params yourself from the user's question and now_ms (e.g. "over the last 12 months by month" = {"instant": false, "start": now_ms - 365 days in ms, "end": now_ms, "step": "month"}) and call again.
3. On error_code MISSING_INPUT_PARAMS, read `missing` ([{property, params: [{name, type, hint}]}]): supply what you can infer, and ASK THE USER for the rest (quote the hints), then call again with dynamic_params or a richer additional_context. Nothing partial is returned: every property must resolve.

Answer: {"datas": [{"id", "name", "<property>": number | [{"t": <bucket start ms>, "value": number}] | <operator result>}, …]} in the order of unique_identities. Other errors carry error_code (KIP_2001 unknown type, KIP_2002 unknown property with data.available, KIP_3002 unknown instances named in data.instances, KIP_2004 / KIP_2003 a bad parameter at data.path, KIP_4002 too many buckets: use a larger step, LOGIC_LLM_UNAVAILABLE, LOGIC_OPERATOR_FAILED), a hint and a trace_id."#;

fn resolve_schema() -> Json {
    json!({
        "type": "object",
        "properties": {
            "kn_id": {"type": "string", "description": "The knowledge network: leave empty for this server's nexus."},
            "ot_id": {"type": "string", "description": "The concept type whose logic properties are computed, e.g. \"Drug\"."},
            "query": {"type": "string", "description": "The user's question, for filling parameters."},
            "unique_identities": {
                "type": "array",
                "description": "The instances, by name within the type or by id.",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "id": {"type": "string"}},
                    "additionalProperties": false
                }
            },
            "properties": {"type": "array", "items": {"type": "string"}, "description": "The logic properties to compute."},
            "additional_context": {"type": "string", "description": "Free text (or a JSON string): instance facts, constraints, time hints."},
            "dynamic_params": {"type": "object", "description": "Parameters per property, {\"<property>\": {\"<param>\": value}}; required when the server has no LLM."},
            "now_ms": {"type": "integer", "description": "\"Now\" in ms since the epoch (default: the server's clock)."},
            "options": {
                "type": "object",
                "properties": {
                    "return_debug": {"type": "boolean"},
                    "max_repair_rounds": {"type": "integer", "minimum": 0},
                    "max_concurrency": {"type": "integer", "minimum": 1}
                },
                "additionalProperties": false
            }
        },
        "required": ["ot_id", "unique_identities", "properties"],
        "additionalProperties": false
    })
}

/// `resolve_logic_properties` (seed 004): compute metrics and operators
/// for a batch of instances.
pub fn resolve_logic_properties() -> ToolDefinition {
    ToolDefinition {
        name: "resolve_logic_properties",
        title: "Compute logic properties (metrics, operators)",
        description: RESOLVE_LOGIC_PROPERTIES,
        input_schema: resolve_schema(),
        operation: crate::Operation::ResolveLogicProperties,
        destructive: false,
    }
}

fn execute_schema() -> Json {
    json!({
        "type": "object",
        "properties": {
            "command": { "type": "string", "description": param::COMMAND },
            "commands": {
                "type": "array",
                "description": param::COMMANDS,
                "items": {
                    "anyOf": [
                        { "type": "string" },
                        {
                            "type": "object",
                            "properties": {
                                "command": { "type": "string" },
                                "parameters": { "type": "object" }
                            },
                            "required": ["command"],
                            "additionalProperties": false
                        }
                    ]
                }
            },
            "parameters": { "type": "object", "description": param::PARAMETERS },
            "dry_run": { "type": "boolean", "description": param::DRY_RUN },
            "reason": { "type": "string", "description": param::REASON },
            "idempotency_key": { "type": "string", "description": param::IDEMPOTENCY_KEY }
        },
        "additionalProperties": false
    })
}

/// `execute_kip`: the spec's function definition.
pub fn execute_kip() -> ToolDefinition {
    ToolDefinition {
        name: "execute_kip",
        title: "Execute KIP (read and write memory)",
        description: EXECUTE_KIP,
        input_schema: execute_schema(),
        operation: crate::Operation::Execute,
        destructive: true,
    }
}

/// `execute_kip_readonly`: the same arguments; KML is refused.
pub fn execute_kip_readonly() -> ToolDefinition {
    ToolDefinition {
        name: "execute_kip_readonly",
        title: "Execute KIP (read memory only)",
        description: EXECUTE_KIP_READONLY,
        input_schema: execute_schema(),
        operation: crate::Operation::ExecuteReadonly,
        destructive: false,
    }
}

/// `get_knowledge_schema` (seed 002): no arguments.
pub fn get_knowledge_schema() -> ToolDefinition {
    ToolDefinition {
        name: "get_knowledge_schema",
        title: "Get the knowledge bundle schema",
        description: GET_KNOWLEDGE_SCHEMA,
        input_schema: json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        operation: crate::Operation::Schema,
        destructive: false,
    }
}

/// `import_knowledge_bundle` (seed 002): YAML text or a path.
pub fn import_knowledge_bundle() -> ToolDefinition {
    ToolDefinition {
        name: "import_knowledge_bundle",
        title: "Import a knowledge bundle",
        description: IMPORT_KNOWLEDGE_BUNDLE,
        input_schema: json!({
            "type": "object",
            "properties": {
                "yaml": {
                    "type": "string",
                    "description": "The bundle's YAML text. Exactly one of `yaml` and `path`."
                },
                "path": {
                    "type": "string",
                    "description": "Absolute path of a .yaml, .yml or .kip file readable by the server. Exactly one of `yaml` and `path`. The file is not modified or deleted."
                },
                "file_name": {
                    "type": "string",
                    "description": "With `yaml`: the name used in error locations and to pick the format by extension (default \"bundle.yaml\"; use a .kip name for a KIP capsule)."
                },
                "dry_run": {
                    "type": "boolean",
                    "description": "If `true`, validate everything and report exactly what the import would do, without writing anything."
                }
            },
            "additionalProperties": false
        }),
        operation: crate::Operation::Import,
        destructive: true,
    }
}

impl ToolDefinition {
    /// The tool never changes the nexus (its operation only reads).
    pub fn read_only(&self) -> bool {
        !self.operation.writes()
    }
}

/// The tool named `name`.
pub fn named(name: &str) -> Option<ToolDefinition> {
    all().into_iter().find(|t| t.name == name)
}

/// Every tool, in the order agents see them.
pub fn all() -> Vec<ToolDefinition> {
    vec![
        execute_kip(),
        execute_kip_readonly(),
        get_knowledge_schema(),
        import_knowledge_bundle(),
        resolve_logic_properties(),
        record_trace(),
        memory_health(),
        duplicate_candidates(),
        decay_triage(),
        contradictions(),
        memory_changes(),
        recall_heat(),
    ]
}

/// `recall_heat`: which memories agents' reads actually returned (the
/// trace's record of reads), for the sleep cycle to reinforce.
pub fn recall_heat() -> ToolDefinition {
    ToolDefinition {
        name: "recall_heat",
        title: "List the memories reads returned",
        description: "Which concepts and links agents' read-only queries actually returned, hottest first, from the cognitive trace: {elements: [{id, reads, by: [{originator, reads}]}], reads, unrecorded, scanned, complete}. Each folded read records at most 50 of the ids it returned. Use it in a sleep cycle to reinforce what is recalled (raise memory_strength of the hottest) and to see what is never read. FIND an id with {id: \"C:…\"} to work on it. Changes nothing.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "since": {"type": "string", "description": "Reads at or after this time (ISO 8601; default: all the trace keeps)."},
                "until": {"type": "string", "description": "Reads at or before this time (ISO 8601)."},
                "originator": {"type": "string", "description": "Only this originator's reads."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 10000, "description": "At most this many elements, hottest first (default 1000)."}
            },
            "additionalProperties": false
        }),
        operation: crate::Operation::ReadHeat,
        destructive: false,
    }
}

/// `decay_triage`: the decay-triage lists the curator works from.
pub fn decay_triage() -> ToolDefinition {
    ToolDefinition {
        name: "decay_triage",
        title: "List memories for decay triage",
        description: "One page of the memories a sleep cycle decides about, the curator's decay-triage list: `expired` (metadata.expires_at past), `fading` (memory_strength below `below`, default 0.2) or `untouched` (not written for `days` days, default 90; reads do not count). Concepts and links, in id order; the schema, domains, protected elements, belongs_to_domain links, archived concepts and pinned memories (metadata.pinned: true, exempt from decay) are left out. Answers {list, total, offset, items: [{id, kind, type, name, expires_at, memory_strength, memory_tier, pinned, updated_at}], below, days, cutoff}. To act, use execute_kip: renew (UPDATE … SET METADATA { memory_strength: 1.0 }), archive (belongs_to_domain Archived), or DELETE an episodic memory whose expiry passed — dry_run first. Changes nothing.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "list": {"type": "string", "enum": ["expired", "fading", "untouched"], "description": "Which list."},
                "below": {"type": "number", "minimum": 0, "maximum": 1, "description": "fading: memory_strength below this (default 0.2)."},
                "days": {"type": "integer", "minimum": 0, "description": "untouched: not written for this many days (default 90)."},
                "include_pinned": {"type": "boolean", "description": "Also list pinned memories."},
                "offset": {"type": "integer", "minimum": 0, "description": "Skip this many (paging)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "At most this many (default 50)."}
            },
            "required": ["list"],
            "additionalProperties": false
        }),
        operation: crate::Operation::Triage,
        destructive: false,
    }
}

/// `memory_changes`: what changed in the memory between two times (the
/// sleep cycle's "what happened since my last run"), read-only.
pub fn memory_changes() -> ToolDefinition {
    ToolDefinition {
        name: "memory_changes",
        title: "List what changed between two times",
        description: "What changed in the memory between `since` and `until` (default now), rebuilt from the cognitive trace: {added, changed, removed: [{id, kind, type, name, before, after}], totals, truncated, since, until}; before/after hold attributes and metadata (and a link's subject and object) at each time. Times are ISO 8601 (2026-11-28T09:30:00Z, or a date) or trace entry ids (T:42). The engine's `_` metadata is not compared. A time before the trace's retention is refused, naming the oldest time kept. Use it at the start of a sleep cycle with the time of the last one. Changes nothing.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "since": {"type": "string", "description": "From this time (ISO 8601) or trace entry (T:n)."},
                "until": {"type": "string", "description": "Up to this time or entry (default: now)."},
                "limit": {"type": "integer", "minimum": 1, "description": "At most this many elements per list (default 1000)."}
            },
            "required": ["since"],
            "additionalProperties": false
        }),
        operation: crate::Operation::Diff,
        destructive: false,
    }
}

/// `memory_health`: what the sleep cycle (or `$system`) looks after, the
/// curator's Health view's own counts.
pub fn memory_health() -> ToolDefinition {
    ToolDefinition {
        name: "memory_health",
        title: "Read the memory's health",
        description: "The memory's health, the list a curator works from: counts per type, predicate and domain; orphans (concepts linked to nothing but their domain), expired memories (metadata.expires_at past), fading ones (memory_strength below thresholds.fading_below), weakly supported ones (confidence below thresholds.low_confidence_below), unconsolidated episodes (Event / Experience without consolidated_to) and unreviewed agent writes; each with `count` and the first ids in `sample` (C:… concepts, P:… links, T:… trace entries). Read it at the start of a sleep cycle; FIND the sampled ids with {id: \"C:…\"} to work on them. Takes no arguments; changes nothing.",
        input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        operation: crate::Operation::Health,
        destructive: false,
    }
}

/// `duplicate_candidates`: the duplicates queue the curator sees.
pub fn duplicate_candidates() -> ToolDefinition {
    ToolDefinition {
        name: "duplicate_candidates",
        title: "List duplicate candidates",
        description: "Pairs of concepts of one type that may be the same entity, best first: {candidates: [{a: {id, type, name}, b: {…}, score (0–1), reasons}]}. Reasons: the same name after normalising case, width, spaces and punctuation; names one edit apart; one's name an alias of the other; shared neighbours. Pairs a curator dismissed as not the same are left out. To consolidate a pair you are sure of, use execute_kip with MERGE CONCEPT ?dup INTO ?keep (dry_run first). Changes nothing.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "types": {"type": "array", "items": {"type": "string"}, "description": "Only these concept types (default: all)."},
                "limit": {"type": "integer", "minimum": 1, "description": "At most this many pairs, best first (default 100)."}
            },
            "additionalProperties": false
        }),
        operation: crate::Operation::Duplicates,
        destructive: false,
    }
}

/// `contradictions`: the contradictions queue the curator sees.
pub fn contradictions() -> ToolDefinition {
    ToolDefinition {
        name: "contradictions",
        title: "List contradictions",
        description: "Subjects with more than one live object of a functional predicate (a $PropositionType whose attributes say functional: true, e.g. born_in): {total, functional: [predicates], contradictions: [{id, kind: \"functional\", subject: {id, type, name}, predicate, sides: [{id: \"P:…\", object: {id, type, name}, source, author, confidence, created_at, updated_at}]}]}. Links whose metadata says superseded: true are history and no side. Also kind \"attribute\": an attribute value one source wrote over another's on the same element (from the trace), {id: \"attribute:<element>/<attribute>\", attribute, sides: [{id: \"…#earlier\", value, source, …}, {id: \"…#current\", value, written_by: \"T:…\", …}]}; leave those to the curator. To resolve one you are sure of, keep one side and mark the others with execute_kip: UPDATE ?old SET METADATA { superseded: true, superseded_by: \"<kept P:…>\", superseded_at: <now> } WHERE { ?old (id: \"<retired P:…>\") } (dry_run first); leave the ones you are unsure of to the curator. Changes nothing.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "types": {"type": "array", "items": {"type": "string"}, "description": "Only subjects of these concept types (default: all)."},
                "limit": {"type": "integer", "minimum": 1, "description": "At most this many listed (default 100); total counts them all."}
            },
            "additionalProperties": false
        }),
        operation: crate::Operation::Contradictions,
        destructive: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guide's decay sweep is the engine's one text of it (the bench
    /// and the tests run the same).
    #[test]
    fn the_agent_guides_decay_sweep_is_the_profiles() {
        let block = AGENT_GUIDE
            .split("```prolog")
            .map(|b| b.split("```").next().unwrap_or_default())
            .find(|b| b.contains("strength_decay_applied_at"))
            .expect("the guide shows the sweep");
        let guide: Vec<&str> = block
            .lines()
            .map(|l| l.strip_prefix("  ").unwrap_or(l))
            .filter(|l| !l.trim().is_empty())
            .collect();
        let engine = kip_nexus::profile::decay_sweep(10_000);
        assert_eq!(guide, engine.lines().collect::<Vec<_>>());
    }

    /// Every KIP example the agent guide shows parses: an agent copies
    /// them.
    #[test]
    fn the_agent_guides_examples_are_kip_that_parses() {
        let mut blocks = 0;
        for block in AGENT_GUIDE.split("```prolog").skip(1) {
            let text = block.split("```").next().unwrap_or_default();
            assert!(kip_lang::parse(text).is_ok(), "{text}");
            blocks += 1;
        }
        assert!(blocks > 0, "the guide shows KIP");
    }

    #[test]
    fn execute_kip_has_exactly_the_parameters_of_the_spec_and_our_two_extensions() {
        let schema = execute_kip().input_schema;
        let props = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let names: Vec<&str> = props.keys().map(String::as_str).collect();
        // The spec's four, in its order, then KIP Explorer's extensions.
        assert_eq!(
            names,
            [
                "command",
                "commands",
                "parameters",
                "dry_run",
                "reason",
                "idempotency_key"
            ]
        );
        assert_eq!(props["reason"]["type"], "string");
        assert_eq!(props["idempotency_key"]["type"], "string");
        assert_eq!(props["command"]["type"], "string");
        assert_eq!(props["commands"]["type"], "array");
        assert_eq!(props["parameters"]["type"], "object");
        assert_eq!(props["dry_run"]["type"], "boolean");
        // None is required: the spec marks all four optional (exactly one of
        // command / commands is enforced by the engine with a KIP_1001).
        assert!(schema.get("required").is_none());
        assert_eq!(schema["additionalProperties"], false);
    }

    #[test]
    fn the_parameter_descriptions_carry_the_spec_rules() {
        let schema = execute_kip().input_schema;
        let d = |k: &str| {
            schema["properties"][k]["description"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        };
        assert!(d("command").contains("Mutually exclusive with `commands`"));
        assert!(d("commands").contains("Mutually exclusive with `command`"));
        assert!(d("commands").contains("stops at the first error"));
        assert!(d("commands").contains("`{command, parameters}`"));
        assert!(d("parameters").contains("`name: :symptom_name`"));
        assert!(d("parameters").contains("cannot be embedded inside a string"));
        assert!(d("dry_run").contains("without executing"));
    }

    #[test]
    fn the_readonly_tool_takes_the_same_arguments() {
        assert_eq!(
            execute_kip().input_schema,
            execute_kip_readonly().input_schema
        );
        assert!(execute_kip_readonly().read_only());
        assert!(!execute_kip().read_only());
    }

    #[test]
    fn the_reference_covers_result_shapes_and_every_error_code() {
        for code in kip_lang::ErrorCode::ALL {
            assert!(
                KIP_REFERENCE.contains(code.as_str()),
                "{} is not documented",
                code.as_str()
            );
        }
        for needle in [
            "DESCRIBE PRIMER",
            "next_cursor",
            "upsert_concept_nodes",
            "deleted_propositions",
            "_type",
            "dry_run",
            "links_repointed",
            "\"updated\": n",
            "\"capsule\"",
            "_version",
        ] {
            assert!(
                KIP_REFERENCE.contains(needle),
                "the reference lacks {needle}"
            );
        }
    }

    #[test]
    fn every_example_command_in_the_descriptions_parses() {
        // The one-line examples an agent will copy must be valid KIP.
        for example in [
            r#"FIND(?d.name, ?d.attributes.risk_level) WHERE { ?d {type: "Drug"} (?d, "treats", {type: "Symptom", name: "Headache"}) } LIMIT 20"#,
            r#"UPSERT { CONCEPT ?e { {type: "Event", name: :name} SET ATTRIBUTES { content_summary: :summary } } } WITH METADATA { source: "conversation", confidence: 0.9 }"#,
            r#"DELETE CONCEPT ?x DETACH WHERE { ?x {type: "Drug", name: "OldDrug"} }"#,
            r#"SEARCH CONCEPT "aspirin" WITH TYPE "Drug" LIMIT 5"#,
            r#"DESCRIBE PROPOSITION TYPE "treats""#,
            r#"UPDATE ?p SET ATTRIBUTES { evidence_count: ADD(COALESCE(?p.attributes.evidence_count, 0), 1) } WHERE { ?p {type: "Preference", name: :name} }"#,
            r#"MERGE CONCEPT ?dup INTO ?keep WHERE { ?dup {type: "SkillTopic", name: "JS"} ?keep {type: "SkillTopic", name: "JavaScript"} }"#,
            r#"EXPORT ?n WHERE { ?n {type: "Drug"} } LIMIT 100"#,
        ] {
            assert!(
                EXECUTE_KIP.contains(example),
                "{example} is not in the description"
            );
            assert!(kip_lang::parse(example).is_ok(), "{example} does not parse");
        }
    }

    #[test]
    fn every_concrete_example_block_of_the_reference_parses() {
        // Fenced blocks without a language are KIP; those free of `<Name>` and
        // `[KEYWORD …]` template notation are concrete examples an agent may copy.
        let mut checked = 0;
        let mut lines = KIP_REFERENCE.lines();
        while let Some(line) = lines.next() {
            if line.trim() != "```" {
                continue;
            }
            let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            let text = block.join("\n");
            let template = text.as_bytes().windows(2).any(|w| {
                (w[0] == b'<' && w[1].is_ascii_alphabetic())
                    || (w[0] == b'[' && w[1].is_ascii_uppercase())
            });
            if template {
                continue;
            }
            if let Err(e) = kip_lang::parse(&text) {
                panic!("reference example does not parse:\n{text}\n{e}");
            }
            checked += 1;
        }
        assert!(checked >= 3, "only {checked} examples checked");
    }
}
