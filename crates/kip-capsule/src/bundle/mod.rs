//! Reading a YAML knowledge bundle (BRIEF §4): the positioned YAML tree,
//! its shape (a list of items, or `{metadata, items}`), and the structure
//! check of every item against the JSON Schema that
//! [`crate::schema`] generates, each error mapped back to its path
//! (`[4].source.name`) and its line and column.
//!
//! Items are checked one by one against their own branch of the schema's
//! `oneOf`, chosen by `type`: the branches are told apart by a `const`
//! `type`, so this is exactly what the `oneOf` means, it names the one
//! branch's errors instead of "matches none of 40 schemas", and it costs
//! one branch per item instead of all of them. The branches are compiled
//! from the schema of the nexus overlaid with the bundle's own definitions,
//! so a bundle may define a type and use it.

use std::collections::{HashMap, HashSet};

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use kip_lang::ErrorCode;
use kip_nexus::{CONCEPT_TYPE, PROPOSITION_TYPE};
use serde_json::{Map, Value as Json};

use crate::model::Model;
use crate::ops::{Action, LinkRef, Loc, Op, Ref};
use crate::report::{ImportError, Phase, Progress};
use crate::schema::{self, CONCEPT_KEYS, PROPOSITION_KEYS};
use crate::semantic::{DEFINE_PREDICATE, DEFINE_TYPE, unknown_name};
use crate::text::LineIndex;
use crate::yaml::{self, Entry, Kind, Node};

/// A bundle read into ops.
#[derive(Debug, Default)]
pub(crate) struct Read {
    pub(crate) ops: Vec<Op>,
    pub(crate) items: usize,
}

/// A step of a path inside an item.
#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn render(prefix: &str, segs: &[Seg]) -> String {
    let mut out = prefix.to_owned();
    for s in segs {
        match s {
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
            Seg::Key(k) if kip_lang::is_identifier(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Key(k) => out.push_str(&format!(
                "[{}]",
                serde_json::to_string(k).unwrap_or_default()
            )),
        }
    }
    out
}

fn segments(pointer: &str) -> Vec<Seg> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| {
            let s = s.replace("~1", "/").replace("~0", "~");
            match s.parse::<usize>() {
                Ok(i) => Seg::Index(i),
                Err(_) => Seg::Key(s),
            }
        })
        .collect()
}

/// The node at `segs` under `node` (as deep as the path exists).
fn node_at<'n>(node: &'n Node, segs: &[Seg]) -> &'n Node {
    let mut cur = node;
    for s in segs {
        let next = match (s, &cur.kind) {
            (Seg::Key(k), Kind::Map(_)) => cur.get(k),
            (Seg::Index(i), Kind::Seq(items)) => items.get(*i),
            // A numeric-looking key of a mapping.
            (Seg::Index(i), Kind::Map(_)) => cur.get(&i.to_string()),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => break,
        }
    }
    cur
}

/// Reads the bundle and checks its structure; structural errors go to
/// `errors`. Items that failed become placeholders, so that the meaning
/// checks that follow neither run on them nor report their consequences.
pub(crate) fn read(
    text: &str,
    lines: &LineIndex,
    live: &Model,
    stored: &dyn Fn(&str, &str, &str) -> bool,
    errors: &mut Vec<ImportError>,
    progress: &mut dyn FnMut(Progress),
) -> Read {
    let at = |e: ImportError, path: Option<String>, offset: usize| {
        let (line, column) = lines.position(text, offset);
        ImportError {
            path,
            line: Some(line),
            column: Some(column),
            ..e
        }
    };
    let root = match yaml::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => return Read::default(),
        Err(e) => {
            errors.push(at(
                ImportError::new(ErrorCode::InvalidSyntax, e.message).hint(e.hint),
                None,
                e.offset,
            ));
            return Read::default();
        }
    };
    let Some((items, defaults)) = shape(&root, &at, errors) else {
        return Read::default();
    };
    // The bundle's own definitions, laid over the nexus's schema.
    let mut model = live.clone();
    for item in items {
        define(&mut model, item);
    }
    let mut reader = Reader::new(text, lines, model, defaults, stored);
    let total = items.len() as u64;
    let mut ops = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if i % 1000 == 0 {
            progress(Progress::items(Phase::Validating, i as u64, total));
        }
        let before = errors.len();
        reader.item(i, item, errors);
        reader.remember(item);
        if errors.len() == before {
            ops.push(reader.op(i, item));
        } else if let Some(p) = placeholder(i, item, &reader.defaults) {
            ops.push(p);
        }
    }
    drop(reader);
    Read {
        ops,
        items: items.len(),
    }
}

