//! Reading a bundle while the YAML parser is still completing it: the
//! ops of each chunk of items handed on as soon as they are read.

use serde_json::{Map, Value as Json};

use crate::model::Model;
use crate::ops::Op;
use crate::report::ImportError;
use crate::text::LineIndex;
use crate::yaml::{self, Entry, Node};

use super::reader::Reader;
use super::shape::metadata_of;
use super::{define, is_definition};

/// How [`stream`] ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Streamed {
    /// Every item was read without an error and went to the sink; the
    /// number of items.
    Done(usize),
    /// The bundle is not one [`stream`] reads (not a list nor a mapping of
    /// `metadata` then `items`, a definition after other items, an error
    /// anywhere), or the sink
    /// stopped: nothing it handed out counts, and [`read`] must read the
    /// whole file.
    Declined,
}

/// What [`stream`] keeps between items.
pub(super) struct Streaming<'a> {
    pub(super) text: &'a str,
    pub(super) lines: &'a LineIndex,
    pub(super) stored: &'a dyn Fn(&str, &str, &str) -> bool,
    /// The model being built from the definitions at the top, until the
    /// first other item turns it into the reader's.
    pub(super) model: Option<Model>,
    /// Those definitions, read once the model is complete.
    pub(super) definitions: Vec<(usize, Node)>,
    pub(super) reader: Option<Reader<'a>>,
    /// The bundle mapping's default metadata, read with the first item.
    pub(super) defaults: Option<Map<String, Json>>,
    pub(super) ops: Vec<Op>,
    pub(super) errors: Vec<ImportError>,
    pub(super) items: usize,
}

impl<'a> Streaming<'a> {
    /// Reads one item into an op; `false` if it has an error.
    pub(super) fn read(&mut self, i: usize, item: &Node) -> bool {
        let Some(reader) = self.reader.as_mut() else {
            return false;
        };
        reader.item(i, item, &mut self.errors);
        reader.remember(item);
        if !self.errors.is_empty() {
            return false;
        }
        self.ops.push(reader.op(i, item));
        true
    }

    /// Completes the model and reads the definitions held so far.
    pub(super) fn start(&mut self) -> bool {
        let Some(model) = self.model.take() else {
            return true;
        };
        self.reader = Some(Reader::new(
            self.text,
            self.lines,
            model,
            self.defaults.take().unwrap_or_default(),
            self.stored,
        ));
        for (i, item) in std::mem::take(&mut self.definitions) {
            if !self.read(i, &item) {
                return false;
            }
        }
        true
    }

    /// Takes item number `self.items`, after the bundle mapping's entries
    /// `head` (none for a list): `false` to stop.
    pub(super) fn item(&mut self, item: Node, head: &[Entry]) -> bool {
        if self.items == 0 {
            let mut defaults = Map::new();
            let unplaced = |e: ImportError, _: Option<String>, _: usize| e;
            for e in head.iter().filter(|e| e.key == "metadata") {
                metadata_of(e, &mut defaults, &unplaced, &mut self.errors);
            }
            if !self.errors.is_empty() {
                return false;
            }
            self.defaults = Some(defaults);
        }
        let i = self.items;
        self.items += 1;
        if let Some(model) = self.model.as_mut() {
            if is_definition(&item) {
                define(model, &item);
                self.definitions.push((i, item));
                return true;
            }
            if !self.start() {
                return false;
            }
        } else if is_definition(&item) {
            // `read` would check the items above against this definition.
            return false;
        }
        self.read(i, &item)
    }
}

/// Reads a bundle (a list, or a mapping of `metadata` then `items`) as
/// the YAML parser completes its items: `sink` gets the ops of every
/// `chunk` items (and the number of items read so far) while the rest of
/// the file is still being parsed, and returns `false` to stop. The ops are those [`read`] makes of the
/// same items, given that the bundle's definitions come before its other
/// items (so every item is checked against the same model as in [`read`])
/// and no item has an error; anything else declines, and [`read`] then
/// reports it in full.
pub(crate) fn stream(
    text: &str,
    lines: &LineIndex,
    live: &Model,
    stored: &dyn Fn(&str, &str, &str) -> bool,
    chunk: usize,
    sink: &mut dyn FnMut(Vec<Op>, usize) -> bool,
) -> Streamed {
    let mut st = Streaming {
        text,
        lines,
        stored,
        model: Some(live.clone()),
        definitions: Vec::new(),
        reader: None,
        defaults: None,
        ops: Vec::with_capacity(chunk),
        errors: Vec::new(),
        items: 0,
    };
    let mut on_item = |item: Node, head: &[Entry]| {
        if !st.item(item, head) {
            return false;
        }
        if st.ops.len() < chunk {
            return true;
        }
        let ops = std::mem::replace(&mut st.ops, Vec::with_capacity(chunk));
        sink(ops, st.items)
    };
    match yaml::parse_items(text, &mut on_item) {
        Ok(yaml::Items::Done) => {}
        Ok(yaml::Items::Stopped | yaml::Items::NotAList) | Err(_) => return Streamed::Declined,
    }
    if !st.start() {
        return Streamed::Declined;
    }
    let ops = std::mem::take(&mut st.ops);
    if !ops.is_empty() && !sink(ops, st.items) {
        return Streamed::Declined;
    }
    Streamed::Done(st.items)
}
