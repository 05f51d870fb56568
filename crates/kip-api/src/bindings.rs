//! TypeScript declarations of the API's types, generated from the Rust
//! types with `ts-rs` into one file the UI imports:
//! `ui/src/transport/generated/kip-api.ts`.
//!
//! The test fails when the committed file differs from what the types
//! generate; `UPDATE_BINDINGS=1 cargo test -p kip-api bindings` rewrites it.

use std::path::PathBuf;

use ts_rs::{Config, TS};

use crate::Operation;
use crate::error::{ApiError, ErrorCode};
use crate::types::*;

const HEADER: &str = "\
// Generated from the Rust types of crates/kip-api by `UPDATE_BINDINGS=1 cargo test -p kip-api bindings`.
// Do not edit: a test fails when this file is stale.

/** Any JSON value (KIP results, attributes, metadata). */
export type JsonValue = number | string | boolean | null | JsonValue[] | { [key in string]?: JsonValue };
";

fn declaration<T: TS + ?Sized>(cfg: &Config, out: &mut String) {
    out.push('\n');
    if let Some(docs) = T::docs() {
        out.push_str(&docs);
    }
    out.push_str("export ");
    out.push_str(&T::decl(cfg));
    out.push('\n');
}

/// `ErrorCode` serializes to its wire form through `as_str`, which ts-rs
/// cannot see: its declaration is the union of every code's wire form.
fn error_codes(out: &mut String) {
    let codes: Vec<String> = ErrorCode::ALL
        .iter()
        .map(|c| format!("\"{}\"", c.as_str()))
        .collect();
    out.push_str(
        "\n/**\n * Every error code a host of this API can return: KIP's own codes, as the\n * engine defines them, plus the few a host adds. Closed on purpose: a new\n * code is a breaking change for the UI, which matches on all of them.\n */\n",
    );
    out.push_str(&format!("export type ErrorCode = {};\n", codes.join(" | ")));
}

/// Declares each type given, in order.
macro_rules! declare {
    ($cfg:expr, $out:expr; $($t:ty),* $(,)?) => { $( declaration::<$t>($cfg, $out); )* };
}

/// The whole generated file.
pub(crate) fn generate() -> String {
    // Counts and sequence numbers stay far below 2^53: plain numbers.
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(HEADER);
    error_codes(&mut out);
    request_types(&cfg, &mut out);
    engine_types(&cfg, &mut out);
    out.push_str(&crate::ops::typescript(&cfg));
    out
}

/// The API's own requests and responses.
fn request_types(cfg: &Config, out: &mut String) {
    declare!(cfg, out;
        ApiError,
        Operation,
        crate::NoBody,
        ExecuteRequest,
        BatchItem,
        KipResponse,
        ValidateRequest,
        ValidateResponse,
        CommandOutline,
        CommandKind,
        Placeholder,
        Diagnostic,
        TextPosition,
        ElementRef,
        Direction,
        NeighbourhoodRequest,
        NeighbourhoodResponse,
        PredicateCount,
        LinkPage,
        Link,
        ChangesRequest,
        ChangesResponse,
        Change,
        ChangeStats,
        ImportRequest,
        kip_capsule::ImportReport,
        kip_capsule::Format,
        kip_capsule::Status,
        kip_capsule::KnowledgeSchema,
        NexusInfo,
        FormatRequest,
        FormatResponse,
        WatchStatus,
        WatchedFile,
        ImportProgress,
        FileStatus,
        ResolveRequest,
        Identity,
        ResolveOptions,
        ResolveResponse,
        ResolveDebug,
        PropertyDebug,
        ParamsFrom,
        MissingInputs,
        MissingParam,
        StoreCheck,
        StoreCounts,
        StoreViolation,
        BackupRequest,
        BackupDone,
        BackupSchedule,
        BackupResponse,
        PathsRequest,
        PathsResponse,
        GraphPath,
        SettingsGetRequest,
        SettingsPutRequest,
        SettingsResponse,
    );
}