/// Whether the nexus holds concept `(ty, name)` with attribute `key` (a
/// required attribute an item leaves out may already be there).
pub(crate) fn stored_attribute(
    g: &kip_nexus::Graph<'_>,
    ty: &str,
    name: &str,
    key: &str,
) -> kip_nexus::Result<bool> {
    Ok(match g.find_concept_by_names(ty, name)? {
        Some(c) => g
            .concept(c)?
            .is_some_and(|r| r.attributes.contains_key(key)),
        None => false,
    })
}

/// Whether `item` is a definition: a `$ConceptType` or `$PropositionType`
/// item (deleted ones included).
fn is_definition(item: &Node) -> bool {
    matches!(
        item.get("type").and_then(Node::as_str),
        Some(CONCEPT_TYPE | PROPOSITION_TYPE)
    )
}

/// Adds the definition `item` makes, if it makes one (an upserted
/// `$ConceptType` or `$PropositionType` with a name), to `model`.
fn define(model: &mut Model, item: &Node) {
    if let (Some(ty), Some(name)) = (
        item.get("type").and_then(Node::as_str),
        item.get("name").and_then(Node::as_str),
    ) && (ty == CONCEPT_TYPE || ty == PROPOSITION_TYPE)
        && item.get("action").and_then(Node::as_str) != Some("delete")
    {
        let (attrs, _) = split(item, &CONCEPT_KEYS);
        model.define(ty, name, &attrs);
    }
}

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
struct Streaming<'a> {
    text: &'a str,
    lines: &'a LineIndex,
    stored: &'a dyn Fn(&str, &str, &str) -> bool,
    /// The model being built from the definitions at the top, until the
    /// first other item turns it into the reader's.
    model: Option<Model>,
    /// Those definitions, read once the model is complete.
    definitions: Vec<(usize, Node)>,
    reader: Option<Reader<'a>>,
    /// The bundle mapping's default metadata, read with the first item.
    defaults: Option<Map<String, Json>>,
    ops: Vec<Op>,
    errors: Vec<ImportError>,
    items: usize,
}

