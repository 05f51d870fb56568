//! Large bundles (1 MiB and more) are read on one thread while another
//! applies what is read (`kip-capsule`'s `piped`): whatever they hold, the
//! outcome must be the whole-file import's. A bundle mapping whose
//! `metadata` comes after its `items` always goes the whole-file way
//! (its defaults are not known while the items are read), which is what
//! these tests compare against.

use crate::common;

use common::{error_lines, fresh, graph, origin};
use kip_capsule::{ImportOptions, ImportReport, Phase, Progress, import_text_with};
use kip_nexus::{Nexus, TraceFilter};
use serde_json::{Value as Json, json};

/// The bundle's definitions, then `n` concepts (about 70 bytes each) and a
/// link for every tenth, then `tail`, as the items of a list.
fn items(n: usize, tail: &str) -> String {
    let mut text = String::from(
        "- {type: $ConceptType, name: Plant, description: A plant., \
         instance_schema: {height: {type: number, is_required: false}}}\n\
         - {type: $PropositionType, name: shades, description: Casts shade on., \
         subject_types: [Plant], object_types: [Plant]}\n",
    );
    for i in 0..n {
        text.push_str(&format!(
            "- type: Plant\n  name: plant {i}\n  description: plant number {i}\n  height: {i}\n"
        ));
        if i % 10 == 9 {
            text.push_str(&format!(
                "- type: shades\n  source: {{type: Plant, name: plant {i}}}\n  target: {{type: Plant, name: plant {}}}\n  metadata: {{confidence: 0.5}}\n",
                i - 1
            ));
        }
    }
    text.push_str(tail);
    text
}

/// The same items as a bundle mapping with default metadata `metadata`,
/// written before the items or after them.
fn as_mapping(list: &str, metadata: &str, before: bool) -> String {
    let mut items = String::from("items:\n");
    for line in list.lines() {
        items.push_str("  ");
        items.push_str(line);
        items.push('\n');
    }
    let metadata = format!("metadata: {metadata}\n");
    if before {
        metadata + &items
    } else {
        items + &metadata
    }
}

/// Imports `text` as `name`, recording the progress reports.
fn import(nexus: &Nexus, name: &str, text: &str, dry_run: bool) -> (ImportReport, Vec<Progress>) {
    let seen = std::cell::RefCell::new(Vec::new());
    let record = |p: Progress| seen.borrow_mut().push(p);
    let options = ImportOptions {
        dry_run,
        progress: Some(&record),
        originator: None,
        owner: false,
    };
    let report = import_text_with(nexus, name, text, &origin(), &options);
    (report, seen.into_inner())
}

/// Whether the import went through the two threads: they check and apply
/// at once, so they report no checking phase of its own.
fn was_piped(seen: &[Progress]) -> bool {
    !seen.is_empty() && seen.iter().all(|p| p.phase != Phase::Validating)
}

/// The nexus's TRACE entries, oldest first: message, outcome, created
/// ranges and the number of changes each holds.
fn traced(nexus: &Nexus) -> Vec<Json> {
    let filter = TraceFilter {
        originator: Some("test".into()),
        ..TraceFilter::default()
    };
    let mut entries = nexus.trace_list(&filter).expect("list").entries;
    entries.sort_by_key(|e| e.seq.parse::<u64>().unwrap_or(0));
    entries
        .iter()
        .map(|e| {
            let data = e.data.clone().unwrap_or_default();
            json!({
                "message": e.message,
                "outcome": data["outcome"],
                "created": data["created"],
                "changes": data["changes"].as_array().map_or(0, Vec::len),
            })
        })
        .collect()
}

/// Imports `list` into one fresh nexus and, into another, its mapping
/// form with empty metadata after the items (imported whole), and checks
/// that both say and hold the same; returns the list's report.
#[track_caller]
fn same_as_whole(list: &str, dry_run: bool) -> ImportReport {
    same_as(list, &as_mapping(list, "{}", false), dry_run)
}

/// [`same_as_whole`] of `text` against `whole`, which holds the same.
#[track_caller]
fn same_as(text: &str, whole_text: &str, dry_run: bool) -> ImportReport {
    assert!(
        text.len() >= 1 << 20,
        "{} bytes is below the piped size",
        text.len()
    );
    let (_a, piped) = fresh();
    let (_b, whole) = fresh();
    let (r, _) = import(&piped, "big.yaml", text, dry_run);
    let (w, seen_whole) = import(&whole, "big.yaml", whole_text, dry_run);
    assert!(!was_piped(&seen_whole));
    assert_eq!(r.status, w.status);
    assert_eq!(r.items, w.items);
    assert_eq!(r.stats, w.stats);
    // (Positions differ: the mapping's items are a line down, two
    // columns right.)
    let codes = |r: &ImportReport| r.errors.iter().map(|e| e.code).collect::<Vec<_>>();
    assert_eq!(codes(&r), codes(&w));
    assert_eq!(graph(&piped), graph(&whole));
    assert_eq!(traced(&piped), traced(&whole));
    assert_eq!(piped.last_change_seq().ok(), whole.last_change_seq().ok());
    let checked = piped.check_store().expect("check runs");
    assert!(checked.violations.is_empty(), "{:?}", checked.violations);
    r
}

