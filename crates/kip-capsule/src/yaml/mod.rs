//! YAML with positions: a bundle file becomes a tree of [`Node`]s that
//! remember the byte range they were written at, so every error can name its
//! line and column; and the writer's side, scalars and keys quoted so that
//! they read back as the same JSON value.
//!
//! The tree is built from `saphyr-parser`'s event stream rather than from a
//! generic YAML value, because bundle errors need what generic loaders drop:
//! the position of every key and value, duplicate keys (refused here, not
//! silently overwritten), and a bound on alias expansion. Scalars resolve by
//! the YAML 1.2 core schema (`saphyr`'s resolver), so `yes` is a string and
//! `1.0` a number, as JSON tools expect.
//!
//! Limits (each an error, never a crash): one document per file, nesting at
//! most [`MAX_DEPTH`] deep, alias expansion bounded by [`MAX_NODES`] or eight
//! nodes per byte of input, whichever is larger, no non-finite numbers (JSON
//! has none).

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr::{Scalar, ScalarStyle};
use saphyr_parser::{Event, Parser, Tag};
use serde_json::{Map, Number, Value as Json};

use crate::text::CharToByte;

/// How deep collections may nest: the one nesting limit of KIP Explorer,
/// as for KIP text (the tree is built without recursion, and every pass
/// over it — conversion to JSON, schema validation, the import's checks —
/// relies on this bound).
pub(crate) const MAX_DEPTH: usize = kip_lang::MAX_DEPTH;
/// How deep saphyr lets flow collections (`[…]`, `{…}`) nest: it counts
/// them in a `u8` (see [`flow_too_deep`]).
const MAX_FLOW_LEVELS: usize = u8::MAX as usize;
/// The floor of the node budget (aliases expand into copies).
pub(crate) const MAX_NODES: usize = 1_000_000;

/// A YAML node and the bytes it was written at.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Kind {
    Null,
    Bool(bool),
    Number(Number),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A mapping entry: the key as text, where it was written, and its value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) key_start: usize,
    pub(crate) key_end: usize,
    pub(crate) value: Node,
}

/// A YAML syntax problem at a byte offset.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct YamlError {
    pub(crate) message: String,
    pub(crate) hint: String,
    pub(crate) offset: usize,
}

impl Node {
    /// The entries of a mapping.
    pub(crate) fn entries(&self) -> Option<&[Entry]> {
        match &self.kind {
            Kind::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The entry `key` of a mapping.
    pub(crate) fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries()?.iter().find(|e| e.key == key)
    }

    /// The value of `key` in a mapping.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The node as JSON (key order kept).
    pub(crate) fn to_json(&self) -> Json {
        match &self.kind {
            Kind::Null => Json::Null,
            Kind::Bool(b) => Json::Bool(*b),
            Kind::Number(n) => Json::Number(n.clone()),
            Kind::Str(s) => Json::String(s.clone()),
            Kind::Seq(items) => Json::Array(items.iter().map(Node::to_json).collect()),
            Kind::Map(entries) => Json::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect::<Map<String, Json>>(),
            ),
        }
    }

    /// How to name the node's kind in a message.
    pub(crate) fn kind_name(&self) -> &'static str {
        match &self.kind {
            Kind::Null => "null",
            Kind::Bool(_) => "a boolean",
            Kind::Number(_) => "a number",
            Kind::Str(_) => "a string",
            Kind::Seq(_) => "a list",
            Kind::Map(_) => "a mapping",
        }
    }

    fn size(&self) -> usize {
        match &self.kind {
            Kind::Seq(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            Kind::Map(entries) => 1 + entries.iter().map(|e| 1 + e.value.size()).sum::<usize>(),
            _ => 1,
        }
    }
}

/// A collection being built.
enum Frame {
    Seq {
        items: Vec<Node>,
        start: usize,
        anchor: usize,
    },
    Map {
        entries: Vec<Entry>,
        key: Option<(String, usize, usize)>,
        start: usize,
        anchor: usize,
    },
}

fn error(offset: usize, message: impl Into<String>, hint: impl Into<String>) -> YamlError {
    YamlError {
        message: message.into(),
        hint: hint.into(),
        offset,
    }
}

/// Parses a YAML text of at most one document. `Ok(None)` for a text with
/// no document (empty, or only comments).
pub(crate) fn parse(text: &str) -> Result<Option<Node>, YamlError> {
    let mut tree = Tree::new(MAX_NODES.max(text.len().saturating_mul(8)));
    events(text, &mut tree)?;
    Ok(tree.root)
}