impl<'a> Streaming<'a> {
    /// Reads one item into an op; `false` if it has an error.
    fn read(&mut self, i: usize, item: &Node) -> bool {
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
    fn start(&mut self) -> bool {
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
    fn item(&mut self, item: Node, head: &[Entry]) -> bool {
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

/// Places an error: the error, its path, and the byte offset it points at.
type Place<'p> = dyn Fn(ImportError, Option<String>, usize) -> ImportError + 'p;

/// The shape of a bundle: its list of items and the default metadata (a
/// list, or a mapping `{metadata, items}`); `None` when there is no list
/// to read at all.
fn shape<'n>(
    root: &'n Node,
    at: &Place<'_>,
    errors: &mut Vec<ImportError>,
) -> Option<(&'n [Node], Map<String, Json>)> {
    match &root.kind {
        Kind::Seq(items) => Some((items, Map::new())),
        Kind::Map(entries) => mapping_shape(root, entries, at, errors),
        _ => {
            errors.push(at(
                ImportError::new(
                    ErrorCode::InvalidSyntax,
                    format!("a bundle is a list of items, found {}", root.kind_name()),
                )
                .hint("Write one item per `- type: …` entry; see `kip schema` for an example."),
                None,
                root.start,
            ));
            None
        }
    }
}

/// A bundle written as a mapping: `{metadata, items}`, or by mistake a
/// single item (told by its `type`).
fn mapping_shape<'n>(
    root: &'n Node,
    entries: &'n [Entry],
    at: &Place<'_>,
    errors: &mut Vec<ImportError>,
) -> Option<(&'n [Node], Map<String, Json>)> {
    let mut defaults = Map::new();
    let mut items: &[Node] = &[];
    let mut unexpected = false;
    let looks_like_item = root.get("type").is_some();
    for e in entries {
        match e.key.as_str() {
            "items" => {
                if let Some(list) = items_of(e, at, errors) {
                    items = list;
                }
            }
            "metadata" => metadata_of(e, &mut defaults, at, errors),
            other if !looks_like_item => {
                unexpected = true;
                errors.push(unexpected_top_key(other, e, at));
            }
            _ => {}
        }
    }
    if !looks_like_item && !unexpected && root.get("items").is_none() {
        errors.push(at(
            ImportError::new(ErrorCode::ConstraintViolation, "`items` is required")
                .hint("A bundle mapping holds its items in a list under `items:` (and optional `metadata:`)."),
            Some("items".into()),
            root.start,
        ));
    }
    if looks_like_item {
        errors.push(at(
            ImportError::new(
                ErrorCode::InvalidSyntax,
                "a bundle is a list of items, but this file is a single mapping",
            )
            .hint("Start the item with `- ` (a list of one item): `- type: …`."),
            None,
            root.start,
        ));
        return None;
    }
    Some((items, defaults))
}

/// The list under `items:` (`None` when it is empty or not a list).
fn items_of<'n>(e: &'n Entry, at: &Place<'_>, errors: &mut Vec<ImportError>) -> Option<&'n [Node]> {
    match &e.value.kind {
        Kind::Seq(list) => Some(list),
        Kind::Null => None,
        _ => {
            errors.push(at(
                ImportError::new(
                    ErrorCode::InvalidValueType,
                    format!("`items` must be a list, found {}", e.value.kind_name()),
                )
                .hint("Write each item on its own line starting with `- `."),
                Some("items".into()),
                e.value.start,
            ));
            None
        }
    }
}

/// The default metadata under `metadata:`, into `defaults`.
fn metadata_of(
    e: &Entry,
    defaults: &mut Map<String, Json>,
    at: &Place<'_>,
    errors: &mut Vec<ImportError>,
) {
    match &e.value.kind {
        Kind::Map(meta) => {
            for m in meta {
                if m.key.starts_with('_') {
                    errors.push(at(
                        reserved(&m.key),
                        Some(format!("metadata.{}", m.key)),
                        m.key_start,
                    ));
                } else {
                    defaults.insert(m.key.clone(), m.value.to_json());
                }
            }
        }
        Kind::Null => {}
        _ => errors.push(at(
            ImportError::new(
                ErrorCode::InvalidValueType,
                format!(
                    "`metadata` must be a mapping, found {}",
                    e.value.kind_name()
                ),
            )
            .hint("Write metadata as `key: value` lines, e.g. `source: …` and `confidence: 0.9`."),
            Some("metadata".into()),
            e.value.start,
        )),
    }
}

/// A key at the top of a bundle mapping other than `metadata` and `items`.
fn unexpected_top_key(key: &str, e: &Entry, at: &Place<'_>) -> ImportError {
    let suggestions = kip_lang::suggest::similar(key, ["metadata", "items"]);
    let mean = suggestions
        .first()
        .map(|s| format!(". Did you mean `{s}`?"))
        .unwrap_or_default();
    at(
        ImportError::new(
            ErrorCode::InvalidSyntax,
            format!("unexpected key `{key}` at the top of the bundle{mean}"),
        )
        .hint("A bundle is a list of items, or a mapping with exactly `metadata` and `items`.")
        .suggestions(suggestions),
        Some(key.to_owned()),
        e.key_start,
    )
}

/// A reserved `_` key written by a bundle: a data-constraint violation
/// (`KIP_2003`), as the engine answers it for `.kip` capsules (RC10).
fn reserved(key: &str) -> ImportError {
    ImportError::new(
        ErrorCode::ConstraintViolation,
        format!("`{key}` is reserved for the engine: keys starting with '_' cannot be written"),
    )
    .hint("The engine maintains _created_at and _updated_at itself; rename the key without the leading underscore.")
}

/// What a failed concept item still tells: its identity, and what it
/// says about it (for the contradiction check).
fn placeholder(i: usize, item: &Node, defaults: &Map<String, Json>) -> Option<Op> {
    let ty = item.get("type")?.as_str()?;
    let name = item.get("name")?.as_str()?;
    let (attrs, meta) = split(item, &CONCEPT_KEYS);
    let mut full = defaults.clone();
    full.extend(meta);
    Some(Op::Placeholder {
        ty: ty.to_owned(),
        name: name.to_owned(),
        attrs,
        meta: full,
        loc: Loc {
            path: Some(format!("[{i}]")),
            start: item.start,
            end: item.end,
        },
    })
}

/// An item's attributes (its keys other than `own`, and the entries of its
/// `attributes` mapping) and its metadata.
fn split(item: &Node, own: &[&str]) -> (Map<String, Json>, Map<String, Json>) {
    let mut attrs = Map::new();
    let mut meta = Map::new();
    for e in item.entries().unwrap_or_default() {
        if !own.contains(&e.key.as_str()) {
            attrs.insert(e.key.clone(), e.value.to_json());
        } else if e.key == "attributes" {
            for a in e.value.entries().unwrap_or_default() {
                attrs.insert(a.key.clone(), a.value.to_json());
            }
        } else if e.key == "metadata" {
            for m in e.value.entries().unwrap_or_default() {
                meta.insert(m.key.clone(), m.value.to_json());
            }
        }
    }
    (attrs, meta)
}

struct Reader<'a> {
    text: &'a str,
    lines: &'a LineIndex,
    /// The nexus's schema overlaid with the bundle's own definitions.
    model: Model,
    defs: Json,
    /// One compiled branch per name used (`None`: the branch failed to
    /// compile, which an invalid `instance_schema` can cause).
    validators: HashMap<String, Option<Validator>>,
    defaults: Map<String, Json>,
    /// Whether the nexus holds concept `(type, name)` with attribute `key`.
    stored: &'a dyn Fn(&str, &str, &str) -> bool,
    /// The attribute keys earlier items gave each concept.
    given: HashMap<(String, String), HashSet<String>>,
}

impl<'a> Reader<'a> {
    fn new(
        text: &'a str,
        lines: &'a LineIndex,
        model: Model,
        defaults: Map<String, Json>,
        stored: &'a dyn Fn(&str, &str, &str) -> bool,
    ) -> Reader<'a> {
        Reader {
            text,
            lines,
            defs: schema::definitions(&model),
            model,
            validators: HashMap::new(),
            defaults,
            stored,
            given: HashMap::new(),
        }
    }

