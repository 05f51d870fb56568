//! TypeScript declarations of the API's types, generated from the Rust
//! types with `ts-rs` into one file the UI imports:
//! `ui/src/transport/generated/kip-api.ts`.
//!
//! The test fails when the committed file differs from what the types
//! generate; `UPDATE_BINDINGS=1 cargo test -p kip-api bindings` rewrites it.

use std::path::PathBuf;

use ts_rs::{Config, TS};

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

/// The whole generated file.
pub(crate) fn generate() -> String {
    // Counts and sequence numbers stay far below 2^53: plain numbers.
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(HEADER);
    macro_rules! declare {
        ($($t:ty),* $(,)?) => { $( declaration::<$t>(&cfg, &mut out); )* };
    }
    declare!(
        ErrorCode,
        ApiError,
        Operation,
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
        NexusInfo,
        FormatRequest,
        FormatResponse,
        WatchStatus,
        WatchedFile,
        FileStatus,
        kip_nexus::explain::Explain,
        kip_nexus::explain::Step,
        kip_nexus::explain::Cause,
        kip_nexus::explain::Fix,
        kip_nexus::explain::Range,
        kip_nexus::pattern::Pattern,
        kip_nexus::pattern::Block,
        kip_nexus::pattern::Node,
        kip_nexus::pattern::Edge,
        kip_nexus::pattern::Filter,
    );
    out
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