/// The engine's and the trace's types the answers carry.
fn engine_types(cfg: &Config, out: &mut String) {
    declare!(cfg, out;
        kip_nexus::Explain,
        kip_nexus::Step,
        kip_nexus::Cause,
        kip_nexus::Fix,
        kip_nexus::Range,
        kip_nexus::Pattern,
        kip_nexus::Block,
        kip_nexus::Node,
        kip_nexus::Edge,
        kip_nexus::Filter,
        kip_nexus::ElementChange,
        kip_nexus::ChangeOp,
        kip_nexus::ChangeKind,
        kip_nexus::ChangeEnd,
        kip_nexus::ChangeState,
        crate::TraceEntryRequest,
        crate::TraceAddRequest,
        crate::TraceFlagRequest,
        crate::TraceRevertRequest,
        crate::TraceRevertToRequest,
        crate::TraceImportRequest,
        crate::TraceImportResponse,
        crate::ListLogsRequest,
        crate::ListLogsResponse,
        crate::TracePromoteRequest,
        crate::TracePromoteResponse,
        kip_nexus::TraceFilter,
        kip_nexus::TracePage,
        kip_nexus::TraceEntry,
        kip_nexus::TraceEntryType,
        kip_nexus::Reverted,
        kip_nexus::RevertedTo,
        kip_nexus::duplicates::Duplicate,
        kip_nexus::duplicates::DuplicateEnd,
        crate::DuplicatesRequest,
        crate::DuplicatesResponse,
        crate::DismissRequest,
        crate::DismissResponse,
        kip_nexus::health::Health,
        kip_nexus::health::Counted,
        kip_nexus::health::Thresholds,
        crate::HealthResponse,
        crate::SchemaMapRequest,
        kip_nexus::overview::SchemaMap,
        kip_nexus::overview::TypeCount,
        kip_nexus::overview::EdgeCount,
        kip_nexus::overview::Hub,
        kip_nexus::triage::TriageList,
        kip_nexus::triage::TriageQuery,
        kip_nexus::triage::TriageItem,
        kip_nexus::triage::TriagePage,
        kip_nexus::triage_apply::TriageAction,
        kip_nexus::triage_apply::TriageApply,
        kip_nexus::triage_apply::TriageSkipped,
        kip_nexus::triage_apply::TriageOutcome,
        kip_nexus::contradictions::Contradictions,
        kip_nexus::contradictions::Contradiction,
        kip_nexus::contradictions::ContradictionSide,
        kip_nexus::contradictions::ContradictionEnd,
        kip_nexus::contradictions::Resolved,
        crate::ContradictionsRequest,
        crate::ContradictionResolveRequest,
        kip_nexus::AsOfPoint,
        kip_nexus::Diff,
        kip_nexus::DiffElement,
        kip_nexus::DiffState,
        kip_nexus::DiffTotals,
        crate::DiffRequest,
        crate::ProfileInfo,
        crate::ProfilesResponse,
        crate::InstallProfileRequest,
        crate::InstallProfileResponse,
        kip_nexus::HeatQuery,
        kip_nexus::ReadHeat,
        kip_nexus::Heat,
        kip_nexus::ReadsBy,
        kip_nexus::recall::RecallQuery,
        kip_nexus::recall::Recall,
        kip_nexus::recall::Recalled,
        kip_nexus::recall::ScoreParts,
        kip_nexus::recall::ContextLink,
        kip_nexus::recall::RecallAction,
        kip_nexus::recall::RecallActionOutcome,
        crate::RelatedRequest,
        kip_nexus::related::Related,
        kip_nexus::related::RelatedConcept,
    );
}

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/transport/generated/kip-api.ts")
}

#[test]
fn generated_typescript_is_up_to_date() {
    let generated = generate();
    let path = committed_path();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create the bindings folder");
        }
        std::fs::write(&path, &generated).expect("write the bindings");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: run `UPDATE_BINDINGS=1 cargo test -p kip-api bindings` and commit the result",
        path.display()
    );
}

#[test]
fn every_operation_and_error_code_is_in_the_bindings() {
    let generated = generate();
    for op in Operation::ALL {
        assert!(generated.contains(&format!("\"{}\"", op.name())), "{op:?}");
    }
    for code in ErrorCode::ALL {
        assert!(
            generated.contains(&format!("\"{}\"", code.as_str())),
            "{code:?}"
        );
    }
}