    /// Notes the attributes a concept item gives.
    fn remember(&mut self, item: &Node) {
        if let (Some(ty), Some(name)) = (
            item.get("type").and_then(Node::as_str),
            item.get("name").and_then(Node::as_str),
        ) && self.model.types.contains_key(ty)
        {
            let (attrs, _) = split(item, &CONCEPT_KEYS);
            self.given
                .entry((ty.to_owned(), name.to_owned()))
                .or_default()
                .extend(attrs.keys().cloned());
        }
    }

    /// Whether a required attribute an item leaves out is already there:
    /// an upsert merges, so updating a concept need not repeat what it has.
    fn already_has(&self, item: &Node, key: &str) -> bool {
        let (Some(ty), Some(name)) = (
            item.get("type").and_then(Node::as_str),
            item.get("name").and_then(Node::as_str),
        ) else {
            return false;
        };
        if !self.model.types.contains_key(ty) {
            return false;
        }
        self.given
            .get(&(ty.to_owned(), name.to_owned()))
            .is_some_and(|keys| keys.contains(key))
            || (self.stored)(ty, name, key)
    }

    fn error(&self, e: ImportError, path: String, offset: usize) -> ImportError {
        let (line, column) = self.lines.position(self.text, offset);
        ImportError {
            path: Some(path),
            line: Some(line),
            column: Some(column),
            ..e
        }
    }

    fn validator(&mut self, name: &str) -> Option<&Validator> {
        if !self.validators.contains_key(name) {
            let compiled = schema::branch(&self.model, name).and_then(|mut branch| {
                branch["definitions"] = self.defs.clone();
                jsonschema::draft7::new(&branch).ok()
            });
            self.validators.insert(name.to_owned(), compiled);
        }
        self.validators.get(name).and_then(Option::as_ref)
    }