/// Where [`parse_items`] hands each item, with the bundle mapping's
/// entries before `items`; `false` stops it.
pub(crate) type ItemSink<'a> = dyn FnMut(Node, &[Entry]) -> bool + 'a;

/// How [`parse_items`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Items {
    /// Every item of the list went to the sink.
    Done,
    /// The sink asked to stop.
    Stopped,
    /// The document is not a list of items (or there is none), nor a
    /// mapping of `metadata` and then `items` only: the text is left for
    /// [`parse`] (for a mapping, some items may have gone to the sink
    /// before a key after `items` showed it).
    NotAList,
}

/// Parses a YAML text whose document is a list of items, or a mapping of
/// `metadata` and then `items` (a bundle's two shapes), handing each item
/// to `sink` as soon as it is complete instead of building the list, with
/// the mapping's entries before `items` (none for a list): what lets an
/// import apply a bundle's first items while it reads the rest. The
/// limits and errors are [`parse`]'s (a syntax error after some items is
/// still an error: the caller must drop what it did with them).
pub(crate) fn parse_items(text: &str, sink: &mut ItemSink<'_>) -> Result<Items, YamlError> {
    let mut tree = Tree::new(MAX_NODES.max(text.len().saturating_mul(8)));
    tree.sink = Some(sink);
    events(text, &mut tree)?;
    Ok(tree.ended.unwrap_or(Items::NotAList))
}

/// Feeds `text`'s events to `tree`, until the end or until the tree stops.
fn events(text: &str, tree: &mut Tree<'_>) -> Result<(), YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut bytes = CharToByte::new(text);
    while let Some(event) = parser.next_event() {
        let (event, span) = match event {
            Ok(e) => e,
            Err(e) if e.info() == "recursion limit exceeded" => {
                let offset = bytes.byte(e.marker().index());
                return Err(flow_too_deep(text, offset));
            }
            Err(e) => {
                let offset = bytes.byte(e.marker().index());
                return Err(error(
                    offset,
                    format!("invalid YAML: {}", e.info()),
                    "Check the indentation (spaces, not tabs), the `- ` before each list item, the `key: value` spacing, and that quotes and brackets are closed.",
                ));
            }
        };
        let start = bytes.byte(span.start.index());
        let end = bytes.byte(span.end.index()).max(start);
        if let Some((node, anchor)) = tree.event(event, start, end)? {
            tree.attach(node, anchor)?;
        }
        if tree.ended.is_some_and(|e| e != Items::Done) {
            break;
        }
    }
    Ok(())
}

/// saphyr counts flow levels in a `u8`, so its scanner (which reads ahead
/// of the events this reader counts) refuses a 256th level of `[…]` /
/// `{…}`. Under a block collection, that flow collection is at least 257
/// levels deep: past [`MAX_DEPTH`], and said as our own limit. Only a
/// document whose root is itself a flow collection meets saphyr's bound
/// first, one level before ours.
fn flow_too_deep(text: &str, offset: usize) -> YamlError {
    let hint = format!(
        "A bundle may nest lists and mappings at most {MAX_DEPTH} levels deep, and `[…]` / `{{…}}` at most {MAX_FLOW_LEVELS}. Flatten the structure, or store the deep value as a string."
    );
    let message = if root_is_flow(text) {
        format!(
            "this collection is nested deeper than {MAX_FLOW_LEVELS} levels of `[…]` and `{{…}}`"
        )
    } else {
        format!("this collection is nested deeper than {MAX_DEPTH} levels")
    };
    error(offset, message, hint)
}

/// Whether the document's root is a flow collection: its first token,
/// after comments, directives, `---`, anchors and tags, is `[` or `{`.
fn root_is_flow(text: &str) -> bool {
    for line in text.trim_start_matches('\u{feff}').lines() {
        let mut rest = line.trim_start();
        if rest.starts_with('#') || rest.starts_with('%') {
            continue;
        }
        if let Some(after) = rest.strip_prefix("---") {
            rest = after.trim_start();
        }
        while rest.starts_with(['&', '!']) {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            rest = rest[end..].trim_start();
        }
        if rest.is_empty() || rest.starts_with('#') {
            continue;
        }
        return rest.starts_with(['[', '{']);
    }
    false
}

