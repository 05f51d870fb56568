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

/// The timestamp `days` days from now (before it when negative), in the
/// format of [`now`]: the cut-offs the curator's lists compare with.
pub(crate) fn days_from_now(days: f64) -> String {
    let format = time::format_description::well_known::Rfc3339;
    let shift = time::Duration::seconds_f64(days * 86_400.0);
    time::OffsetDateTime::now_utc()
        .checked_add(shift)
        .and_then(|t| t.replace_nanosecond(0).ok())
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}