    /// Checks one item's structure; errors go to `out`.
    fn item(&mut self, i: usize, item: &Node, out: &mut Vec<ImportError>) {
        let prefix = format!("[{i}]");
        if item.entries().is_none() {
            out.push(
                self.error(
                    ImportError::new(
                        ErrorCode::InvalidValueType,
                        format!(
                            "an item is a mapping with a `type`, found {}",
                            item.kind_name()
                        ),
                    )
                    .hint("Write the item as `- type: …` followed by its keys, indented."),
                    prefix,
                    item.start,
                ),
            );
            return;
        }
        let Some(type_node) = item.get("type") else {
            out.push(self.error(
                ImportError::new(ErrorCode::ConstraintViolation, "`type` is required")
                    .hint("Every item names its concept type (for a concept) or its predicate (for a proposition) in `type`."),
                format!("{prefix}.type"),
                item.start,
            ));
            return;
        };
        let Some(ty) = type_node.as_str() else {
            out.push(self.error(
                ImportError::new(
                    ErrorCode::InvalidValueType,
                    format!("`type` must be a string, found {}", type_node.kind_name()),
                ),
                format!("{prefix}.type"),
                type_node.start,
            ));
            return;
        };
        if !self.model.knows(ty) {
            let link = item.get("source").is_some() || item.get("target").is_some();
            let e = if link {
                unknown_name(
                    "Predicate",
                    ty,
                    self.model.predicates.keys().cloned(),
                    DEFINE_PREDICATE,
                )
            } else {
                unknown_name(
                    "Entity type",
                    ty,
                    self.model.types.keys().cloned(),
                    DEFINE_TYPE,
                )
            };
            out.push(self.error(e, format!("{prefix}.type"), type_node.start));
            return;
        }
        let json = item.to_json();
        let Some(validator) = self.validator(ty) else {
            out.push(
                self.error(
                    ImportError::new(
                        ErrorCode::InternalError,
                        format!("the schema of '{ty}' cannot be compiled"),
                    )
                    .hint(format!(
                        "Check the instance_schema of '{ty}' (DESCRIBE CONCEPT TYPE \"{ty}\")."
                    )),
                    prefix,
                    item.start,
                ),
            );
            return;
        };
        let found: Vec<ValidationError<'static>> = validator
            .iter_errors(&json)
            .map(ValidationError::to_owned)
            .collect();
        let predicate = self.model.predicates.contains_key(ty).then_some(ty);
        for e in &found {
            self.map(e, item, &prefix, predicate, out);
        }
    }

    /// One schema error, as import errors: each kind of error has its own
    /// function below (an `anyOf` becomes the errors of the alternative the
    /// item was evidently written for).
    fn map(
        &self,
        e: &ValidationError<'_>,
        item: &Node,
        prefix: &str,
        predicate: Option<&str>,
        out: &mut Vec<ImportError>,
    ) {
        let segs = segments(e.instance_path().as_str());
        let at = At {
            item,
            prefix,
            predicate,
            node: node_at(item, &segs),
            segs,
        };
        match e.kind() {
            ValidationErrorKind::Required { property } => {
                self.required(&at, property.as_str().unwrap_or_default(), out);
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                self.unexpected_keys(&at, unexpected, out);
            }
            ValidationErrorKind::PropertyNames { error } => {
                out.push(self.forbidden_key(&at, e, error));
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                self.alternatives(&at, context, out);
            }
            ValidationErrorKind::Type { kind } => {
                out.push(self.at_node(&at, wrong_type(&at, kind)))
            }
            ValidationErrorKind::Enum { options } => {
                out.push(self.at_node(&at, not_allowed(&at, options)));
            }
            ValidationErrorKind::Pattern { pattern } => {
                out.push(self.at_node(&at, no_match(&at, pattern)));
            }
            ValidationErrorKind::MinLength { .. } => out.push(self.at_node(&at, empty_name())),
            _ => out.push(self.at_node(&at, other(e))),
        }
    }

