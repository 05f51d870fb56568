//! Diagnostics for an editor: every problem of a text with its exact range,
//! and what each command of the text is.
//!
//! Syntax and scope problems come from `kip-lang` (all of them, not just the
//! first); placeholders are checked when the editor sends parameters; KQL and
//! META are then checked against the live schema by the engine's dry run,
//! which reads a snapshot and writes nothing. The outline (each command's
//! kind, whether it writes, its placeholders) comes from the parsed tree, so
//! an editor never has to guess these from the text. This module converts
//! positions (byte offsets) into every unit an editor needs; it does no
//! checking of its own.

use kip_lang::ast::{self, Command};
use kip_lang::{KipError, Position};
use kip_nexus::{Mode, Nexus, Origin, RunOptions};
use serde_json::{Map, Value as Json};

use crate::types::{
    CommandKind, CommandOutline, Diagnostic, Placeholder, TextPosition, ValidateRequest,
    ValidateResponse,
};

pub(crate) fn validate(
    nexus: &Nexus,
    origin: &Origin,
    request: &ValidateRequest,
) -> ValidateResponse {
    let text = request.text.as_str();
    let commands = match kip_lang::parse(text) {
        Ok(commands) => commands,
        Err(errors) => return failed(text, 0, false, errors.0),
    };
    let count = u32::try_from(commands.len()).unwrap_or(u32::MAX);
    let pattern = diagram(text, &commands);
    let outline = commands.iter().map(|c| outline(text, c)).collect();
    let mut response = checked(text, commands, count, nexus, origin, request);
    response.pattern = pattern;
    response.outline = outline;
    response
}

/// What one parsed command is, with its range and its placeholders.
fn outline(text: &str, command: &Command) -> CommandOutline {
    let kind = match command.kind() {
        ast::CommandKind::Kql => CommandKind::Query,
        ast::CommandKind::Kml => CommandKind::Write,
        ast::CommandKind::Meta => CommandKind::Meta,
    };
    let span = command.span();
    let placeholders = kip_lang::placeholders_of(command)
        .into_iter()
        .map(|p| Placeholder {
            from: position(text, p.span.start),
            to: position(text, p.span.end),
            name: p.name,
        })
        .collect();
    CommandOutline {
        kind,
        writes: kind == CommandKind::Write,
        from: position(text, span.start),
        to: position(text, span.end),
        placeholders,
    }
}

/// The diagram of the WHERE block of a text that is one command with one:
/// FIND, DELETE, UPDATE, MERGE or EXPORT.
fn diagram(text: &str, commands: &[Command]) -> Option<Json> {
    let group = match commands {
        [Command::Find(q)] => &q.where_,
        [Command::Delete(d)] => &d.where_,
        [Command::Update(u)] => &u.where_,
        [Command::Merge(m)] => &m.where_,
        [Command::Export(e)] => &e.where_,
        _ => return None,
    };
    serde_json::to_value(kip_nexus::outline(text, group)).ok()
}

/// Placeholders, then the live schema, for a text that parses.
fn checked(
    text: &str,
    commands: Vec<Command>,
    count: u32,
    nexus: &Nexus,
    origin: &Origin,
    request: &ValidateRequest,
) -> ValidateResponse {
    let params = match &request.parameters {
        Some(p) => p.clone(),
        // Without the parameters panel's values the placeholders cannot be
        // bound, so the schema check (which needs bound commands) is skipped
        // rather than reporting every placeholder as missing.
        None if !kip_lang::placeholders(&commands).is_empty() => return clean(count, false),
        None => Map::new(),
    };
    let bound = match kip_lang::bind(text, commands, &params) {
        Ok(bound) => bound,
        Err(errors) => return failed(text, count, false, errors.0),
    };
    if bound.iter().any(|c| c.kind() == ast::CommandKind::Kml) {
        return clean(count, false);
    }
    let options = RunOptions::new(origin.clone()).with_mode(Mode::DryRun);
    match nexus.run(text, &bound, &options) {
        Ok(_) => clean(count, true),
        Err(e) => failed(text, count, true, expand(e)),
    }
}

/// No problem found; the caller adds the diagram and the outline.
fn clean(commands: u32, schema_checked: bool) -> ValidateResponse {
    ValidateResponse {
        ok: true,
        commands,
        schema_checked,
        diagnostics: Vec::new(),
        pattern: None,
        outline: Vec::new(),
    }
}

/// A response error may list every problem in `data.errors`.
fn expand(e: KipError) -> Vec<KipError> {
    if let Some(Json::Array(all)) = e.data.get("errors") {
        let parsed: Vec<KipError> = all
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        if !parsed.is_empty() {
            return parsed;
        }
    }
    vec![e]
}

fn failed(
    text: &str,
    commands: u32,
    schema_checked: bool,
    errors: Vec<KipError>,
) -> ValidateResponse {
    let mut diagnostics: Vec<Diagnostic> =
        errors.into_iter().map(|e| diagnostic(text, e)).collect();
    diagnostics.sort_by_key(|d| (d.from.offset, d.to.offset));
    ValidateResponse {
        ok: diagnostics.is_empty(),
        commands,
        schema_checked,
        diagnostics,
        pattern: None,
        outline: Vec::new(),
    }
}

fn data_usize(e: &KipError, key: &str) -> Option<usize> {
    e.data
        .get(key)
        .and_then(Json::as_u64)
        .and_then(|n| usize::try_from(n).ok())
}

/// One error as a diagnostic. An error without a position (rare: a problem
/// of the whole request) covers the whole text, so it is still visible.
pub(crate) fn diagnostic(text: &str, e: KipError) -> Diagnostic {
    let (start, end) = match data_usize(&e, "offset") {
        Some(offset) => {
            let length = data_usize(&e, "length").unwrap_or(0);
            (offset, offset.saturating_add(length))
        }
        None => (0, text.len()),
    };
    let suggestions = e
        .data
        .get("suggestions")
        .and_then(Json::as_array)
        .map(|all| {
            all.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let from = position(text, start);
    let to = position(text, end.max(start));
    Diagnostic {
        code: e.code.into(),
        message: e.message,
        hint: e.hint,
        from,
        to,
        suggestions,
    }
}

/// The position of byte `offset` (clamped to the text and to a character
/// boundary) in lines, columns, bytes and UTF-16 code units.
pub fn position(text: &str, offset: usize) -> TextPosition {
    let p = Position::of(text, offset);
    let utf16 = text[..p.offset].encode_utf16().count();
    let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    TextPosition {
        line: n(p.line),
        column: n(p.column),
        offset: n(p.offset),
        utf16: n(utf16),
    }
}
