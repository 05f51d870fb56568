//! The watched folder against real files: what is there at start, files
//! created, modified, moved in, written slowly, deleted; editor and swap
//! files; restarts. Outcomes are awaited with generous timeouts; nothing
//! here measures speed.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use common::*;
use kip_capsule::{WatchEvent, WatchOptions, Watcher};
use kip_nexus::{Context, ExecuteKip, Nexus};

/// How long any one outcome may take before the test gives up (a loaded
/// CI machine is slow; a correct watcher is never this slow).
const PATIENCE: Duration = Duration::from_secs(90);

fn options() -> WatchOptions {
    WatchOptions {
        debounce: Duration::from_millis(200),
        settle: Duration::from_millis(50),
        origin: kip_nexus::Origin {
            name: "watch-test".into(),
        },
        ..WatchOptions::default()
    }
}

fn start(nexus: &Arc<Nexus>, dir: &Path) -> (Watcher, Receiver<WatchEvent>) {
    Watcher::with_channel(nexus.clone(), dir, options()).expect("watching starts")
}

/// Receives events until one satisfies `done`; returns all received.
#[track_caller]
fn until(
    rx: &Receiver<WatchEvent>,
    what: &str,
    done: impl Fn(&WatchEvent) -> bool,
) -> Vec<WatchEvent> {
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(e) => {
                let last = done(&e);
                seen.push(e);
                if last {
                    return seen;
                }
            }
            Err(_) => panic!("no {what} within {PATIENCE:?}; events: {seen:#?}"),
        }
    }
}

fn named(file: &Path, name: &str) -> bool {
    file.file_name().is_some_and(|n| n == name)
}

fn imported_event(name: &'static str) -> impl Fn(&WatchEvent) -> bool {
    move |e| matches!(e, WatchEvent::Imported { file, .. } if named(file, name))
}

fn ready(e: &WatchEvent) -> bool {
    matches!(e, WatchEvent::Ready { .. })
}

