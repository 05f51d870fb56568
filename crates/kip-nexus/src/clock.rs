//! The engine's clock: the one place a timestamp is made, so every module
//! that stamps (writes, the trace, Genesis) agrees on its format, and the
//! one place a caller's time is read (time travel's `as_of`). A leaf: it
//! imports nothing of the crate.

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

/// The timestamp of a command: ISO 8601, UTC, whole seconds.
pub(crate) fn now() -> String {
    stamp(OffsetDateTime::now_utc())
}

fn stamp(t: OffsetDateTime) -> String {
    t.to_offset(UtcOffset::UTC)
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
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

/// A caller's time in the form [`now`] stamps (so the two compare as
/// strings), or `None` if it is not one: RFC 3339 (`2026-11-28T09:30:00Z`,
/// any offset, fractions dropped), or a UTC date and time without an offset
/// (`2026-11-28T09:30:00`, `2026-11-28 09:30`), or a date (midnight UTC).
pub(crate) fn parse(text: &str) -> Option<String> {
    let text = text.trim();
    if let Ok(t) = OffsetDateTime::parse(text, &Rfc3339) {
        return Some(stamp(t));
    }
    let formats = [
        "[year]-[month]-[day]T[hour]:[minute]:[second]",
        "[year]-[month]-[day] [hour]:[minute]:[second]",
        "[year]-[month]-[day]T[hour]:[minute]",
        "[year]-[month]-[day] [hour]:[minute]",
    ];
    for f in formats {
        let Ok(format) = time::format_description::parse_borrowed::<2>(f) else {
            continue;
        };
        if let Ok(t) = PrimitiveDateTime::parse(text, &format) {
            return Some(stamp(t.assume_utc()));
        }
    }
    let date = time::format_description::parse_borrowed::<2>("[year]-[month]-[day]").ok()?;
    let day = time::Date::parse(text, &date).ok()?;
    Some(stamp(day.midnight().assume_utc()))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn parse_reads_the_forms_a_curator_types_as_utc_stamps() {
        let z = Some("2026-11-28T09:30:00Z".to_owned());
        assert_eq!(parse("2026-11-28T09:30:00Z"), z);
        assert_eq!(parse("2026-11-28T10:30:00.750+01:00"), z);
        assert_eq!(parse("2026-11-28T09:30:00"), z);
        assert_eq!(parse(" 2026-11-28 09:30 "), z);
        assert_eq!(parse("2026-11-28"), Some("2026-11-28T00:00:00Z".into()));
        assert_eq!(parse("yesterday"), None);
        assert_eq!(parse("2026-13-01"), None);
    }
}