    /// An error about the node a schema error points at.
    fn at_node(&self, at: &At<'_>, e: ImportError) -> ImportError {
        self.error(e, at.path(), at.node.start)
    }

    /// `required`: a missing key, unless it is an attribute the element
    /// already has (an upsert merges).
    fn required(&self, at: &At<'_>, p: &str, out: &mut Vec<ImportError>) {
        let segs = &at.segs;
        let attribute = segs.is_empty()
            && !["type", "name", "source", "target", "attributes"].contains(&p)
            || *segs == [Seg::Key("attributes".into())];
        if attribute && self.already_has(at.item, p) {
            return;
        }
        let why = if segs.is_empty() && !["type", "name", "source", "target"].contains(&p) {
            " (its type's instance_schema marks it is_required)"
        } else {
            ""
        };
        out.push(
            self.error(
                ImportError::new(
                    ErrorCode::ConstraintViolation,
                    format!("`{p}` is required{why}"),
                )
                .hint(format!("Add `{p}: …` to this mapping.")),
                at.child(p),
                at.node.start,
            ),
        );
    }

    /// `additionalProperties`: one error per key a reference may not have.
    fn unexpected_keys(&self, at: &At<'_>, unexpected: &[String], out: &mut Vec<ImportError>) {
        for k in unexpected {
            let entry = at.node.entry(k);
            out.push(self.error(
                ImportError::new(ErrorCode::InvalidSyntax, format!("unexpected key `{k}`"))
                    .hint("A reference is {type, name} for a concept, {id} for an element, or {type, source, target} for a proposition."),
                at.child(k),
                entry.map_or(at.node.start, |e| e.key_start),
            ));
        }
    }

    /// `propertyNames`: a key an item that deletes may not have, or a
    /// reserved `_` key.
    fn forbidden_key(
        &self,
        at: &At<'_>,
        e: &ValidationError<'_>,
        error: &ValidationError<'_>,
    ) -> ImportError {
        let key = error
            .instance()
            .as_str()
            .map(str::to_owned)
            .unwrap_or_default();
        let entry = at.node.entry(&key);
        let deleting = e.schema_path().as_str().contains("then");
        let err = if deleting {
            ImportError::new(
                ErrorCode::InvalidSyntax,
                format!("an item that deletes takes only its identity and `action`; `{key}` is not allowed"),
            )
            .hint("Remove the key, or remove `action: delete` to write the item.")
        } else {
            reserved(&key)
        };
        self.error(
            err,
            at.child(&key),
            entry.map_or(at.node.start, |e| e.key_start),
        )
    }

    /// `anyOf` / `oneOf` (the forms of a reference): what is wrong with the
    /// reference as a whole, or else the errors of the alternative it was
    /// written as.
    fn alternatives(
        &self,
        at: &At<'_>,
        context: &[Vec<ValidationError<'static>>],
        out: &mut Vec<ImportError>,
    ) {
        let node = at.node;
        let link = node.get("source").is_some() || node.get("target").is_some();
        if node.entries().is_none() {
            out.push(self.at_node(at, not_a_reference(node)));
        } else if link && context.len() <= 2 {
            out.push(self.at_node(at, proposition_end(at)));
        } else {
            let branch = if node.get("id").is_some() {
                1
            } else if link && context.len() > 2 {
                2
            } else {
                0
            };
            if let Some(errs) = context.get(branch) {
                for inner in errs {
                    self.map(inner, at.item, at.prefix, at.predicate, out);
                }
            }
        }
    }

    /// Builds the op of a structurally valid item.
    fn op(&self, i: usize, item: &Node) -> Op {
        let prefix = format!("[{i}]");
        let ty = item
            .get("type")
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_owned();
        let action = if item.get("action").and_then(Node::as_str) == Some("delete") {
            Action::Delete
        } else {
            Action::Upsert
        };
        let loc = |path: String, node: &Node| Loc {
            path: Some(path),
            start: node.start,
            end: node.end,
        };
        let type_node = item.get("type").unwrap_or(item);
        if self.model.predicates.contains_key(&ty) {
            let (attrs, meta) = split(item, &PROPOSITION_KEYS);
            let mut full = self.defaults.clone();
            full.extend(meta);
            let source = item
                .get("source")
                .map_or(Ref::Unknown, |n| reference(n, &format!("{prefix}.source")));
            let target = item
                .get("target")
                .map_or(Ref::Unknown, |n| reference(n, &format!("{prefix}.target")));
            Op::Link {
                link: Box::new(LinkRef {
                    subject: source,
                    predicate: ty,
                    predicate_loc: loc(format!("{prefix}.type"), type_node),
                    object: target,
                    loc: loc(prefix.clone(), item),
                }),
                attrs,
                meta: full,
                action,
                loc: loc(prefix, item),
            }
        } else {
            let (attrs, meta) = split(item, &CONCEPT_KEYS);
            let mut full = self.defaults.clone();
            full.extend(meta);
            let name = item
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or_default()
                .to_owned();
            Op::Concept {
                ty,
                name,
                attrs,
                meta: full,
                action,
                loc: loc(prefix.clone(), item),
                ty_loc: loc(format!("{prefix}.type"), type_node),
            }
        }
    }
}

/// Where a schema error points inside an item.
struct At<'a> {
    item: &'a Node,
    /// The item's own path (`[4]`).
    prefix: &'a str,
    /// The item's predicate, when it is a proposition.
    predicate: Option<&'a str>,
    /// The steps from the item to `node`.
    segs: Vec<Seg>,
    node: &'a Node,
}

