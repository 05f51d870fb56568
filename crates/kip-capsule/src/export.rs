//! Export (seed 002's "shadow export"): what the nexus holds, written as a
//! `.kip` capsule or a YAML bundle that, imported into a fresh nexus,
//! rebuilds an identical graph — the same concepts by `(type, name)`, the
//! same propositions by `(subject, predicate, object)`, the same attributes
//! and the same metadata (except `_created_at` / `_updated_at`, which the
//! engine sets when it writes).
//!
//! **What Genesis gave is left out.** Every nexus starts from the Genesis
//! capsules, so an export lists the difference from a fresh nexus: the
//! elements Genesis does not create, the Genesis elements that changed
//! since (written in full, so the upsert restores them), and, as deletes,
//! the Genesis elements that are gone (protected ones cannot be). The
//! baseline is computed, not assumed: a throw-away nexus is bootstrapped
//! in a temporary folder and compared with, so the rule follows the
//! Genesis capsules as they evolve. Importing the export into a fresh
//! nexus therefore yields the exported graph. (Two changes have no
//! bundle form and are not exported: an attribute or metadata key removed
//! from a Genesis element. Upserts merge keys; they never remove one.)
//!
//! **Filters.** `types` keeps concepts of those types; `domains` keeps the
//! concepts that belong to one of those domains (and the domains
//! themselves). Propositions follow their subject: a filtered export holds
//! the propositions whose subject it holds, so it is self-contained except
//! for the objects those propositions point at, which must exist where it
//! is imported. Deletes are written only by an unfiltered export.
//!
//! Order: type and predicate definitions, domains, other concepts (in
//! creation order), then propositions in creation order, which puts a
//! proposition after every proposition it is about.

use std::collections::{HashMap, HashSet};

use kip_lang::{ErrorCode, KipError, suggest};
use kip_nexus::Nexus;
use kip_nexus::{BELONGS_TO_DOMAIN, CONCEPT_TYPE, DOMAIN, Graph, PROPOSITION_TYPE, Result};
use kip_nexus::{ConceptId, ElementId, PropositionId};
use serde_json::{Map, Value as Json};

use crate::emit::{self, Item, Ref, Subject};
use crate::ops::{self, Action, LinkRef, Loc, Op};

/// The format of an export.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExportFormat {
    /// A `.kip` capsule of UPSERT (and DELETE) commands.
    #[default]
    Kip,
    /// A `.yaml` knowledge bundle.
    Yaml,
}

/// What to export.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportOptions {
    pub format: ExportFormat,
    /// Only concepts of these types (all if empty).
    pub types: Vec<String>,
    /// Only concepts of these domains (all if empty).
    pub domains: Vec<String>,
}

/// How many blocks one UPSERT of an exported capsule holds.
const BLOCKS_PER_UPSERT: usize = 500;

/// The identity of an element, independent of ids.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Concept(String, String),
    Link(Box<(Key, String, Key)>),
}

impl Key {
    fn to_ref(&self) -> Ref {
        match self {
            Key::Concept(t, n) => Ref::concept(t, n),
            Key::Link(l) => Ref::Link(Box::new((l.0.to_ref(), l.1.clone(), l.2.to_ref()))),
        }
    }
}

/// One stored element, by identity.
#[derive(Clone, Debug, PartialEq)]
struct Element {
    key: Key,
    attrs: Map<String, Json>,
    meta: Map<String, Json>,
}

/// A whole graph, by identity, in creation order.
#[derive(Debug, Default)]
struct Dump {
    concepts: Vec<(ConceptId, Element)>,
    links: Vec<(PropositionId, ElementId, ElementId, String, Element)>,
}