/// The tree being built from the event stream, with its budgets.
struct Tree<'s> {
    /// How many nodes the document may have, aliases expanded.
    budget: usize,
    nodes: usize,
    /// The collections open around the current event, innermost last.
    stack: Vec<Frame>,
    /// Each anchored node, by anchor id, with its size.
    anchors: HashMap<usize, (Node, usize)>,
    root: Option<Node>,
    documents: usize,
    /// Where the items of a document that is a list go (see
    /// [`parse_items`]), instead of into the list.
    sink: Option<&'s mut ItemSink<'s>>,
    /// How the handing out of items ended: `Some` once the document
    /// showed whether its items can be handed out (or when the sink
    /// stopped).
    ended: Option<Items>,
    /// The depth of the list whose items go to the sink (1: the root, 2:
    /// the root mapping's `items`), 0 before one is found.
    streaming: usize,
}

impl<'s> Tree<'s> {
    fn new(budget: usize) -> Tree<'s> {
        Tree {
            budget,
            nodes: 0,
            stack: Vec::new(),
            anchors: HashMap::new(),
            root: None,
            documents: 0,
            sink: None,
            ended: None,
            streaming: 0,
        }
    }

    /// One parser event at bytes `start..end`: the node it completes, with
    /// its anchor id (0 for none), if it completes one.
    fn event(
        &mut self,
        event: Event<'_>,
        start: usize,
        end: usize,
    ) -> Result<Option<(Node, usize)>, YamlError> {
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing | Event::DocumentEnd => Ok(None),
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(error(
                        start,
                        "a bundle file holds one YAML document; a second one starts here",
                        "Put every item in one list, or split the documents into separate files.",
                    ));
                }
                Ok(None)
            }
            Event::Alias(id) => self.alias(id, start, end).map(Some),
            Event::Scalar(value, style, anchor, tag) => {
                self.nodes += 1;
                let kind = scalar(value, style, tag.as_ref()).map_err(|m| {
                    error(
                        start,
                        m,
                        "Remove the tag, or write a value of the type it names.",
                    )
                })?;
                Ok(Some((Node { kind, start, end }, anchor)))
            }
            Event::SequenceStart(anchor, _) => {
                let frame = Frame::Seq {
                    items: Vec::new(),
                    start,
                    anchor,
                };
                self.open(frame, start).map(|()| None)
            }
            Event::MappingStart(anchor, _) => {
                let frame = Frame::Map {
                    entries: Vec::new(),
                    key: None,
                    start,
                    anchor,
                };
                self.open(frame, start).map(|()| None)
            }
            Event::SequenceEnd => match self.stack.pop() {
                Some(Frame::Seq {
                    items,
                    start: s,
                    anchor,
                }) => Ok(Some((
                    Node {
                        kind: Kind::Seq(items),
                        start: s,
                        end,
                    },
                    anchor,
                ))),
                _ => Err(error(start, "unbalanced YAML structure", "")),
            },
            Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Map {
                    entries,
                    start: s,
                    anchor,
                    ..
                }) => Ok(Some((
                    Node {
                        kind: Kind::Map(entries),
                        start: s,
                        end,
                    },
                    anchor,
                ))),
                _ => Err(error(start, "unbalanced YAML structure", "")),
            },
        }
    }

    /// A copy of the anchored node, within the node budget.
    fn alias(&mut self, id: usize, start: usize, end: usize) -> Result<(Node, usize), YamlError> {
        let Some((node, size)) = self.anchors.get(&id) else {
            return Err(error(
                start,
                "this alias names no anchor defined before it",
                "Define `&name` before using `*name`.",
            ));
        };
        self.nodes = self.nodes.saturating_add(*size);
        if self.nodes > self.budget {
            return Err(error(
                start,
                "aliases expand into too many nodes",
                "Write the repeated values out, or use fewer nested aliases.",
            ));
        }
        let mut copy = node.clone();
        copy.start = start;
        copy.end = end.max(start);
        Ok((copy, 0))
    }

    /// Opens a collection, within the nesting limit.
    fn open(&mut self, frame: Frame, start: usize) -> Result<(), YamlError> {
        if self.sink.is_some() && self.ended.is_none() {
            // A list at the root, or as the root mapping's `items`: its
            // items are handed out.
            let under_items = matches!(
                self.stack.as_slice(),
                [Frame::Map { key: Some((k, _, _)), .. }] if k == "items"
            );
            match (&frame, self.stack.len()) {
                (Frame::Seq { .. }, 0) => self.streaming = 1,
                (Frame::Seq { .. }, 1) if under_items => self.streaming = 2,
                (Frame::Map { .. }, 1) if under_items => self.ended = Some(Items::NotAList),
                _ => {}
            }
            if self.streaming > 0 {
                self.ended = Some(Items::Done);
            }
        }
        self.nodes += 1;
        if self.stack.len() >= MAX_DEPTH {
            return Err(error(
                start,
                format!("this collection is nested deeper than {MAX_DEPTH} levels"),
                format!(
                    "A bundle may nest lists and mappings at most {MAX_DEPTH} levels deep. Flatten the structure, or store the deep value as a string."
                ),
            ));
        }
        self.stack.push(frame);
        Ok(())
    }

    /// Puts a completed node in its place: the root, the next item of a
    /// list, or a mapping's next key or the value of its pending key.
    fn attach(&mut self, node: Node, anchor: usize) -> Result<(), YamlError> {
        if self.nodes > self.budget {
            return Err(error(
                node.start,
                "the document has too many nodes",
                "Split the bundle into several files.",
            ));
        }
        if anchor > 0 {
            let size = node.size();
            self.anchors.insert(anchor, (node.clone(), size));
        }
        let streamed = self.stack.len() == self.streaming && self.ended == Some(Items::Done);
        if streamed && let Some(sink) = self.sink.as_mut() {
            let head: &[Entry] = match self.stack.first() {
                Some(Frame::Map { entries, .. }) => entries,
                _ => &[],
            };
            if !sink(node, head) {
                self.ended = Some(Items::Stopped);
            }
            return Ok(());
        }
        let root_map = self.stack.len() == 1 && self.sink.is_some();
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => {
                    let k = map_key(&node, entries)?;
                    // A bundle mapping's keys: `metadata`, then `items`,
                    // and nothing after the items handed out.
                    let after_items = entries.iter().any(|e| e.key == "items");
                    if root_map
                        && self.ended != Some(Items::Stopped)
                        && (after_items || !matches!(k.0.as_str(), "metadata" | "items"))
                    {
                        self.ended = Some(Items::NotAList);
                    }
                    *key = Some(k);
                }
                Some((k, key_start, key_end)) => entries.push(Entry {
                    key: k,
                    key_start,
                    key_end,
                    value: node,
                }),
            },
        }
        Ok(())
    }
}

