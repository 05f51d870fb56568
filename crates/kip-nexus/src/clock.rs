//! The engine's clock: the one place a timestamp is made, so every module
//! that stamps (writes, the trace, Genesis) agrees on its format. A leaf:
//! it imports nothing of the crate.

/// The timestamp of a command: ISO 8601, UTC, whole seconds.
pub(crate) fn now() -> String {
    let format = time::format_description::well_known::Rfc3339;
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}