/// Metadata without the engine's keys.
fn user_meta(meta: &Map<String, Json>) -> Map<String, Json> {
    meta.iter()
        .filter(|(k, _)| !k.starts_with('_'))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn dump(g: &Graph<'_>) -> Result<Dump> {
    let mut out = Dump::default();
    let mut keys: HashMap<ElementId, Key> = HashMap::new();
    for entry in g.all_concepts()? {
        let (id, rec) = entry?;
        let key = Key::Concept(g.type_name(rec.type_id)?.to_string(), rec.name.clone());
        keys.insert(ElementId::Concept(id), key.clone());
        out.concepts.push((
            id,
            Element {
                key,
                attrs: rec.attributes.clone(),
                meta: user_meta(&rec.metadata),
            },
        ));
    }
    // In id order, a proposition's ends (created before it) have keys.
    for entry in g.all_propositions()? {
        let (id, rec) = entry?;
        let predicate = g.predicate_name(rec.predicate)?.to_string();
        let (Some(s), Some(o)) = (
            keys.get(&rec.subject).cloned(),
            keys.get(&rec.object).cloned(),
        ) else {
            continue;
        };
        let key = Key::Link(Box::new((s, predicate.clone(), o)));
        keys.insert(ElementId::Proposition(id), key.clone());
        out.links.push((
            id,
            rec.subject,
            rec.object,
            predicate,
            Element {
                key,
                attrs: rec.attributes.clone(),
                meta: user_meta(&rec.metadata),
            },
        ));
    }
    Ok(out)
}

/// The graph of a freshly bootstrapped nexus.
fn genesis_baseline() -> Result<HashMap<Key, Element>> {
    let dir = tempfile::tempdir().map_err(|e| {
        KipError::new(
            ErrorCode::InternalError,
            format!("cannot create a temporary folder for the Genesis baseline: {e}"),
        )
    })?;
    let fresh = Nexus::open(dir.path())?;
    let d = fresh.read(dump)?;
    let mut out = HashMap::new();
    for (_, e) in d.concepts {
        out.insert(e.key.clone(), e);
    }
    for (.., e) in d.links {
        out.insert(e.key.clone(), e);
    }
    Ok(out)
}

fn rank(ty: &str) -> u8 {
    match ty {
        CONCEPT_TYPE => 0,
        PROPOSITION_TYPE => 1,
        DOMAIN => 2,
        _ => 3,
    }
}

/// Writes what `nexus` holds (see the module documentation for what is
/// left out and how filters work).
pub fn export(nexus: &Nexus, options: &ExportOptions) -> std::result::Result<String, KipError> {
    let baseline = genesis_baseline()?;
    let (d, domain_members) = nexus.read(|g| {
        check_filters(g, options)?;
        let d = dump(g)?;
        let mut members: HashMap<ConceptId, HashSet<String>> = HashMap::new();
        if !options.domains.is_empty() {
            for (_, s, o, p, _) in &d.links {
                if p == BELONGS_TO_DOMAIN
                    && let (ElementId::Concept(member), ElementId::Concept(domain)) = (s, o)
                    && let Some(rec) = g.concept(*domain)?
                {
                    members.entry(*member).or_default().insert(rec.name.clone());
                }
            }
        }
        Ok((d, members))
    })?;
    let filtered = !options.types.is_empty() || !options.domains.is_empty();
    let changed = |e: &Element| baseline.get(&e.key) != Some(e);

    let mut selected: HashSet<ElementId> = HashSet::new();
    let mut concepts: Vec<(u8, ConceptId, &Element)> = Vec::new();
    for (id, e) in &d.concepts {
        let Key::Concept(ty, name) = &e.key else {
            continue;
        };
        let type_ok = options.types.is_empty() || options.types.contains(ty);
        let domain_ok = options.domains.is_empty()
            || (ty == DOMAIN && options.domains.contains(name))
            || domain_members
                .get(id)
                .is_some_and(|ds| options.domains.iter().any(|d| ds.contains(d)));
        if type_ok && domain_ok {
            selected.insert(ElementId::Concept(*id));
            if changed(e) {
                concepts.push((rank(ty), *id, e));
            }
        }
    }
    concepts.sort_by_key(|(r, id, _)| (*r, *id));
    let mut links: Vec<&Element> = Vec::new();
    for (id, s, _, _, e) in &d.links {
        if !filtered || selected.contains(s) {
            selected.insert(ElementId::Proposition(*id));
            if changed(e) {
                links.push(e);
            }
        }
    }

    let mut items: Vec<Item> = Vec::new();
    if !filtered {
        let present: HashSet<&Key> = d
            .concepts
            .iter()
            .map(|(_, e)| &e.key)
            .chain(d.links.iter().map(|l| &l.4.key))
            .collect();
        let mut gone: Vec<&Element> = baseline
            .values()
            .filter(|e| !present.contains(&e.key))
            .collect();
        // Links first (a concept's delete would take them anyway), then
        // concepts; sorted for a stable output.
        gone.sort_by_key(|e| (matches!(e.key, Key::Concept(..)), format!("{:?}", e.key)));
        for e in gone {
            let mut item = to_item(e);
            item.delete = true;
            item.attrs.clear();
            item.meta.clear();
            items.push(item);
        }
    }
    items.extend(concepts.iter().map(|(_, _, e)| to_item(e)));
    items.extend(links.iter().map(|e| to_item(e)));
    Ok(match options.format {
        ExportFormat::Yaml => yaml_text(&items, options),
        ExportFormat::Kip => kip_text(&items, options),
    })
}

fn check_filters(g: &Graph<'_>, options: &ExportOptions) -> Result<()> {
    for t in &options.types {
        if !g.is_type_defined(t)? {
            let defined = g.defined_types()?;
            let suggestions = suggest::similar(t, defined.iter().map(String::as_str));
            let mean = suggestions
                .first()
                .map(|s| format!(" Did you mean '{s}'?"))
                .unwrap_or_default();
            return Err(KipError::new(
                ErrorCode::TypeMismatch,
                format!("concept type '{t}' is not defined.{mean}"),
            )
            .with_suggestions(&suggestions));
        }
    }
    for d in &options.domains {
        if g.find_concept_by_names(DOMAIN, d)?.is_none() {
            let mut names = Vec::new();
            if let Some(t) = g.type_id(DOMAIN)? {
                for id in g.concepts_of_type(t)? {
                    if let Some(c) = g.concept(id)? {
                        names.push(c.name.clone());
                    }
                }
            }
            let suggestions = suggest::similar(d, names.iter().map(String::as_str));
            let mean = suggestions
                .first()
                .map(|s| format!(" Did you mean '{s}'?"))
                .unwrap_or_default();
            return Err(KipError::new(
                ErrorCode::NotFound,
                format!("domain '{d}' does not exist.{mean}"),
            )
            .with_hint("DESCRIBE DOMAINS lists the domains.")
            .with_suggestions(&suggestions));
        }
    }
    Ok(())
}

fn to_item(e: &Element) -> Item {
    let subject = match &e.key {
        Key::Concept(t, n) => Subject::Concept {
            ty: t.clone(),
            name: n.clone(),
        },
        Key::Link(l) => Subject::Link {
            predicate: l.1.clone(),
            source: l.0.to_ref(),
            target: l.2.to_ref(),
        },
    };
    Item {
        subject,
        attrs: e.attrs.clone(),
        meta: e.meta.clone(),
        delete: false,
    }
}

fn header(items: &[Item], options: &ExportOptions, comment: &str) -> String {
    let concepts = items
        .iter()
        .filter(|i| matches!(i.subject, Subject::Concept { .. }) && !i.delete)
        .count();
    let deletes = items.iter().filter(|i| i.delete).count();
    let links = items.len() - concepts - deletes;
    let mut filters = Vec::new();
    if !options.types.is_empty() {
        filters.push(format!("types {}", options.types.join(", ")));
    }
    if !options.domains.is_empty() {
        filters.push(format!("domains {}", options.domains.join(", ")));
    }
    let scope = if filters.is_empty() {
        "everything the Genesis capsules did not create (import into a fresh nexus to rebuild this graph)".to_owned()
    } else {
        format!("{} (propositions follow their subject)", filters.join("; "))
    };
    format!(
        "{comment} Exported by `kip export`: {scope}.\n{comment} {concepts} concepts, {links} propositions, {deletes} deletes.\n"
    )
}

fn yaml_text(items: &[Item], options: &ExportOptions) -> String {
    let mut out = header(items, options, "#");
    if items.is_empty() {
        out.push_str("[]\n");
    }
    for item in items {
        emit::item(&mut out, item);
    }
    out
}

fn op_ref(r: &Ref) -> ops::Ref {
    match r {
        Ref::Concept { ty, name } => ops::Ref::Concept {
            ty: ty.clone(),
            name: name.clone(),
            ty_loc: Loc::default(),
            loc: Loc::default(),
        },
        Ref::Link(l) => ops::Ref::Link(Box::new(LinkRef {
            subject: op_ref(&l.0),
            predicate: l.1.clone(),
            predicate_loc: Loc::default(),
            object: op_ref(&l.2),
            loc: Loc::default(),
        })),
    }
}

fn to_op(item: &Item) -> Op {
    let action = if item.delete {
        Action::Delete
    } else {
        Action::Upsert
    };
    match &item.subject {
        Subject::Concept { ty, name } => Op::Concept {
            ty: ty.clone(),
            name: name.clone(),
            attrs: item.attrs.clone(),
            meta: item.meta.clone(),
            action,
            loc: Loc::default(),
            ty_loc: Loc::default(),
        },
        Subject::Link {
            predicate,
            source,
            target,
        } => Op::Link {
            link: Box::new(LinkRef {
                subject: op_ref(source),
                predicate: predicate.clone(),
                predicate_loc: Loc::default(),
                object: op_ref(target),
                loc: Loc::default(),
            }),
            attrs: item.attrs.clone(),
            meta: item.meta.clone(),
            action,
            loc: Loc::default(),
        },
    }
}

fn kip_text(items: &[Item], options: &ExportOptions) -> String {
    let mut out = header(items, options, "//");
    let ops: Vec<Op> = items.iter().map(to_op).collect();
    for chunk in ops.chunks(BLOCKS_PER_UPSERT) {
        for command in ops::to_commands(chunk) {
            out.push('\n');
            out.push_str(&command.to_string());
            out.push('\n');
        }
    }
    out
}