fn files_of(events: &[WatchEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| e.file())
        .map(|f| {
            f.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect()
}

fn count(nexus: &Nexus, ty: &str, name: &str) -> usize {
    let r = nexus.execute(
        &ExecuteKip::command(format!(
            "FIND(?x.name) WHERE {{ ?x {{type: {ty:?}, name: {name:?}}} }}"
        )),
        &Context::default(),
    );
    r["result"].as_array().map_or(0, Vec::len)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

const HERB_TYPE: &str = "- {type: $ConceptType, name: Herb, description: A medicinal plant.}\n";

#[test]
fn imports_what_is_there_then_what_is_created_modified_moved_in_and_keeps_deleted_knowledge() {
    let (_d, nexus) = fresh();
    let nexus = Arc::new(nexus);
    let root = tempfile::tempdir().expect("dir");
    let dir = root.path().join("capsules");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::copy(
        examples_dir().join("10_medical_schema.kip"),
        dir.join("10_medical_schema.kip"),
    )
    .expect("copy");
    std::fs::copy(
        examples_dir().join("11_medical_data.kip"),
        dir.join("11_medical_data.kip"),
    )
    .expect("copy");

    let (watcher, rx) = start(&nexus, &dir);
    let first = until(&rx, "the first pass", ready);
    let outcomes: Vec<&WatchEvent> = first
        .iter()
        .filter(|e| matches!(e, WatchEvent::Imported { .. } | WatchEvent::Failed { .. }))
        .collect();
    assert_eq!(outcomes.len(), 2, "{first:#?}");
    assert!(
        matches!(outcomes[0], WatchEvent::Imported { file, .. } if named(file, "10_medical_schema.kip"))
    );
    assert!(
        matches!(outcomes[1], WatchEvent::Imported { file, .. } if named(file, "11_medical_data.kip"))
    );
    assert!(matches!(first.last(), Some(WatchEvent::Ready { files: 2 })));
    assert_eq!(count(&nexus, "Drug", "Aspirin"), 1);

    // Created.
    write(
        &dir,
        "herbs.yaml",
        &format!("{HERB_TYPE}- {{type: Herb, name: Ginseng}}\n"),
    );
    let events = until(&rx, "herbs.yaml imported", imported_event("herbs.yaml"));
    assert!(
        matches!(&events[..], [.., WatchEvent::Queued { .. }, WatchEvent::Importing { .. }, WatchEvent::Imported { report, .. }] if report.stats.concepts_created == 2),
        "{events:#?}"
    );
    assert_eq!(count(&nexus, "Herb", "Ginseng"), 1);

    // Modified.
    write(
        &dir,
        "herbs.yaml",
        &format!("{HERB_TYPE}- {{type: Herb, name: Ginseng}}\n- {{type: Herb, name: Ginger}}\n"),
    );
    let events = until(
        &rx,
        "herbs.yaml imported again",
        imported_event("herbs.yaml"),
    );
    match events.last() {
        Some(WatchEvent::Imported { report, .. }) => {
            assert_eq!(report.stats.concepts_created, 1, "{report:?}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(count(&nexus, "Herb", "Ginger"), 1);

    // Moved in from elsewhere on the same file system.
    let outside = write(root.path(), "mint.yaml", "- {type: Herb, name: Mint}\n");
    std::fs::rename(&outside, dir.join("mint.yaml")).expect("rename");
    until(&rx, "mint.yaml imported", imported_event("mint.yaml"));
    assert_eq!(count(&nexus, "Herb", "Mint"), 1);

    // A subfolder moved in brings its files.
    let sub = root.path().join("more");
    std::fs::create_dir(&sub).expect("mkdir");
    write(&sub, "sage.yaml", "- {type: Herb, name: Sage}\n");
    std::fs::rename(&sub, dir.join("more")).expect("rename");
    until(&rx, "more/sage.yaml imported", imported_event("sage.yaml"));
    assert_eq!(count(&nexus, "Herb", "Sage"), 1);

    // Deleted: reported, knowledge kept.
    std::fs::remove_file(dir.join("mint.yaml")).expect("rm");
    until(
        &rx,
        "mint.yaml removed",
        |e| matches!(e, WatchEvent::Removed { file } if named(file, "mint.yaml")),
    );
    assert_eq!(count(&nexus, "Herb", "Mint"), 1);

    // Moved away: reported as removed too.
    std::fs::rename(dir.join("herbs.yaml"), root.path().join("herbs.yaml")).expect("rename");
    until(
        &rx,
        "herbs.yaml removed",
        |e| matches!(e, WatchEvent::Removed { file } if named(file, "herbs.yaml")),
    );
    assert_eq!(count(&nexus, "Herb", "Ginger"), 1);
    watcher.stop();
}

#[test]
fn hidden_temporary_and_swap_files_are_ignored_and_editor_saves_import_once() {
    let (_d, nexus) = fresh();
    let nexus = Arc::new(nexus);
    let dir = tempfile::tempdir().expect("dir");
    write(dir.path(), "herbs.yaml", HERB_TYPE);
    let (watcher, rx) = start(&nexus, dir.path());
    until(&rx, "the first pass", ready);

    // What editors and downloaders leave around: none of it is a capsule.
    let junk = "- {type: Nonsense, name: X}\n";
    for name in [
        ".herbs.yaml.swp",
        "herbs.yaml~",
        "#herbs.yaml#",
        ".hidden.yaml",
        "herbs.yaml.tmp",
        "4913",
        "herbs.yaml.crdownload",
        "~$herbs.yaml",
    ] {
        write(dir.path(), name, junk);
    }
    std::fs::create_dir(dir.path().join(".git")).expect("mkdir");
    write(&dir.path().join(".git"), "x.kip", junk);
    // An editor's safe save: write a temporary file, rename it over the target.
    write(
        dir.path(),
        ".ginseng.yaml.tmp123",
        "- {type: Herb, name: Ginseng}\n",
    );
    std::fs::rename(
        dir.path().join(".ginseng.yaml.tmp123"),
        dir.path().join("ginseng.yaml"),
    )
    .expect("rename");
    // Then a sentinel: once it is in, everything before it was seen.
    write(
        dir.path(),
        "sentinel.yaml",
        "- {type: Herb, name: Sentinel}\n",
    );
    let mut events = until(&rx, "ginseng.yaml imported", imported_event("ginseng.yaml"));
    if !events.iter().any(imported_event("sentinel.yaml")) {
        events.extend(until(
            &rx,
            "sentinel.yaml imported",
            imported_event("sentinel.yaml"),
        ));
    }
    let files = files_of(&events);
    assert!(
        files
            .iter()
            .all(|f| f == "ginseng.yaml" || f == "sentinel.yaml"),
        "{events:#?}"
    );
    let ginseng_imports = events
        .iter()
        .filter(|e| imported_event("ginseng.yaml")(e))
        .count();
    assert_eq!(ginseng_imports, 1, "{events:#?}");
    assert_eq!(count(&nexus, "Herb", "Ginseng"), 1);
    watcher.stop();
}

#[test]
fn a_slowly_written_file_ends_imported_whole() {
    let (_d, nexus) = fresh();
    let nexus = Arc::new(nexus);
    let dir = tempfile::tempdir().expect("dir");
    let (watcher, rx) = start(&nexus, dir.path());
    until(&rx, "the first pass", ready);
    let mut text = String::from(HERB_TYPE);
    for i in 0..40 {
        text.push_str(&format!(
            "- {{type: Herb, name: herb{i}, note: \"written slowly\"}}\n"
        ));
    }
    let hash = kip_capsule::content_hash(text.as_bytes());
    {
        use std::io::Write as _;
        let mut f = std::fs::File::create(dir.path().join("slow.yaml")).expect("create");
        for chunk in text.as_bytes().chunks(text.len() / 6 + 1) {
            f.write_all(chunk).expect("write");
            f.flush().expect("flush");
            // Pauses to simulate a slow writer (a download, a network share).
            std::thread::sleep(Duration::from_millis(120));
        }
    }
    // Partial contents may be seen and refused on the way; the file must end
    // imported as written.
    until(
        &rx,
        "the complete slow.yaml imported",
        |e| matches!(e, WatchEvent::Imported { file, report } if named(file, "slow.yaml") && report.hash == hash),
    );
    for i in 0..40 {
        assert_eq!(count(&nexus, "Herb", &format!("herb{i}")), 1, "herb{i}");
    }
    watcher.stop();
}

#[test]
fn a_restart_skips_unchanged_files_and_catches_up_on_changes() {
    let (_d, nexus) = fresh();
    let nexus = Arc::new(nexus);
    let dir = tempfile::tempdir().expect("dir");
    write(dir.path(), "a_types.yaml", HERB_TYPE);
    write(
        dir.path(),
        "b_ginseng.yaml",
        "- {type: Herb, name: Ginseng}\n",
    );
    write(dir.path(), "c_gone.yaml", "- {type: Herb, name: Gone}\n");
    let (watcher, rx) = start(&nexus, dir.path());
    let first = until(&rx, "the first pass", ready);
    assert_eq!(
        first
            .iter()
            .filter(|e| matches!(e, WatchEvent::Imported { .. }))
            .count(),
        3,
        "{first:#?}"
    );
    watcher.stop();
    let seq = nexus.last_change_seq().expect("seq");

    // While nobody watches: one file changes, one goes, one arrives.
    write(
        dir.path(),
        "b_ginseng.yaml",
        "- {type: Herb, name: Ginseng}\n- {type: Herb, name: Ginger}\n",
    );
    std::fs::remove_file(dir.path().join("c_gone.yaml")).expect("rm");
    write(dir.path(), "d_new.yaml", "- {type: Herb, name: Mint}\n");

    let (watcher, rx) = start(&nexus, dir.path());
    let second = until(&rx, "the second first pass", ready);
    let unchanged: Vec<&WatchEvent> = second
        .iter()
        .filter(|e| matches!(e, WatchEvent::Unchanged { .. }))
        .collect();
    assert_eq!(unchanged.len(), 1, "{second:#?}");
    match unchanged[0] {
        WatchEvent::Unchanged {
            file,
            report: Some(report),
        } => {
            assert!(named(file, "a_types.yaml"));
            assert_eq!(
                report.stats.concepts_created, 1,
                "the last import's report is remembered"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        !second
            .iter()
            .any(|e| matches!(e, WatchEvent::Importing { file } if named(file, "a_types.yaml"))),
        "{second:#?}"
    );
    let imported: Vec<String> = files_of(
        &second
            .iter()
            .filter(|e| matches!(e, WatchEvent::Imported { .. }))
            .cloned()
            .collect::<Vec<_>>(),
    );
    assert_eq!(imported, ["b_ginseng.yaml", "d_new.yaml"], "{second:#?}");
    assert!(
        second
            .iter()
            .any(|e| matches!(e, WatchEvent::Removed { file } if named(file, "c_gone.yaml")))
    );
    assert_eq!(
        count(&nexus, "Herb", "Gone"),
        1,
        "a deleted file's knowledge stays"
    );
    assert_eq!(count(&nexus, "Herb", "Ginger"), 1);
    assert_eq!(
        nexus.last_change_seq().expect("seq"),
        seq + 2,
        "only the two changed files wrote"
    );
    watcher.stop();

    // A third start with nothing changed imports nothing at all.
    let (watcher, rx) = start(&nexus, dir.path());
    let third = until(&rx, "the third first pass", ready);
    assert!(
        third
            .iter()
            .all(|e| !matches!(e, WatchEvent::Importing { .. } | WatchEvent::Removed { .. })),
        "{third:#?}"
    );
    assert_eq!(
        third
            .iter()
            .filter(|e| matches!(e, WatchEvent::Unchanged { .. }))
            .count(),
        3
    );
    watcher.stop();
}

#[test]
fn a_failed_file_reports_every_error_and_imports_once_fixed_or_once_its_types_arrive() {
    let (_d, nexus) = fresh();
    let nexus = Arc::new(nexus);
    let dir = tempfile::tempdir().expect("dir");
    let (watcher, rx) = start(&nexus, dir.path());
    until(&rx, "the first pass", ready);

    // Needs a type nobody has defined yet.
    write(
        dir.path(),
        "herbs.yaml",
        "- {type: Herb, name: Ginseng}\n- {type: Herb, name: Ginger}\n",
    );
    let events = until(&rx, "herbs.yaml failing", |e| {
        matches!(e, WatchEvent::Failed { .. })
    });
    match events.last() {
        Some(WatchEvent::Failed { report, .. }) => {
            assert_eq!(
                error_lines(report),
                [
                    "KIP_2001 [0].type 1:10 Entity type 'Herb' is not defined",
                    "KIP_2001 [1].type 2:10 Entity type 'Herb' is not defined",
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(count(&nexus, "Herb", "Ginseng"), 0);

    // The type arrives in another file: the failed file is tried again.
    write(dir.path(), "types.yaml", HERB_TYPE);
    until(&rx, "types.yaml imported", imported_event("types.yaml"));
    until(
        &rx,
        "herbs.yaml retried and imported",
        imported_event("herbs.yaml"),
    );
    assert_eq!(count(&nexus, "Herb", "Ginger"), 1);

    // A broken file fixed in place.
    write(
        dir.path(),
        "broken.kip",
        "UPSERT { CONCEPT ?h { {type: \"Herb\", name: \"Mint\"} }\n",
    );
    let events = until(
        &rx,
        "broken.kip failing",
        |e| matches!(e, WatchEvent::Failed { file, .. } if named(file, "broken.kip")),
    );
    match events.last() {
        Some(WatchEvent::Failed { report, .. }) => {
            assert_eq!(report.errors[0].code, kip_lang::ErrorCode::InvalidSyntax)
        }
        other => panic!("{other:?}"),
    }
    write(
        dir.path(),
        "broken.kip",
        "UPSERT { CONCEPT ?h { {type: \"Herb\", name: \"Mint\"} } }\n",
    );
    until(&rx, "broken.kip imported", imported_event("broken.kip"));
    assert_eq!(count(&nexus, "Herb", "Mint"), 1);
    watcher.stop();
}

#[test]
fn events_serialise_for_a_ui() {
    let e = WatchEvent::Removed {
        file: PathBuf::from("/x/a.yaml"),
    };
    assert_eq!(
        e.to_json(),
        serde_json::json!({"event": "removed", "file": "/x/a.yaml"})
    );
    let e = WatchEvent::Ready { files: 3 };
    assert_eq!(
        e.to_json(),
        serde_json::json!({"event": "ready", "files": 3})
    );
}

#[test]
fn a_folder_of_many_capsules_is_taken_up_as_one_import_with_each_files_events_in_order() {
    let (_d, nexus) = fresh();
    let nexus = Arc::new(nexus);
    let root = tempfile::tempdir().expect("dir");
    let dir = root.path().join("capsules");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::copy(
        examples_dir().join("10_medical_schema.kip"),
        dir.join("10_medical_schema.kip"),
    )
    .expect("copy");
    // Additive capsules that name concepts of one another, and one broken
    // file among them: the others still land, each whole.
    let names: Vec<String> = (0..6).map(|i| format!("2{i}_drugs.kip")).collect();
    for (i, name) in names.iter().enumerate() {
        let link = if i == 0 {
            String::new()
        } else {
            format!(
                r#" SET PROPOSITIONS {{ ("treats", {{type: "Symptom", name: "Batch symptom {}"}}) }}"#,
                i - 1
            )
        };
        write(
            &dir,
            name,
            &format!(
                "UPSERT {{\n  CONCEPT {{ {{type: \"Symptom\", name: \"Batch symptom {i}\"}} }}\n  CONCEPT {{ {{type: \"Drug\", name: \"Batch drug {i}\"}}{link} }}\n}}\n"
            ),
        );
    }
    write(
        &dir,
        "23b_broken.kip",
        "UPSERT { CONCEPT ?x { {type: \"Drug\"",
    );

    let (_watcher, rx) = start(&nexus, &dir);
    let events = until(&rx, "the first pass", ready);
    let outcome = |name: &str| {
        events.iter().find_map(|e| match e {
            WatchEvent::Imported { file, .. } if named(file, name) => Some("imported"),
            WatchEvent::Failed { file, .. } if named(file, name) => Some("failed"),
            _ => None,
        })
    };
    for name in &names {
        assert_eq!(outcome(name), Some("imported"), "{name}: {events:#?}");
    }
    assert_eq!(outcome("23b_broken.kip"), Some("failed"), "{events:#?}");
    for i in 0..6 {
        assert_eq!(count(&nexus, "Drug", &format!("Batch drug {i}")), 1);
    }
    // Each file: Importing, then its outcome, before the next file starts;
    // files in the folder's order.
    let steps: Vec<(String, &str)> = events
        .iter()
        .filter_map(|e| {
            let step = match e {
                WatchEvent::Importing { .. } => "importing",
                WatchEvent::Imported { .. } | WatchEvent::Failed { .. } => "done",
                _ => return None,
            };
            Some((files_of(std::slice::from_ref(e)).concat(), step))
        })
        .collect();
    let mut expected = Vec::new();
    let mut order: Vec<String> = names.clone();
    order.push("23b_broken.kip".into());
    order.push("10_medical_schema.kip".into());
    order.sort();
    for name in &order {
        expected.push((name.clone(), "importing"));
        expected.push((name.clone(), "done"));
    }
    // The broken file is tried again once the files after it changed the
    // graph (it might have waited for a type they define).
    expected.push(("23b_broken.kip".into(), "importing"));
    expected.push(("23b_broken.kip".into(), "done"));
    assert_eq!(steps, expected, "{events:#?}");
}