/// A node read as a mapping key: its text and bytes, refused when it is a
/// collection or repeats a key of the mapping.
fn map_key(node: &Node, entries: &[Entry]) -> Result<(String, usize, usize), YamlError> {
    let text = match &node.kind {
        Kind::Str(s) => s.clone(),
        Kind::Null => "null".to_owned(),
        Kind::Bool(b) => b.to_string(),
        Kind::Number(n) => n.to_string(),
        Kind::Seq(_) | Kind::Map(_) => {
            return Err(error(
                node.start,
                "a mapping key must be plain text, not a list or a mapping",
                "Write `key: value` with a text key.",
            ));
        }
    };
    if entries.iter().any(|e| e.key == text) {
        return Err(error(
            node.start,
            format!("the key `{text}` appears twice in this mapping"),
            "Keep one of them: YAML keys are unique, and a second one would silently replace the first.",
        ));
    }
    Ok((text, node.start, node.end))
}

/// Resolves a scalar by the YAML 1.2 core schema.
fn scalar(
    value: Cow<'_, str>,
    style: ScalarStyle,
    tag: Option<&Cow<'_, Tag>>,
) -> Result<Kind, String> {
    let integer_like = style == ScalarStyle::Plain && is_integer_text(&value);
    let text = value.clone();
    let resolved = Scalar::parse_from_cow_and_metadata(value, style, tag).ok_or_else(|| {
        let name = tag.map(|t| t.to_string()).unwrap_or_default();
        format!("`{text}` is not a valid {name} value")
    })?;
    Ok(match resolved {
        Scalar::Null => Kind::Null,
        Scalar::Boolean(b) => Kind::Bool(b),
        Scalar::Integer(i) => Kind::Number(i.into()),
        Scalar::FloatingPoint(f) => {
            // Integers past i64 resolve as floats; keep those that fit a u64 exact.
            if integer_like && let Ok(u) = text.trim_start_matches('+').parse::<u64>() {
                return Ok(Kind::Number(u.into()));
            }
            match Number::from_f64(f.into_inner()) {
                Some(n) => Kind::Number(n),
                None => {
                    return Err(format!(
                        "`{text}` is not a finite number, and JSON numbers must be"
                    ));
                }
            }
        }
        Scalar::String(s) => Kind::Str(s.into_owned()),
    })
}

