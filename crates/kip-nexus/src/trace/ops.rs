//! What faces do with the trace: list and show entries, add THINK / SAY
//! entries, change flags, revert a write, record space events, import an
//! exported trace.

use kip_lang::{ErrorCode, KipError};
use kip_store::ElementId;
use serde::Serialize;
use serde_json::{Map, Value as Json, json};

use super::append::{Append, CommandRecord, Draft};
use super::authority::{Authority, touches_protected};
use super::entry::{
    Entry, EntryType, NewEntry, TraceFilter, TraceNote, TraceSettings, check_words, from_body,
    matches, parse_entry_id, to_body,
};
use crate::clock::now;
use crate::graph::{OrInternal as _, Result, TxnError};
use crate::kml::{ChangeKind, ChangeOp, ElementChange, Writer};
use crate::nexus::Nexus;

/// The default and largest page of `trace_list`.
pub const DEFAULT_TRACE_PAGE: usize = 100;
pub const MAX_TRACE_PAGE: usize = 1000;

/// One page of entries, newest first (oldest first when listing `after`).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TracePage {
    pub entries: Vec<Entry>,
    /// Pass as `before` for the next (older) page, if there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub next_before: Option<String>,
    /// The id of the newest entry of the whole trace (`T:0` if none).
    pub last_id: String,
}

/// What a revert did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Reverted {
    /// The entry reverted.
    pub reverted: String,
    /// The compensating write's own entry.
    pub entry: Entry,
}

fn not_found(id: &str) -> KipError {
    KipError::new(
        ErrorCode::ReferenceError,
        format!("there is no trace entry {id}"),
    )
    .with_hint("It may never have existed or retention dropped it; `kip trace list` shows the entries kept.")
}

/// An entry's before-image: its changes, then a creation for every element
/// of its ranges of created elements (`data.created`, bulk writes).
pub(super) fn changes_of(entry: &Entry) -> Option<Vec<ElementChange>> {
    let data = entry.data.as_ref()?;
    let mut list: Vec<ElementChange> = serde_json::from_value(data.get("changes")?.clone()).ok()?;
    for (first, last) in created_of(entry) {
        list.extend(range_elements(first, last).map(|e| ElementChange {
            op: ChangeOp::Created,
            kind: match e {
                ElementId::Concept(_) => ChangeKind::Concept,
                ElementId::Proposition(_) => ChangeKind::Proposition,
            },
            id: e.to_string(),
            type_name: None,
            name: None,
            subject: None,
            predicate: None,
            object: None,
            before: None,
            after: None,
        }));
    }
    Some(list)
}

/// The ranges of elements a bulk write created (`data.created`).
fn created_of(entry: &Entry) -> Vec<(ElementId, ElementId)> {
    let Some(ranges) = entry
        .data
        .as_ref()
        .and_then(|d| d.get("created"))
        .and_then(Json::as_array)
    else {
        return Vec::new();
    };
    ranges
        .iter()
        .filter_map(|r| {
            let first = r.get(0)?.as_str()?.parse().ok()?;
            let last = r.get(1)?.as_str()?.parse().ok()?;
            Some((first, last))
        })
        .collect()
}

/// Every element of a range of one kind, in id order.
fn range_elements(first: ElementId, last: ElementId) -> impl Iterator<Item = ElementId> {
    let (a, b, concept) = match (first, last) {
        (ElementId::Concept(a), ElementId::Concept(b)) => (a.0, b.0, true),
        (ElementId::Proposition(a), ElementId::Proposition(b)) => (a.0, b.0, false),
        _ => (1, 0, true), // not a range: empty
    };
    (a..=b).map(move |n| {
        if concept {
            ElementId::Concept(kip_store::ConceptId(n))
        } else {
            ElementId::Proposition(kip_store::PropositionId(n))
        }
    })
}

impl Nexus {
    /// Replaces the trace's settings for this process.
    pub fn set_trace_settings(&self, settings: TraceSettings) {
        if let Ok(mut s) = self.tracer.settings.lock() {
            *s = settings;
        }
    }

    /// Writes the folded reads still in memory (hosts call it before they
    /// close; dropping the nexus does it too).
    pub fn flush_trace(&self) {
        self.flush_trace_folds(true);
    }

    /// Folds a read made outside KIP (a logic-property resolve) into the
    /// trace exactly as KIP reads are folded: the same `text` from the same
    /// originator within the fold window is one entry with a count, and
    /// `error` (a code) marks it `TraceError`. Cheap: a lock and two hash
    /// lookups, plus a small write at most once a window.
    pub fn trace_fold_read(&self, originator: &str, text: &str, error: Option<&str>) {
        if !self.tracer.settings().enabled {
            return;
        }
        if self.tracer.fold_read(
            originator,
            text,
            error.map(str::to_owned),
            super::returned::Returned::default(),
        ) {
            self.flush_trace_folds(false);
        }
    }

