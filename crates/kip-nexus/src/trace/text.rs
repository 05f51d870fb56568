//! The texts an entry keeps of its command: the kept head of a long
//! text, and the summary of what a write did.

use crate::stats::Stats;

use super::entry::MAX_COMMAND_TEXT;

/// The start of `text` that the trace keeps of it (what [`truncated`] to
/// [`MAX_COMMAND_TEXT`] cuts it to, one character more so that the cut
/// still shows): all a write that drops its text early needs to keep.
pub(crate) fn kept_head(text: &str) -> &str {
    if text.len() <= MAX_COMMAND_TEXT {
        return text;
    }
    let mut end = MAX_COMMAND_TEXT + 1;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[..end]
}

pub(super) fn truncated(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_owned(), true)
}

/// "UPSERT: created 2 concepts, 1 link; deleted 1 link".
pub(crate) fn summary(verb: &str, s: &Stats) -> String {
    let count = |n: u64, one: &str, many: &str| {
        (n > 0).then(|| format!("{n} {}", if n == 1 { one } else { many }))
    };
    let mut parts = Vec::new();
    for (what, concepts, links) in [
        ("created", s.concepts_created, s.propositions_created),
        ("updated", s.concepts_updated, s.propositions_updated),
        ("deleted", s.concepts_deleted, s.propositions_deleted),
    ] {
        let items: Vec<String> = [
            count(concepts, "concept", "concepts"),
            count(links, "link", "links"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !items.is_empty() {
            parts.push(format!("{what} {}", items.join(", ")));
        }
    }
    if parts.is_empty() {
        format!("{verb}: changed nothing")
    } else {
        format!("{verb}: {}", parts.join("; "))
    }
}

/// The verbs of a text's commands, e.g. "UPSERT" or "UPSERT, DELETE".
pub(crate) fn verbs(commands: &[kip_lang::ast::Command]) -> String {
    let mut out: Vec<&str> = Vec::new();
    for c in commands {
        add_verb(&mut out, c);
    }
    join_verbs(&out)
}

/// Adds `c`'s verb to `verbs` unless it is there already.
pub(crate) fn add_verb(verbs: &mut Vec<&'static str>, c: &kip_lang::ast::Command) {
    use kip_lang::ast::Command as C;
    let v = match c {
        C::Find(_) => "FIND",
        C::Describe(_) => "DESCRIBE",
        C::Search(_) => "SEARCH",
        C::Export(_) => "EXPORT",
        C::Upsert(_) => "UPSERT",
        C::Delete(_) => "DELETE",
        C::Update(_) => "UPDATE",
        C::Merge(_) => "MERGE",
    };
    if !verbs.contains(&v) {
        verbs.push(v);
    }
}

/// The verbs as a trace entry names them.
pub(crate) fn join_verbs(verbs: &[&str]) -> String {
    if verbs.is_empty() {
        "KIP".to_owned()
    } else {
        verbs.join(", ")
    }
}
