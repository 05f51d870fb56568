//! Time windows and step buckets, in UTC (the seed leaves time zones for
//! later). A series has one bucket per calendar `step` — day, ISO week
//! (from Monday), month, quarter or year — from the bucket holding `start`
//! to the one holding `end`; each bucket is half-open `[t, next t)`.

use time::{Date, Duration, Month, OffsetDateTime, Time};

/// The most buckets one series may have.
pub const MAX_BUCKETS: usize = 10_000;

/// A series step: one calendar unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Step {
    pub fn from_name(name: &str) -> Option<Step> {
        Some(match name {
            "day" => Step::Day,
            "week" => Step::Week,
            "month" => Step::Month,
            "quarter" => Step::Quarter,
            "year" => Step::Year,
            _ => return None,
        })
    }

    /// The start of the bucket holding `date`.
    fn floor(self, date: Date) -> Date {
        let first_of =
            |month: Month| Date::from_calendar_date(date.year(), month, 1).unwrap_or(date);
        match self {
            Step::Day => date,
            Step::Week => {
                date - Duration::days(i64::from(date.weekday().number_days_from_monday()))
            }
            Step::Month => first_of(date.month()),
            Step::Quarter => {
                let q = (u8::from(date.month()) - 1) / 3;
                first_of(Month::try_from(q * 3 + 1).unwrap_or(Month::January))
            }
            Step::Year => first_of(Month::January),
        }
    }

    /// The start of the bucket after the one starting at `date`.
    fn next(self, date: Date) -> Option<Date> {
        let months = |n: i32| {
            let index = date.year() * 12 + i32::from(u8::from(date.month())) - 1 + n;
            let month = Month::try_from(u8::try_from(index.rem_euclid(12) + 1).ok()?).ok()?;
            Date::from_calendar_date(index.div_euclid(12), month, 1).ok()
        };
        match self {
            Step::Day => date.next_day(),
            Step::Week => date.checked_add(Duration::days(7)),
            Step::Month => months(1),
            Step::Quarter => months(3),
            Step::Year => months(12),
        }
    }
}

fn to_date(ms: i64) -> Option<Date> {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .map(OffsetDateTime::date)
}

fn to_ms(date: Date) -> i64 {
    let t = date.with_time(Time::MIDNIGHT).assume_utc();
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
}

/// Whether `ms` is a time the calendar can hold (years −9999 to 9999).
pub fn in_range(ms: i64) -> bool {
    to_date(ms).is_some()
}

/// The buckets `[t, next)` of a series from `start` to `end` (ms), or
/// `Err(count)` when there would be more than [`MAX_BUCKETS`] (`count` is
/// a lower bound).
pub fn buckets(start: i64, end: i64, step: Step) -> Result<Vec<(i64, i64)>, usize> {
    let (Some(first), Some(last)) = (to_date(start), to_date(end)) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut at = step.floor(first);
    while at <= last {
        let Some(next) = step.next(at) else {
            break;
        };
        if out.len() == MAX_BUCKETS {
            return Err(out.len() + 1);
        }
        out.push((to_ms(at), to_ms(next)));
        at = next;
    }
    Ok(out)
}

/// ISO 8601 in UTC with whole seconds (`2024-03-01T00:00:00Z`), the form
/// the engine writes its own timestamps in, so that string comparisons in
/// a FILTER order like times.
pub fn iso(ms: i64) -> String {
    let format = time::format_description::well_known::Rfc3339;
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms.div_euclid(1000)) * 1_000_000_000)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAN_15_2024: i64 = 1_705_312_800_000; // 2024-01-15T10:00:00Z

    #[test]
    fn months_are_calendar_buckets() {
        let end = JAN_15_2024 + 365 * 86_400_000; // 2025-01-14
        let b = buckets(JAN_15_2024, end, Step::Month).expect("13 buckets");
        assert_eq!(b.len(), 13);
        assert_eq!(iso(b[0].0), "2024-01-01T00:00:00Z");
        assert_eq!(iso(b[1].0), "2024-02-01T00:00:00Z");
        assert_eq!(iso(b[12].1), "2025-02-01T00:00:00Z");
    }

    #[test]
    fn weeks_start_on_monday_and_quarters_on_their_first_month() {
        let w = buckets(JAN_15_2024, JAN_15_2024, Step::Week).expect("one");
        assert_eq!(iso(w[0].0), "2024-01-15T00:00:00Z"); // a Monday
        let q = buckets(
            JAN_15_2024 + 60 * 86_400_000,
            JAN_15_2024 + 60 * 86_400_000,
            Step::Quarter,
        )
        .expect("one");
        assert_eq!(iso(q[0].0), "2024-01-01T00:00:00Z");
        assert_eq!(iso(q[0].1), "2024-04-01T00:00:00Z");
        let y = buckets(JAN_15_2024, JAN_15_2024, Step::Year).expect("one");
        assert_eq!(iso(y[0].1), "2025-01-01T00:00:00Z");
    }

    #[test]
    fn too_many_buckets_are_refused() {
        let thirty_years = 30 * 366 * 86_400_000;
        assert!(buckets(0, thirty_years, Step::Day).is_err());
        assert!(buckets(0, thirty_years, Step::Month).is_ok());
    }
}