#[test]
fn a_large_list_bundle_is_applied_while_read_and_holds_what_a_whole_import_holds() {
    let list = items(14_000, "");
    let (_d, nexus) = fresh();
    let (r, seen) = import(&nexus, "big.yaml", &list, false);
    assert!(r.is_imported(), "{:?}", r.errors);
    assert!(was_piped(&seen), "{seen:?}");
    assert_eq!(r.items, 2 + 14_000 + 1_400);
    assert_eq!(r.stats.concepts_created, 2 + 14_000);
    assert_eq!(r.stats.propositions_created, 1_400);
    let r = same_as_whole(&list, false);
    assert!(r.is_imported());
}

#[test]
fn a_large_bundle_mapping_applies_its_default_metadata_while_read() {
    let list = items(14_000, "");
    let defaults = "{source: greenhouse, confidence: 0.8}";
    let text = as_mapping(&list, defaults, true);
    let (_d, nexus) = fresh();
    let (r, seen) = import(&nexus, "big.yaml", &text, false);
    assert!(r.is_imported(), "{:?}", r.errors);
    assert!(was_piped(&seen), "{seen:?}");
    let held = graph(&nexus);
    assert!(
        held.iter()
            .any(|e| e.starts_with("Plant:\"plant 7\"") && e.contains("\"source\":\"greenhouse\"")),
        "the defaults are not on the items"
    );
    same_as(&text, &as_mapping(&list, defaults, false), false);
}

#[test]
fn a_large_list_bundle_previewed_writes_nothing_and_counts_what_it_would() {
    let list = items(14_000, "");
    let (_d, nexus) = fresh();
    let before = graph(&nexus);
    let (r, seen) = import(&nexus, "big.yaml", &list, true);
    assert!(was_piped(&seen));
    assert_eq!(r.stats.concepts_created, 2 + 14_000);
    assert_eq!(graph(&nexus), before);
    same_as_whole(&list, true);
}

#[test]
fn a_mistake_at_the_end_of_a_large_bundle_is_reported_as_a_whole_import_reports_it() {
    // The writer has applied most of the file when the reader meets the
    // mistake: all of it is undone, and the whole-file import reports.
    let list = items(14_000, "- type: Plnat\n  name: the last\n");
    let (_d, nexus) = fresh();
    let before = (graph(&nexus), nexus.last_change_seq().ok(), traced(&nexus));
    let (r, _) = import(&nexus, "big.yaml", &list, false);
    assert!(!r.is_imported());
    let line = list
        .lines()
        .position(|l| l == "- type: Plnat")
        .expect("there")
        + 1;
    let lines = error_lines(&r);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with(&format!("KIP_2001 [15402].type {line}:9 ")),
        "{lines:?}"
    );
    assert_eq!(
        (graph(&nexus), nexus.last_change_seq().ok(), traced(&nexus)),
        before
    );
    same_as_whole(&list, false);
}

#[test]
fn a_large_bundle_that_defines_after_other_items_is_read_whole() {
    // A definition after the items (here a repeat of the first): the
    // whole-file import checks every item against it, so the two threads
    // must not have started on them.
    let redefined = "- {type: $ConceptType, name: Plant, description: A plant., \
                     instance_schema: {height: {type: number, is_required: false}}}\n";
    let list = items(14_000, redefined);
    let (_d, nexus) = fresh();
    let (r, seen) = import(&nexus, "big.yaml", &list, false);
    assert!(r.is_imported(), "{:?}", r.errors);
    assert!(!was_piped(&seen));
    same_as_whole(&list, false);
    // A type used before it is defined: the whole import's message.
    let late = format!(
        "{}- {{type: Tree, name: oak}}\n- {{type: $ConceptType, name: Tree, description: A tree.}}\n",
        items(14_000, "")
    );
    let r = same_as_whole(&late, false);
    let lines = error_lines(&r);
    assert!(
        lines.iter().any(|l| l.contains("before its definition")),
        "{lines:?}"
    );
}

#[test]
fn a_large_bundle_reports_its_progress_in_order_and_ends_with_every_item_written() {
    let list = items(14_000, "");
    let (_d, nexus) = fresh();
    let (r, seen) = import(&nexus, "big.yaml", &list, false);
    assert!(r.is_imported());
    common::assert_progress_is_ordered_and_paced(&seen, list.len() as u64);
    let last = seen.last().expect("reports");
    let n = r.items as u64;
    assert_eq!((last.phase, last.done, last.total), (Phase::Applying, n, n));
    assert_eq!(last.bytes, list.len() as u64);
}
