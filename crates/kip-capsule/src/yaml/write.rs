//! The writer's side: scalars and keys quoted only where a YAML reader
//! would otherwise read back another value.

use std::borrow::Cow;

use saphyr::Scalar;
use serde_json::Value as Json;

/// Whether a string can be written without quotes and read back as the
/// same string by any YAML reader (1.1 readers included, hence the
/// conservative character set and the quoted `yes` / `no` / `on` / `off`).
pub(super) fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let last = s.chars().next_back().unwrap_or(first);
    if first.is_whitespace() || last.is_whitespace() || last == ':' {
        return false;
    }
    if "-?:,[]{}#&*!|>'\"%@`~".contains(first) {
        return false;
    }
    if s.contains(": ") || s.contains(" #") || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    if s.chars()
        .any(|c| c.is_control() || needs_escape(c) || ",[]{}\"'\\#".contains(c))
    {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null" | "~"
    ) {
        return false;
    }
    // Anything the core schema would read as a number, a boolean or null.
    matches!(Scalar::parse_from_cow(Cow::Borrowed(s)), Scalar::String(_)) && !looks_numeric(s)
}

/// Texts a YAML 1.1 reader might take for a number (`1_000`, `0b1`, `1:30`).
pub(super) fn looks_numeric(s: &str) -> bool {
    let t = s.strip_prefix(['+', '-', '.']).unwrap_or(s);
    t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:".contains(c))
}

/// Characters YAML does not allow raw in a double-quoted string.
pub(super) fn needs_escape(c: char) -> bool {
    matches!(
        c,
        '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
}

/// A double-quoted YAML string (JSON escapes are YAML escapes).
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() || needs_escape(c) => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A string scalar: plain when safe, else double-quoted.
pub(crate) fn string(s: &str) -> String {
    if plain_ok(s) { s.to_owned() } else { quoted(s) }
}

/// A mapping key.
pub(crate) fn key(k: &str) -> String {
    let simple = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if simple && plain_ok(k) {
        k.to_owned()
    } else {
        quoted(k)
    }
}

/// A value in flow style (`{a: 1, b: [x, y]}`), on one line.
pub(crate) fn flow(value: &Json) -> String {
    match value {
        Json::Null => "null".to_owned(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => string(s),
        Json::Array(items) => {
            let inner: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", inner.join(", "))
        }
        Json::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k), flow(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}