impl At<'_> {
    fn path(&self) -> String {
        render(self.prefix, &self.segs)
    }

    /// The path of `key` under the node.
    fn child(&self, key: &str) -> String {
        let mut child = self.segs.clone();
        child.push(Seg::Key(key.to_owned()));
        render(self.prefix, &child)
    }
}

/// `type`: a value of the wrong type.
fn wrong_type(at: &At<'_>, kind: &jsonschema::error::TypeKind) -> ImportError {
    ImportError::new(
        ErrorCode::InvalidValueType,
        format!(
            "expected {}, found {}",
            type_words(kind),
            at.node.kind_name()
        ),
    )
    .hint("Correct the value's type (quote a text, leave numbers unquoted).")
}

/// `enum`: an end of the wrong type, an unknown type, or a value not
/// among the allowed ones.
fn not_allowed(at: &At<'_>, options: &Json) -> ImportError {
    let allowed: Vec<String> = options
        .as_array()
        .map(|a| {
            a.iter()
                .map(|o| o.as_str().map_or_else(|| o.to_string(), str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let node = at.node;
    let value = node
        .as_str()
        .map_or_else(|| node.to_json().to_string(), str::to_owned);
    let segs = &at.segs;
    let end = segs.len() >= 2 && segs.last() == Some(&Seg::Key("type".into()));
    let role = segs.iter().rev().nth(1).and_then(|s| match s {
        Seg::Key(k) if k == "source" || k == "target" => Some(k.as_str()),
        _ => None,
    });
    if let (true, Some(role), Some(p)) = (end, role, at.predicate)
        && segs.len() == 2
    {
        ImportError::new(
            ErrorCode::TypeMismatch,
            format!(
                "Cannot create '{p}': its {role} must be a {}, not a {value}",
                allowed.join(" or ")
            ),
        )
        .hint(format!(
            "Check the direction and the types of '{p}' (`kip schema` lists them)."
        ))
    } else if end {
        // Only the message and the hint: the suggestions stay out, as
        // they always have here.
        let e = unknown_name("Entity type", &value, allowed, DEFINE_TYPE);
        ImportError::new(e.code, e.message).hint(e.hint)
    } else {
        let suggestions = kip_lang::suggest::similar(&value, allowed.iter().map(String::as_str));
        let mean = suggestions
            .first()
            .map(|s| format!(" Did you mean '{s}'?"))
            .unwrap_or_default();
        ImportError::new(
            ErrorCode::ConstraintViolation,
            format!("`{value}` is not one of: {}.{mean}", allowed.join(", ")),
        )
        .hint("Use one of the listed values.")
    }
}

/// `pattern`: a name that is not an identifier, or a malformed id.
fn no_match(at: &At<'_>, pattern: &str) -> ImportError {
    let value = at.node.as_str().unwrap_or_default();
    if at.segs == [Seg::Key("name".into())] {
        ImportError::new(
            ErrorCode::InvalidIdentifier,
            format!("'{value}' is not a valid name for a type or predicate"),
        )
        .hint(
            "Use letters, digits and '_' only, not starting with a digit (e.g. DrugClass, treats).",
        )
    } else {
        ImportError::new(
            ErrorCode::ConstraintViolation,
            format!("'{value}' does not match {pattern}"),
        )
        .hint("An id is C:<number> for a concept or P:<number> for a proposition.")
    }
}

/// `minLength`: an empty name.
fn empty_name() -> ImportError {
    ImportError::new(ErrorCode::ConstraintViolation, "must not be empty")
        .hint("Give the element a name.")
}

/// A reference that is not a mapping at all.
fn not_a_reference(node: &Node) -> ImportError {
    ImportError::new(
        ErrorCode::InvalidValueType,
        format!(
            "expected a reference like {{type: …, name: …}} or {{id: …}}, found {}",
            node.kind_name()
        ),
    )
    .hint("Refer to a concept as {type: Drug, name: Aspirin}, or to any element as {id: C:12}.")
}

/// A proposition given as the end of a predicate that links only concepts.
fn proposition_end(at: &At<'_>) -> ImportError {
    let role = match at.segs.last() {
        Some(Seg::Key(k)) => k.clone(),
        _ => "end".to_owned(),
    };
    let p = at.predicate.unwrap_or("this predicate");
    ImportError::new(
        ErrorCode::TypeMismatch,
        format!("Cannot create '{p}': its {role} must be a concept, not a proposition"),
    )
    .hint(format!(
        "Only predicates whose subject_types / object_types are \"*\" link to propositions; refer to a concept as {{type, name}} (`kip schema` shows what '{p}' links)."
    ))
}

/// Any other schema error, in the validator's words.
fn other(e: &ValidationError<'_>) -> ImportError {
    ImportError::new(ErrorCode::ConstraintViolation, e.to_string())
        .hint(ErrorCode::ConstraintViolation.default_hint())
}

/// A `source` / `target` the schema accepted.
fn reference(node: &Node, path: &str) -> Ref {
    let loc = Loc {
        path: Some(path.to_owned()),
        start: node.start,
        end: node.end,
    };
    if let Some(id) = node.get("id").and_then(Node::as_str) {
        return Ref::Id {
            id: id.to_owned(),
            loc,
        };
    }
    let ty = node
        .get("type")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_owned();
    let type_node = node.get("type").unwrap_or(node);
    let ty_loc = Loc {
        path: Some(format!("{path}.type")),
        start: type_node.start,
        end: type_node.end,
    };
    if node.get("source").is_some() || node.get("target").is_some() {
        return Ref::Link(Box::new(LinkRef {
            subject: node
                .get("source")
                .map_or(Ref::Unknown, |n| reference(n, &format!("{path}.source"))),
            predicate: ty,
            predicate_loc: ty_loc,
            object: node
                .get("target")
                .map_or(Ref::Unknown, |n| reference(n, &format!("{path}.target"))),
            loc,
        }));
    }
    let name = node
        .get("name")
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_owned();
    Ref::Concept {
        ty,
        name,
        ty_loc,
        loc,
    }
}

fn type_words(kind: &jsonschema::error::TypeKind) -> String {
    let words = |t: jsonschema::JsonType| -> &'static str {
        match t {
            jsonschema::JsonType::Array => "a list",
            jsonschema::JsonType::Boolean => "a boolean",
            jsonschema::JsonType::Integer => "an integer",
            jsonschema::JsonType::Null => "null",
            jsonschema::JsonType::Number => "a number",
            jsonschema::JsonType::Object => "a mapping",
            jsonschema::JsonType::String => "a string",
        }
    };
    match kind {
        jsonschema::error::TypeKind::Single(t) => words(*t).to_owned(),
        jsonschema::error::TypeKind::Multiple(set) => {
            let all: Vec<&str> = set.iter().map(words).collect();
            all.join(" or ")
        }
    }
}
