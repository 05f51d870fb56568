//! Building the tree from the parser's events: collections opened and
//! closed, keys checked for duplicates, aliases expanded within a budget,
//! scalars resolved by the core schema.

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr::{Scalar, ScalarStyle};
use saphyr_parser::{Event, Parser, Tag};
use serde_json::Number;

use crate::text::CharToByte;

use super::{Entry, ItemSink, Items, Kind, MAX_DEPTH, MAX_FLOW_LEVELS, Node, YamlError, error};

/// A collection being built.
pub(super) enum Frame {
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

/// Feeds `text`'s events to `tree`, until the end or until the tree stops.
pub(super) fn events(text: &str, tree: &mut Tree<'_>) -> Result<(), YamlError> {
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
pub(super) fn flow_too_deep(text: &str, offset: usize) -> YamlError {
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
pub(super) fn root_is_flow(text: &str) -> bool {
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
pub(super) struct Tree<'s> {
    /// How many nodes the document may have, aliases expanded.
    pub(super) budget: usize,
    pub(super) nodes: usize,
    /// The collections open around the current event, innermost last.
    pub(super) stack: Vec<Frame>,
    /// Each anchored node, by anchor id, with its size.
    pub(super) anchors: HashMap<usize, (Node, usize)>,
    pub(super) root: Option<Node>,
    pub(super) documents: usize,
    /// Where the items of a document that is a list go (see
    /// [`parse_items`]), instead of into the list.
    pub(super) sink: Option<&'s mut ItemSink<'s>>,
    /// How the handing out of items ended: `Some` once the document
    /// showed whether its items can be handed out (or when the sink
    /// stopped).
    pub(super) ended: Option<Items>,
    /// The depth of the list whose items go to the sink (1: the root, 2:
    /// the root mapping's `items`), 0 before one is found.
    pub(super) streaming: usize,
}

impl<'s> Tree<'s> {
    pub(super) fn new(budget: usize) -> Tree<'s> {
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
    pub(super) fn event(
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
    pub(super) fn alias(
        &mut self,
        id: usize,
        start: usize,
        end: usize,
    ) -> Result<(Node, usize), YamlError> {
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
    pub(super) fn open(&mut self, frame: Frame, start: usize) -> Result<(), YamlError> {
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
    pub(super) fn attach(&mut self, node: Node, anchor: usize) -> Result<(), YamlError> {
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
pub(super) fn map_key(node: &Node, entries: &[Entry]) -> Result<(String, usize, usize), YamlError> {
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
pub(super) fn scalar(
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

pub(super) fn is_integer_text(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}