fn is_integer_text(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

// ------------------------------------------------------------------ writing

/// Whether a string can be written without quotes and read back as the
/// same string by any YAML reader (1.1 readers included, hence the
/// conservative character set and the quoted `yes` / `no` / `on` / `off`).
fn plain_ok(s: &str) -> bool {
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
fn looks_numeric(s: &str) -> bool {
    let t = s.strip_prefix(['+', '-', '.']).unwrap_or(s);
    t.chars().next().is_some_and(|c| c.is_ascii_digit())
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:".contains(c))
}

/// Characters YAML does not allow raw in a double-quoted string.
fn needs_escape(c: char) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(text: &str) -> Json {
        parse(text).expect("parses").expect("a document").to_json()
    }

    #[test]
    fn resolves_scalars_by_the_core_schema() {
        assert_eq!(
            value("a: yes\nb: 1.5\nc: ~\nd: '12'\ne: true\nf: 0x1F\ng: 18446744073709551615\nh:"),
            json!({"a": "yes", "b": 1.5, "c": null, "d": "12", "e": true, "f": 31, "g": 18446744073709551615u64, "h": null})
        );
    }

    #[test]
    fn records_byte_positions_of_keys_and_values() {
        let text = "- type: Drug\n  name: 阿司匹林\n  risk: 2\n";
        let root = parse(text).expect("parses").expect("doc");
        let Kind::Seq(items) = &root.kind else {
            panic!("a list")
        };
        let risk = items[0].entry("risk").expect("risk");
        assert_eq!(&text[risk.key_start..risk.key_end], "risk");
        assert_eq!(&text[risk.value.start..risk.value.end], "2");
        let name = items[0].get("name").expect("name");
        assert_eq!(&text[name.start..name.end], "阿司匹林");
        assert_eq!(items[0].start, text.find("type").expect("type"));
    }

    #[test]
    fn refuses_duplicate_keys_several_documents_and_bad_syntax() {
        let dup = parse("a: 1\nb: 2\na: 3\n").expect_err("duplicate");
        assert_eq!(dup.offset, 10);
        let two = parse("a: 1\n---\nb: 2\n").expect_err("two documents");
        assert!(two.message.contains("one YAML document"), "{two:?}");
        let bad = parse("a: [1, 2\nb: 3\n").expect_err("unclosed");
        assert!(bad.message.starts_with("invalid YAML"), "{bad:?}");
        assert!(parse("x: .inf").is_err());
        assert_eq!(parse("# only a comment\n").expect("parses"), None);
    }

    /// Every YAML text the tests and the fuzzer keep: the corpus of the
    /// `yaml_import` fuzz target, the examples and the broken bundles.
    fn corpus() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        for dir in [
            root.join("../../fuzz/corpus/yaml_import"),
            root.join("../../capsules/examples"),
            root.join("tests/data/err"),
        ] {
            for entry in std::fs::read_dir(&dir).expect("corpus folder") {
                let path = entry.expect("entry").path();
                let is_kip = path.extension().is_some_and(|e| e == "kip");
                if let (false, Ok(bytes)) = (is_kip, std::fs::read(&path)) {
                    out.push(String::from_utf8_lossy(&bytes).into_owned());
                }
            }
        }
        out
    }

    #[test]
    fn handing_items_out_gives_what_the_whole_tree_holds() {
        let corpus = corpus();
        assert!(corpus.len() > 100, "{}", corpus.len());
        for text in &corpus {
            let mut items = Vec::new();
            let mut heads = Vec::new();
            let streamed = parse_items(text, &mut |n, head| {
                items.push(n);
                heads.push(head.to_vec());
                true
            });
            match (parse(text), streamed) {
                (Ok(Some(root)), Ok(Items::Done)) => {
                    let (list, head) = streamable(&root).expect("a streamable document");
                    assert_eq!(items, list, "{text:?}");
                    assert!(heads.iter().all(|h| h == head), "{text:?}");
                }
                (Err(whole), Err(handed)) => assert_eq!(whole, handed, "{text:?}"),
                // Not a bundle's list: the rest, errors included, is left
                // to `parse`.
                (Ok(root), Ok(Items::NotAList)) => {
                    assert!(root.as_ref().and_then(streamable).is_none(), "{text:?}");
                }
                (Err(_), Ok(Items::NotAList)) => {}
                (whole, handed) => panic!("{text:?}: {whole:?} but {handed:?}"),
            }
        }
    }

    /// The items a document hands out, and the mapping entries before
    /// them: a list's, or those of a mapping of `metadata` then `items`.
    fn streamable(root: &Node) -> Option<(Vec<Node>, &[Entry])> {
        match &root.kind {
            Kind::Seq(list) => Some((list.clone(), &[])),
            Kind::Map(entries) => {
                let at = entries.iter().position(|e| e.key == "items")?;
                let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
                let Kind::Seq(list) = &entries[at].value.kind else {
                    return None;
                };
                matches!(keys.as_slice(), ["items"] | ["metadata", "items"])
                    .then(|| (list.clone(), &entries[..at]))
            }
            _ => None,
        }
    }

    #[test]
    fn a_bundle_mapping_hands_out_its_items_after_its_metadata() {
        let text = "metadata: {source: a}\nitems:\n  - x\n  - y\n";
        let mut seen = Vec::new();
        let ended = parse_items(text, &mut |n, head| {
            seen.push((
                n.to_json(),
                head.iter().map(|e| e.key.clone()).collect::<Vec<_>>(),
            ));
            true
        });
        assert_eq!(ended, Ok(Items::Done));
        let meta = vec!["metadata".to_owned()];
        assert_eq!(seen, [(json!("x"), meta.clone()), (json!("y"), meta)]);
        // A key after the items, or another key: left to `parse`.
        for text in [
            "items: [x]\nmetadata: {}\n",
            "items: [x]\nextra: 1\n",
            "type: Drug\nname: A\n",
            "items: {a: 1}\n",
            "metadata: {}\n",
        ] {
            assert_eq!(
                parse_items(text, &mut |_, _| true),
                Ok(Items::NotAList),
                "{text}"
            );
        }
    }

    #[test]
    fn a_sink_that_stops_gets_no_more_items() {
        let text = "- a\n- b\n- c\n- [unclosed\n";
        let mut seen = Vec::new();
        let ended = parse_items(text, &mut |n, _| {
            seen.push(n.to_json());
            seen.len() < 2
        });
        assert_eq!(ended, Ok(Items::Stopped));
        assert_eq!(seen, [json!("a"), json!("b")]);
        assert_eq!(parse_items("{a: 1}", &mut |_, _| true), Ok(Items::NotAList));
        assert_eq!(parse_items("", &mut |_, _| true), Ok(Items::NotAList));
        assert_eq!(parse_items("[]", &mut |_, _| true), Ok(Items::Done));
    }

    #[test]
    fn bounds_alias_expansion() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let e = parse(&text).expect_err("a billion laughs");
        assert!(e.message.contains("too many"), "{e:?}");
        assert_eq!(
            value("base: &m {source: x}\nitem: *m\n"),
            json!({"base": {"source": "x"}, "item": {"source": "x"}})
        );
    }

    #[test]
    fn bounds_nesting() {
        let text = "[".repeat(MAX_DEPTH + 5);
        assert!(parse(&text).is_err());
    }

    #[test]
    fn written_strings_read_back_unchanged() {
        for s in [
            "Aspirin",
            "Brain Fog",
            "阿司匹林",
            "yes",
            "No",
            "1.0",
            "0x10",
            "1_000",
            "12:30",
            "a: b",
            "a #b",
            "- x",
            "#x",
            "",
            " padded ",
            "trailing:",
            "line\nbreak",
            "tab\there",
            "quote \" and \\ backslash",
            "nel\u{85}x",
            "ls\u{2028}x",
            "bom\u{feff}",
            "null",
            "~",
            "@at",
            "`tick",
            "%pct",
            "C9H8O4",
            "500mg",
            "😀 emoji",
            "---",
            "...",
            "e1",
            ".5",
            "-",
            "?",
        ] {
            let doc = format!("k: {}\nf: {}\n", string(s), flow(&json!([s, {"x": s}])));
            assert_eq!(
                value(&doc),
                json!({"k": s, "f": [s, {"x": s}]}),
                "string {s:?} written as {doc:?}"
            );
            let keyed = format!("{}: 1\n", key(s));
            if !s.is_empty() {
                assert_eq!(value(&keyed), json!({ s: 1 }), "key {s:?}");
            }
        }
    }

    #[test]
    fn written_numbers_read_back_unchanged() {
        for n in [
            json!(0),
            json!(-7),
            json!(1.5),
            json!(-0.25),
            json!(1e300),
            json!(1.0),
            json!(i64::MAX),
            json!(u64::MAX),
        ] {
            let doc = format!("k: {}\n", flow(&n));
            assert_eq!(value(&doc), json!({ "k": n }), "{doc}");
        }
    }
}