    /// The id of the newest entry (`0` if none): one tiny read, to poll for
    /// entries from any process.
    pub fn last_trace_id(&self) -> Result<u64> {
        self.store.read(|txn| self.store.last_trace_id(txn)).kip()
    }

    /// One entry.
    pub fn trace_entry(&self, id: &str) -> Result<Entry> {
        let n = parse_entry_id(id)?;
        let body = self
            .store
            .read(|txn| self.store.trace_entry(txn, n))
            .kip()?;
        from_body(n, body.ok_or_else(|| not_found(id))?)
    }

    /// A page of entries matching `filter`, newest first.
    pub fn trace_list(&self, filter: &TraceFilter) -> Result<TracePage> {
        for (what, w) in [("tag", &filter.tag), ("flag", &filter.flag)] {
            if let Some(w) = w {
                check_words(what, std::slice::from_ref(w))?;
            }
        }
        if let Some(k) = &filter.kind
            && EntryType::parse(&k.to_ascii_uppercase()).is_none()
        {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                format!("`{k}` is not a trace entry type"),
            )
            .with_hint("Use TRACE, THINK, SAY or SPACE."));
        }
        let limit = filter
            .limit
            .unwrap_or(DEFAULT_TRACE_PAGE)
            .clamp(1, MAX_TRACE_PAGE);
        let before = filter.before.as_deref().map(parse_entry_id).transpose()?;
        // `T:0` is the `last_id` of an empty trace: after it, everything.
        let after = filter
            .after
            .as_deref()
            .map(|a| if a == "T:0" { Ok(0) } else { parse_entry_id(a) })
            .transpose()?;
        let element: Option<ElementId> = match &filter.element {
            Some(e) => Some(e.parse().map_err(|_| {
                KipError::new(
                    ErrorCode::InvalidSyntax,
                    format!("`{e}` is not an element id"),
                )
                .with_hint("Element ids look like C:12 or P:7.")
            })?),
            None => None,
        };
        self.store
            .read(|txn| {
                let last_id = format!("T:{}", self.store.last_trace_id(txn)?);
                let mut entries = Vec::new();
                let mut more = false;
                let mut take = |id: u64, body: Json| -> std::result::Result<bool, TxnError> {
                    let entry = from_body(id, body)?;
                    if !matches(&entry, filter) {
                        return Ok(true);
                    }
                    if entries.len() == limit {
                        more = true;
                        return Ok(false);
                    }
                    entries.push(entry);
                    Ok(true)
                };
                let newest_first = after.is_none();
                if let Some(e) = element {
                    let mut ids = self.store.trace_touching(txn, e)?;
                    ids.retain(|&i| after.is_none_or(|a| i > a) && before.is_none_or(|b| i < b));
                    if newest_first {
                        ids.reverse();
                    }
                    for id in ids {
                        if let Some(body) = self.store.trace_entry(txn, id)?
                            && !take(id, body)?
                        {
                            break;
                        }
                    }
                } else {
                    let mut failed = None;
                    self.store.visit_trace(
                        txn,
                        after,
                        before,
                        newest_first,
                        |id, body| match take(id, body) {
                            Ok(go) => Ok(go),
                            Err(e) => {
                                failed = Some(e);
                                Ok(false)
                            }
                        },
                    )?;
                    if let Some(e) = failed {
                        return Err(e);
                    }
                }
                let next_before = (more && newest_first)
                    .then(|| entries.last().map(|e| e.id.clone()))
                    .flatten();
                Ok::<_, TxnError>(TracePage {
                    entries,
                    next_before,
                    last_id,
                })
            })
            .map_err(|e| e.0)
    }

    /// Appends a THINK or SAY entry (an agent's reasoning, a curator's
    /// note). TRACE entries are the engine's; SPACE entries come from
    /// [`Nexus::trace_space`].
    pub fn trace_add(&self, new: &NewEntry) -> Result<Entry> {
        let kind = new.check()?;
        if matches!(kind, EntryType::Trace | EntryType::Space) {
            return Err(KipError::new(
                ErrorCode::InvalidSyntax,
                format!("{} entries are written by the engine", kind.as_str()),
            )
            .with_hint("Record THINK (your reasoning) or SAY (a note to others)."));
        }
        self.append_draft(Draft {
            originator: new.originator.clone().unwrap_or_default(),
            kind,
            message: new.message.clone(),
            tag: new.tag.clone(),
            flags: new.flags.clone(),
            data: new.data.clone(),
            elements: Vec::new(),
        })
    }

    /// A SPACE entry for a host's event: `SpaceAcquire` when it opens the
    /// nexus, `SpaceRelease` when it closes it, `SystemEvent` otherwise.
    pub fn trace_space(&self, originator: &str, tag: &str, message: &str) -> Result<Entry> {
        check_words("tag", &[tag.to_owned()])?;
        self.append_draft(Draft {
            originator: originator.to_owned(),
            kind: EntryType::Space,
            message: message.to_owned(),
            tag: vec![tag.to_owned()],
            flags: Vec::new(),
            data: Some(json!({"pid": std::process::id()})),
            elements: Vec::new(),
        })
    }

    fn append_draft(&self, draft: Draft) -> Result<Entry> {
        let settings = self.tracer.settings();
        self.store
            .write(|txn| {
                let append = Append {
                    store: &self.store,
                    settings: &settings,
                    at: now(),
                };
                append.append(txn, draft_clone(&draft)).map_err(TxnError)
            })
            .map_err(|e| e.0)
    }

    /// Sets and clears flags of entry `id` (the review state: `Reviewed`,
    /// `Rejected`, …), and records the change as a SAY entry by `by`.
    pub fn trace_flag(
        &self,
        id: &str,
        set: &[String],
        clear: &[String],
        by: &str,
    ) -> Result<Entry> {
        check_words("flag", set)?;
        check_words("flag", clear)?;
        let n = parse_entry_id(id)?;
        let settings = self.tracer.settings();
        self.store
            .write(|txn| {
                let body = self
                    .store
                    .trace_entry(txn, n)?
                    .ok_or_else(|| TxnError(not_found(id)))?;
                let mut entry = from_body(n, body)?;
                entry.flags.retain(|f| !clear.contains(f));
                for f in set {
                    if !entry.flags.contains(f) {
                        entry.flags.push(f.clone());
                    }
                }
                self.store.set_trace_body(txn, n, &to_body(&entry))?;
                let append = Append {
                    store: &self.store,
                    settings: &settings,
                    at: now(),
                };
                let mut said = Vec::new();
                if !set.is_empty() {
                    said.push(format!("flagged {id} {}", set.join(", ")));
                }
                if !clear.is_empty() {
                    said.push(format!("cleared {} on {id}", clear.join(", ")));
                }
                let message = if said.is_empty() {
                    format!("I reviewed {id} and left its flags as they were.")
                } else {
                    format!("I {}.", said.join(" and "))
                };
                append.append(
                    txn,
                    Draft {
                        originator: by.to_owned(),
                        kind: EntryType::Say,
                        message,
                        tag: vec!["Annotation".into()],
                        flags: Vec::new(),
                        data: Some(json!({"entry": id, "set": set, "cleared": clear})),
                        elements: Vec::new(),
                    },
                )?;
                Ok::<_, TxnError>(entry)
            })
            .map_err(|e| e.0)
    }

    /// Reverts the write entry `id` describes: one new traced write (by
    /// `originator`, tagged `SelfCorrection`, `data.reverts` naming `id`)
    /// that puts every element it changed back as it was, in dependency
    /// order, as a new mutation (`_version` climbs, `_updated_at` is now).
    /// Refused with `KIP_3005`, naming the later entries (`data.later`,
    /// `data.later_entries`), when a later write that still stands touched
    /// one of those elements or one the revert would run into (see
    /// `stale.rs`), unless `force`.
    pub fn revert(&self, id: &str, originator: &str, force: bool) -> Result<Reverted> {
        self.revert_with(id, originator, force, false)
    }

    /// [`Nexus::revert`] with the owner's authority over the protected
    /// scope: the only way to revert a write that changed it (an owner's
    /// import, a Genesis upgrade). Only a host the owner runs calls this
    /// (`kip trace revert --owner`); no agent-facing face can.
    pub fn revert_as_owner(&self, id: &str, originator: &str, force: bool) -> Result<Reverted> {
        self.revert_with(id, originator, force, true)
    }

    fn revert_with(
        &self,
        id: &str,
        originator: &str,
        force: bool,
        owner: bool,
    ) -> Result<Reverted> {
        let n = parse_entry_id(id)?;
        let settings = self.tracer.settings();
        let started = std::time::Instant::now();
        let authority = Authority { force, owner };
        self.store
            .write(|txn| self.revert_in(txn, n, id, originator, authority, &settings, started))
            .map_err(|e| e.0)
    }

    /// Entry `n` (`id`) and the changes it made, if it can be reverted: a
    /// TRACE entry with changes, not already reverted, and (unless
    /// `force`) with no later write over its elements.
    fn revertible(
        &self,
        txn: &kip_store::RoTxn<'_>,
        n: u64,
        id: &str,
        Authority { force, owner }: Authority,
    ) -> std::result::Result<(Entry, Vec<ElementChange>), TxnError> {
        let body = self
            .store
            .trace_entry(txn, n)?
            .ok_or_else(|| TxnError(not_found(id)))?;
        let entry = from_body(n, body)?;
        let changes = changes_of(&entry).filter(|c| !c.is_empty());
        let Some(changes) = changes.filter(|_| entry.kind == EntryType::Trace) else {
            return Err(TxnError(
                KipError::new(
                    ErrorCode::InvalidSyntax,
                    format!("{id} changed nothing, so there is nothing to revert"),
                )
                .with_hint("Only entries of committed writes (TRACE entries with changes) can be reverted."),
            ));
        };
        if !owner && let Some(c) = changes.iter().find(|c| touches_protected(c)) {
            return Err(TxnError(
                KipError::new(
                    ErrorCode::ImmutableTarget,
                    format!(
                        "{id} changed the protected scope ({} {}) with the owner's authority, so only the owner can revert it",
                        c.type_name.as_deref().unwrap_or("?"),
                        c.name.as_deref().unwrap_or("?")
                    ),
                )
                .with_hint(format!("Revert it as the nexus's owner: kip trace revert {id} --owner.")),
            ));
        }
        if !force {
            if let Some(by) = data_str(&entry, "reverted_by") {
                return Err(TxnError(
                    KipError::new(
                        ErrorCode::VersionConflict,
                        format!("{id} was already reverted by {by}"),
                    )
                    .with_hint(format!("Revert {by} to re-apply {id}."))
                    .with_data("later", json!(by)),
                ));
            }
            let ranged = self
                .store
                .trace_created(txn, n)?
                .into_iter()
                .flat_map(|(first, last)| range_elements(first, last));
            let elements: Vec<ElementId> = self
                .store
                .trace_elements(txn, n)?
                .into_iter()
                .chain(ranged)
                .collect();
            let later = self.later_writes(txn, n, &elements, &changes)?;
            if let Some(&(first, e)) = later.first() {
                return Err(TxnError(stale(id, &later, first, e)));
            }
        }
        Ok((entry, changes))
    }

    /// [`Nexus::revert`]'s work inside a write transaction the caller
    /// holds (`revert_to` reverts several entries in one).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn revert_in(
        &self,
        txn: &mut kip_store::RwTxn<'_>,
        n: u64,
        id: &str,
        originator: &str,
        authority: Authority,
        settings: &TraceSettings,
        started: std::time::Instant,
    ) -> std::result::Result<Reverted, TxnError> {
        let (entry, changes) = self.revertible(txn, n, id, authority)?;
        let floors = self.version_floors(txn, &changes)?;
        let mut w = Writer::new(&self.store, txn, "", now());
        w.collect_changes();
        w.restore(&changes, &floors)?;
        let stats = w.stats;
        let undone = w.take_changes();
        let mut change_seq = None;
        let mut logged = None;
        if stats.changed() {
            let log = json!({
                "origin": originator,
                "originator": originator,
                "pid": std::process::id(),
                "at": now(),
                "stats": stats,
            });
            change_seq = Some(self.store.append_change(txn, &log)?);
            logged = change_seq.map(|seq| (seq, log));
        }
        let mut data = Map::new();
        data.insert("reverts".into(), json!(id));
        let note = TraceNote {
            originator: Some(originator.to_owned()),
            tags: vec!["SelfCorrection".into()],
            data,
            ..TraceNote::default()
        };
        let append = Append {
            store: &self.store,
            settings,
            at: now(),
        };
        let text = format!("REVERT {id}");
        let new = append.command(
            txn,
            CommandRecord {
                originator,
                note: &note,
                verbs: text.clone(),
                text: &text,
                stats,
                changes: undone,
                created: Vec::new(),
                change_seq,
                duration: started.elapsed(),
            },
        )?;
        if let Some((seq, mut log)) = logged {
            log["trace"] = json!(new.id);
            self.store.amend_change(txn, seq, &log)?;
        }
        // Mark the reverted entry; a revert of a revert re-applies, so
        // the entry it had reverted counts as live again.
        let mut marked = entry.clone();
        set_data(&mut marked, "reverted_by", Some(json!(new.id)));
        self.store.set_trace_body(txn, n, &to_body(&marked))?;
        if let Some(m) = data_str(&entry, "reverts").and_then(|m| parse_entry_id(&m).ok())
            && let Some(body) = self.store.trace_entry(txn, m)?
        {
            let mut target = from_body(m, body)?;
            set_data(&mut target, "reverted_by", None);
            self.store.set_trace_body(txn, m, &to_body(&target))?;
        }
        Ok(Reverted {
            reverted: id.to_owned(),
            entry: new,
        })
    }

    /// Imports an exported trace (JSON Lines, one entry a line, the seed's
    /// fields): every line is checked first and the file lands whole or not
    /// at all. Entries get new ids and sequence numbers here; their
    /// originator, type, message, tags, flags, time and data are kept, and
    /// their former id is kept as `data.imported_from`.
    pub fn trace_import(&self, jsonl: &str) -> Result<u64> {
        let mut drafts = Vec::new();
        for (i, line) in jsonl.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |why: String| {
                KipError::new(
                    ErrorCode::InvalidSyntax,
                    format!("line {}: {why}", i + 1),
                )
                .with_hint("Each line must be one trace entry as `kip trace export` writes it; nothing was imported.")
                .with_data("line", json!(i + 1))
            };
            let v: Json = serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
            // An exported entry is a new one plus what the store gave it.
            let mut fields = v.clone();
            if let Some(o) = fields.as_object_mut() {
                for given in ["id", "seq", "at"] {
                    o.remove(given);
                }
            }
            let new: NewEntry = serde_json::from_value(fields)
                .map_err(|e| bad(format!("not a trace entry: {e}")))?;
            let kind = new.check().map_err(|e| bad(e.message))?;
            let at = v.get("at").and_then(Json::as_str).map(str::to_owned);
            let mut data = new.data.clone().unwrap_or_else(|| json!({}));
            if let Some(old) = v.get("id").and_then(Json::as_str) {
                data["imported_from"] = json!(old);
            }
            drafts.push((
                at,
                Draft {
                    originator: new.originator.unwrap_or_default(),
                    kind,
                    message: new.message,
                    tag: new.tag,
                    flags: new.flags,
                    data: Some(data),
                    elements: Vec::new(),
                },
            ));
        }
        let settings = self.tracer.settings();
        self.store
            .write(|txn| {
                for (at, d) in &drafts {
                    let append = Append {
                        store: &self.store,
                        settings: &settings,
                        at: at.clone().unwrap_or_else(now),
                    };
                    append.append(txn, draft_clone(d))?;
                }
                Ok::<_, TxnError>(drafts.len() as u64)
            })
            .map_err(|e| e.0)
    }
}

/// The refusal of a revert of `id` that later writes stand in the way of
/// (`first`, which touched `e`, is the oldest of them).
fn stale(id: &str, later: &[super::stale::Later], first: u64, e: ElementId) -> KipError {
    let ids: Vec<String> = later.iter().map(|(n, _)| format!("T:{n}")).collect();
    let said: Vec<String> = later
        .iter()
        .map(|(n, e)| format!("T:{n} changed {e}"))
        .collect();
    let (them, it) = if ids.len() == 1 {
        ("it", "it")
    } else {
        ("them", "them, newest first")
    };
    KipError::new(
        ErrorCode::VersionConflict,
        format!(
            "{} after {id}: reverting {id} would undo {them} too",
            said.join(", ")
        ),
    )
    .with_hint(format!(
        "Revert {it} first, or force the revert to put {id}'s elements back regardless."
    ))
    .with_data("later", json!(format!("T:{first}")))
    .with_data("later_entries", json!(ids))
    .with_data("element", json!(e.to_string()))
}

fn data_str(entry: &Entry, key: &str) -> Option<String> {
    entry.data.as_ref()?.get(key)?.as_str().map(str::to_owned)
}

fn set_data(entry: &mut Entry, key: &str, value: Option<Json>) {
    let data = entry.data.get_or_insert_with(|| json!({}));
    if let Some(obj) = data.as_object_mut() {
        match value {
            Some(v) => {
                obj.insert(key.to_owned(), v);
            }
            None => {
                obj.remove(key);
            }
        }
    }
}

fn draft_clone(d: &Draft) -> Draft {
    Draft {
        originator: d.originator.clone(),
        kind: d.kind,
        message: d.message.clone(),
        tag: d.tag.clone(),
        flags: d.flags.clone(),
        data: d.data.clone(),
        elements: d.elements.clone(),
    }
}
