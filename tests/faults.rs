//! Faults, proven against the `kip` binary: `kill -9` at random points of a
//! large import (the command line's and the watched folder's), two
//! processes importing while the map grows, a full store, oversized files,
//! damaged or foreign folders, and backups taken while others write. After
//! every scenario `kip check-store` must find the store's invariants intact.
//!
//! Bounded in work, not in time: a fixed number of rounds, each killed
//! after a delay spread over three times one measured import (the spread is what makes
//! the kills land in parsing, applying and committing; where each one
//! landed is printed, never asserted).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{kip, kip_run};
use serde_json::Value as Json;

/// Concepts in the large capsule (about 1 MB of text).
const LARGE: u64 = 3000;
/// Rounds of `kill -9` per scenario.
const KILLS: u64 = 10;

struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % 10_000) as f64 / 10_000.0
    }
}

/// One UPSERT of `n` Persons named `<prefix>-<i>`, each with a 200-byte note.
fn large_capsule(prefix: &str, n: u64) -> String {
    let mut text = String::from("UPSERT {\n");
    for i in 0..n {
        text.push_str(&format!(
            "  CONCEPT ?p{i} {{ {{type: \"Person\", name: \"{prefix}-{i:05}\"}} SET ATTRIBUTES {{ person_class: \"Human\", note: \"{}\" }} }}\n",
            "x".repeat(200)
        ));
    }
    text.push_str("}\n");
    text
}

fn json_of(out: &std::process::Output) -> Json {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn persons(db: &Path) -> u64 {
    let out = kip_run(
        db,
        &["exec", "FIND(COUNT(?p)) WHERE { ?p {type: \"Person\"} }"],
    );
    json_of(&out)["result"].as_u64().expect("a count")
}

/// Runs `kip check-store` and requires a clean report; returns it.
#[track_caller]
fn check_store(db: &Path) -> Json {
    let out = kip_run(db, &["check-store"]);
    let report = json_of(&out);
    assert_eq!(
        (out.status.code(), &report["ok"]),
        (Some(0), &Json::Bool(true)),
        "check-store found violations in {}:\n{report:#}",
        db.display()
    );
    report
}

/// A fresh nexus (created and bootstrapped) and its number of Persons.
fn fresh(dir: &Path) -> u64 {
    persons(dir)
}

fn import(db: &Path, file: &Path) -> Child {
    kip()
        .arg("--db")
        .arg(db)
        .arg("import")
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kip import starts")
}

/// Kills `child` (SIGKILL) after `delay`, unless it ended first; whether it
/// was killed.
fn kill_after(mut child: Child, delay: Duration) -> bool {
    let deadline = Instant::now() + delay;
    loop {
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        if Instant::now() >= deadline {
            // Only the child this test started, by its handle.
            let _ = child.kill();
            let _ = child.wait();
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn write_large(dir: &Path, name: &str, prefix: &str) -> PathBuf {
    let file = dir.join(name);
    std::fs::write(&file, large_capsule(prefix, LARGE)).expect("write the capsule");
    file
}

#[test]
fn kill_9_during_a_large_import_leaves_the_file_whole_or_absent() {
    let work = tempfile::tempdir().expect("tempdir");
    let file = write_large(work.path(), "large.kip", "crash");
    // One uninterrupted import: how long the kills are spread over.
    let base_db = work.path().join("measure");
    let base = fresh(&base_db);
    let started = Instant::now();
    let out = kip_run(&base_db, &["import", file.to_str().expect("path")]);
    let span = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(persons(&base_db), base + LARGE);

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut whole, mut absent) = (0, 0);
    for round in 0..KILLS {
        let db = work.path().join(format!("round{round}"));
        fresh(&db);
        let at = span.mul_f64((round as f64 + rng.unit()) / KILLS as f64 * 3.0);
        let killed = kill_after(import(&db, &file), at);
        let report = check_store(&db);
        let n = persons(&db);
        let changes = report["counts"]["changes"].as_u64().expect("changes");
        // The file is there whole, with its one change-log entry, or not
        // at all, without one.
        assert!(
            (n == base + LARGE && changes == 1) || (n == base && changes == 0),
            "round {round} (killed: {killed}, at {at:?}): {n} Persons, {changes} change entries"
        );
        if n == base {
            absent += 1
        } else {
            whole += 1
        }
        // The store takes the import again after the crash.
        if n == base {
            let out = kip_run(&db, &["import", file.to_str().expect("path")]);
            assert_eq!(out.status.code(), Some(0));
            assert_eq!(persons(&db), base + LARGE);
            check_store(&db);
        }
    }
    eprintln!(
        "kill -9 during import: {whole} rounds committed, {absent} left nothing (import ≈ {span:?})"
    );
}

#[test]
fn kill_9_of_the_watcher_leaves_each_dropped_file_whole_or_absent() {
    let work = tempfile::tempdir().expect("tempdir");
    let folder = work.path().join("capsules");
    std::fs::create_dir_all(&folder).expect("folder");
    let db = work.path().join("nexus");
    let base = fresh(&db);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut dropped = 0;
    let mut span = Duration::from_secs(2);
    for round in 0..KILLS / 2 {
        // Drop one more large file, then start the watcher and kill it.
        write_large(
            &folder,
            &format!("drop{round}.kip"),
            &format!("drop{round}"),
        );
        dropped += 1;
        let child = kip()
            .arg("--db")
            .arg(&db)
            .args(["watch", "--debounce-ms", "50"])
            .arg(&folder)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("kip watch starts");
        let at = span.mul_f64(rng.unit());
        kill_after(child, at);
        check_store(&db);
        let n = persons(&db) - base;
        assert_eq!(
            n % LARGE,
            0,
            "round {round}: a file landed in part ({n} Persons)"
        );
        assert!(n / LARGE <= dropped);
        span = span.max(Duration::from_millis(500));
    }
    // A watcher that runs to the end takes up whatever the killed ones left.
    let started = Instant::now();
    let out = kip_run(&db, &["watch", "--once", folder.to_str().expect("path")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    eprintln!("the last watcher finished in {:?}", started.elapsed());
    assert_eq!(persons(&db), base + dropped * LARGE);
    check_store(&db);
}

#[test]
fn two_processes_import_large_files_while_the_map_grows_and_lose_nothing() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    let base = fresh(&db);
    let a = write_large(work.path(), "a.kip", "a");
    let b = write_large(work.path(), "b.kip", "b");
    // A 256 KiB map to start with: the two imports (about 9 MB in all) make
    // it double five times or more, each process following the other's.
    let start = |file: &Path| {
        kip()
            .arg("--db")
            .arg(&db)
            .arg("import")
            .arg(file)
            .env("KIP_STORE_INITIAL_MAP_KIB", "256")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kip import starts")
    };
    let (ca, cb) = (start(&a), start(&b));
    for child in [ca, cb] {
        let out = child.wait_with_output().expect("import");
        let report = json_of(&out);
        assert_eq!(out.status.code(), Some(0), "{report:#}");
        assert_eq!(report["stats"]["concepts_created"], LARGE, "{report:#}");
    }
    assert_eq!(persons(&db), base + 2 * LARGE);
    let report = check_store(&db);
    assert_eq!(report["counts"]["changes"], 2);
    let size = std::fs::metadata(db.join("data.mdb"))
        .expect("data file")
        .len();
    assert!(
        size > 8 * 256 * 1024,
        "the map did not have to grow: {size} bytes"
    );
}

#[test]
fn a_full_store_answers_kip_4002_and_keeps_what_it_held() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    let base = fresh(&db);
    let before = check_store(&db);
    let file = write_large(work.path(), "large.kip", "full");
    let out = kip()
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&file)
        .env("KIP_STORE_MAX_MAP_KIB", "1024")
        .stdin(Stdio::null())
        .output()
        .expect("kip import");
    let report = json_of(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(report["errors"][0]["code"], "KIP_4002", "{report:#}");
    assert!(
        report["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("full")),
        "{report:#}"
    );
    assert_eq!(persons(&db), base);
    assert_eq!(check_store(&db)["counts"], before["counts"]);
}

/// `kip export` of the whole nexus (the knowledge, not the trace).
#[cfg(target_os = "linux")]
fn export(db: &Path) -> String {
    let out = kip_run(db, &["export"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// A real full disk, as the process sees it: `kip import` runs under a file
/// size limit (`RLIMIT_FSIZE`, set by util-linux's `prlimit`) just above the
/// data file's size, with `SIGXFSZ` ignored (by the shell that starts it;
/// an ignored signal stays ignored across `exec`), so LMDB's page writes
/// fall short and then fail with `EFBIG`, as they do with `ENOSPC` on a
/// full disk. The import answers `KIP_4002` saying the disk is full, and
/// the store is as it was: the check passes, the export is the same, and
/// without the limit the file imports.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_answers_kip_4002_and_leaves_the_store_as_it_was() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    let base = fresh(&db);
    let before = check_store(&db);
    let exported = export(&db);
    let file = write_large(work.path(), "large.kip", "disk");
    let data = db.join("data.mdb");
    let size = std::fs::metadata(&data).expect("data.mdb").len();
    // Room for a few pages, not for a megabyte of capsule.
    let limit = size + (64 << 10);
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; exec prlimit --fsize={limit} -- \"$0\" \"$@\""
        ))
        .arg(kip_e2e::kip_bin())
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&file)
        .stdin(Stdio::null());
    let out = command.output().expect("kip import");
    let report = json_of(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{report:#}\n{stderr}");
    let error = &report["errors"][0];
    assert_eq!(error["code"], "KIP_4002", "{report:#}");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains("the disk is full"), "{message}");
    // EFBIG: the message says which limit, not a bare errno.
    assert!(message.contains("file size limit"), "{message}");
    // The same coded error on standard error, for a person at the terminal.
    assert!(stderr.contains("KIP_4002"), "{stderr}");
    assert!(stderr.contains("the disk is full"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        std::fs::metadata(&data).expect("data.mdb").len() <= limit,
        "the data file grew past the limit"
    );

    // Without the limit: as it was, and still writable.
    assert_eq!(persons(&db), base);
    assert_eq!(check_store(&db)["counts"], before["counts"]);
    assert_eq!(export(&db), exported);
    let out = kip_run(&db, &["import", file.to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(0), "{}", json_of(&out));
    assert_eq!(persons(&db), base + LARGE);
    check_store(&db);
}

/// `kip ARGS` against `db` with the whole-file limit at 1 MiB.
fn kip_limited(db: &Path, args: &[&std::ffi::OsStr]) -> std::process::Output {
    kip()
        .arg("--db")
        .arg(db)
        .args(args)
        .env("KIP_MAX_FILE_MIB", "1")
        .stdin(Stdio::null())
        .output()
        .expect("kip")
}

#[test]
fn a_capsule_above_the_size_limit_is_streamed_and_a_bundle_is_refused_unread() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    let base = fresh(&db);
    let file = work.path().join("huge.kip");
    // 2 MiB of comment and two blocks: valid text, above a 1 MiB limit.
    let mut text = "// padding\n".repeat(2 << 20 >> 4);
    text.push_str(&large_capsule("huge", 2));
    std::fs::write(&file, &text).expect("write");
    let out = kip_limited(&db, &["import".as_ref(), file.as_os_str()]);
    let report = json_of(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["stats"]["concepts_created"], 2, "{report:#}");
    assert_eq!(persons(&db), base + 2);
    check_store(&db);

    // A capsule of several parts (one UPSERT of 9 MiB, cut between its
    // blocks) lands whole.
    let parts = work.path().join("parts.kip");
    std::fs::write(&parts, large_capsule("part", 32_000)).expect("write");
    assert!(std::fs::metadata(&parts).expect("size").len() > 8 << 20);
    let out = kip_limited(&db, &["import".as_ref(), parts.as_os_str()]);
    let report = json_of(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(persons(&db), base + 2 + 32_000);

    // The watcher streams it the same way.
    let db2 = work.path().join("nexus2");
    let base2 = fresh(&db2);
    let folder = work.path().join("watched");
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::copy(&file, folder.join("huge.kip")).expect("copy");
    let out = kip_limited(
        &db2,
        &["watch".as_ref(), "--once".as_ref(), folder.as_os_str()],
    );
    let events = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{events}");
    assert_eq!(persons(&db2), base2 + 2);

    // One block larger than the limit (and than a part) is refused, with
    // its place, and nothing of the file is applied.
    let mut text = large_capsule("first", 3);
    text.push_str(&format!(
        "UPSERT {{\n  CONCEPT {{ {{type: \"Person\", name: \"big\"}} SET ATTRIBUTES {{ person_class: \"Human\", note: \"{}\" }} }}\n}}\n",
        "y".repeat(5 << 20)
    ));
    let big = work.path().join("block.kip");
    std::fs::write(&big, &text).expect("write");
    let out = kip_limited(&db, &["import".as_ref(), big.as_os_str()]);
    let report = json_of(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(report["errors"][0]["code"], "KIP_4002");
    // The block's own line and column (after three blocks and a second
    // UPSERT's first line).
    assert_eq!(report["errors"][0]["data"]["line"], 7, "{report:#}");
    assert_eq!(report["errors"][0]["data"]["column"], 3, "{report:#}");
    let message = report["errors"][0]["message"].as_str().expect("message");
    assert!(message.contains("larger than"), "{message}");
    assert_eq!(
        persons(&db),
        base + 2 + 32_000,
        "nothing of the file is applied"
    );

    // A YAML bundle is parsed whole: above the limit it is refused unread,
    // naming it and the limit.
    let yaml = work.path().join("huge.yaml");
    let mut text = "# padding\n".repeat(2 << 20 >> 4);
    text.push_str("[]\n");
    std::fs::write(&yaml, &text).expect("write");
    let out = kip_limited(&db, &["import".as_ref(), yaml.as_os_str()]);
    let report = json_of(&out);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    let message = report["errors"][0]["message"].as_str().expect("message");
    assert!(message.contains("huge.yaml"), "{message}");
    assert!(message.contains(&(1u64 << 20).to_string()), "{message}");
    assert_eq!(report["errors"][0]["code"], "KIP_4002");
}

/// Runs `kip ARGS` against `db` and expects a clean refusal: exit 2, a
/// message naming `path`, and no panic.
#[track_caller]
fn refused(db: &Path, args: &[&str], path: &Path, what: &str) {
    let out = kip_run(db, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains(&path.display().to_string()),
        "{args:?}: the message does not name {}: {stderr}",
        path.display()
    );
    assert!(stderr.contains(what), "{args:?}: {stderr}");
}

#[test]
fn damaged_foreign_and_newer_stores_are_clear_errors_naming_the_path() {
    let work = tempfile::tempdir().expect("tempdir");
    let good = work.path().join("good");
    fresh(&good);
    let data = std::fs::read(good.join("data.mdb")).expect("read");

    let empty = work.path().join("empty");
    std::fs::create_dir_all(&empty).expect("folder");
    refused(&empty, &["check-store"], &empty, "is not a nexus");
    refused(&empty, &["backup", "x"], &empty, "is not a nexus");
    assert!(
        !empty.join("data.mdb").exists(),
        "check-store created a nexus"
    );

    let truncated = work.path().join("truncated");
    std::fs::create_dir_all(&truncated).expect("folder");
    std::fs::write(truncated.join("data.mdb"), &data[..data.len() / 3]).expect("write");
    let file = truncated.join("data.mdb");
    for args in [&["check-store"][..], &["exec", "DESCRIBE PRIMER"]] {
        refused(&truncated, args, &file, "truncated");
    }

    let foreign = work.path().join("foreign");
    std::fs::create_dir_all(&foreign).expect("folder");
    std::fs::write(
        foreign.join("data.mdb"),
        b"PK\x03\x04 this is a zip file".repeat(500),
    )
    .expect("write");
    refused(
        &foreign,
        &["exec", "DESCRIBE PRIMER"],
        &foreign.join("data.mdb"),
        "not an LMDB",
    );

    // A damaged first page (the meta page LMDB reads first). Damage inside
    // the data pages is not covered: LMDB keeps no checksums and follows
    // page pointers as they are, so flipped bytes there can crash the
    // process (see the failure model).
    let damaged = work.path().join("damaged");
    std::fs::create_dir_all(&damaged).expect("folder");
    let mut bytes = data.clone();
    bytes[..4096].fill(0);
    std::fs::write(damaged.join("data.mdb"), &bytes).expect("write");
    refused(
        &damaged,
        &["check-store"],
        &damaged.join("data.mdb"),
        "not an LMDB",
    );

    // A newer format: the version patched in place (see kip-store's format tests).
    let newer = work.path().join("newer");
    std::fs::create_dir_all(&newer).expect("folder");
    let mut bytes = data;
    // The key and the first three bytes of its big-endian u32 value (any
    // current version below 256).
    let needle = b"format_version\x00\x00\x00";
    // Every copy: pages an earlier commit left behind may hold one too.
    let found: Vec<usize> = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(at, _)| at)
        .collect();
    assert!(!found.is_empty(), "the version is not in the file");
    for at in found {
        bytes[at + needle.len()] = 9;
    }
    std::fs::write(newer.join("data.mdb"), &bytes).expect("write");
    refused(&newer, &["check-store"], &newer, "format version 9");
}

/// Seeded damages of a real store's data pages.
const DAMAGES: u64 = 20;

/// How a store walk over a damaged store ended, as the caller sees it.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Walk {
    /// A report (clean or listing violations) or a result.
    Report,
    /// A coded error the store raised itself (corrupt, undecodable, …).
    Error,
    /// The shield's answer: reading crashed the child.
    Damaged,
    /// Refused before reading (exit 2, naming the path).
    Refused,
}

/// Runs `kip ARGS` on a damaged store and classifies the outcome; fails
/// if the process itself died (a signal, a panic) or answered anything but
/// JSON or a refusal naming the store.
#[track_caller]
fn walk(db: &Path, args: &[&str], what: &str) -> Walk {
    let out = kip_run(db, args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let Some(code) = out.status.code() else {
        panic!(
            "{what}: {args:?} died by a signal: {:?}\n{stderr}",
            out.status
        );
    };
    assert!(!stderr.contains("panicked"), "{what}: {args:?}: {stderr}");
    if code == 2 {
        let path = db.display().to_string();
        assert!(stderr.contains(&path), "{what}: {args:?}: {stderr}");
        return Walk::Refused;
    }
    let answer: Json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("{what}: {args:?} exit {code}, not JSON ({e}):\n{stdout}\n{stderr}")
    });
    match &answer["error"] {
        Json::Null => {
            assert!(code == 0 || answer["ok"] == false, "{what}: {answer:#}");
            Walk::Report
        }
        error => {
            assert_eq!(code, 1, "{what}: {answer:#}");
            let code = error["code"].as_str().unwrap_or_default();
            assert!(code.starts_with("KIP_"), "{what}: {answer:#}");
            let message = error["message"].as_str().unwrap_or_default();
            if message.contains("is damaged: reading it crashed") {
                assert!(
                    message.contains(&db.display().to_string()),
                    "{what}: {message}"
                );
                assert!(
                    error["hint"]
                        .as_str()
                        .is_some_and(|h| h.contains("kip restore")),
                    "{what}: {answer:#}"
                );
                Walk::Damaged
            } else {
                Walk::Error
            }
        }
    }
}

/// Bytes flipped inside LMDB's data pages (which keep no checksums) can
/// make any read fault; `kip check-store` and `kip backup` read every page
/// in a child process, so each of 20 seeded damages of a real store ends in
/// a report, a coded error, or "the store at PATH is damaged: reading it
/// crashed (signal N)" — never in a crash of the command itself. A crashed
/// backup leaves no partial file behind.
#[test]
fn damaged_data_pages_never_crash_check_store_or_backup() {
    const PAGE: usize = 4096;
    let work = tempfile::tempdir().expect("tempdir");
    let good = work.path().join("good");
    fresh(&good);
    let file = work.path().join("some.kip");
    std::fs::write(&file, large_capsule("damage", 400)).expect("write");
    let out = kip_run(&good, &["import", file.to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(0), "{}", json_of(&out));
    let pristine = std::fs::read(good.join("data.mdb")).expect("read");
    let pages = pristine.len() / PAGE;
    assert!(pages > 16, "a store of {pages} pages");
    let mut rng = Rng(0x5eed_da7a_0bad_f00d);
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for i in 0..DAMAGES {
        // Past the two meta pages: a run of 4 to 35 bytes inverted.
        let page = 2 + (rng.unit() * (pages - 2) as f64) as usize;
        let at = page * PAGE + (rng.unit() * PAGE as f64) as usize;
        let len = 4 + (rng.unit() * 32.0) as usize;
        let mut bytes = pristine.clone();
        for b in &mut bytes[at..(at + len).min(pristine.len())] {
            *b = !*b;
        }
        let db = work.path().join(format!("damaged-{i:02}"));
        std::fs::create_dir_all(&db).expect("folder");
        std::fs::write(db.join("data.mdb"), &bytes).expect("write");
        let what = format!("damage {i} (page {page}, byte {at}, {len} bytes)");
        let checked = walk(&db, &["check-store"], &what);
        let dest = work.path().join(format!("backup-{i:02}"));
        let backed = walk(&db, &["backup", dest.to_str().expect("path")], &what);
        if backed == Walk::Damaged {
            assert!(
                !dest.join("data.mdb.partial").exists(),
                "{what}: a crashed backup left its partial file"
            );
        }
        eprintln!("{what}: check-store {checked:?}, backup {backed:?}");
        *seen.entry(format!("check-store {checked:?}")).or_default() += 1;
        *seen.entry(format!("backup {backed:?}")).or_default() += 1;
    }
    eprintln!("outcomes of {DAMAGES} damages: {seen:?}");
}

#[test]
fn a_backup_taken_while_another_process_writes_restores_to_a_consistent_nexus() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    let base = fresh(&db);
    let file = write_large(work.path(), "large.kip", "backup");
    let writer = import(&db, &file);
    let dest = work.path().join("backup");
    let out = kip_run(&db, &["backup", dest.to_str().expect("path")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(json_of(&out)["bytes"].as_u64().unwrap_or(0) > 0);
    let mut writer = writer;
    assert!(writer.wait().expect("writer").success());

    // The copy is one snapshot: before the import or after it.
    let restored = work.path().join("restored");
    let out = kip_run(&restored, &["restore", dest.to_str().expect("path")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(json_of(&out)["check"]["ok"], true);
    let n = persons(&restored);
    assert!(n == base || n == base + LARGE, "{n} Persons in the backup");
    check_store(&restored);

    // Restoring over a nexus needs --force, and never while it is in use.
    let out = kip_run(&restored, &["restore", dest.to_str().expect("path")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--force"));
    let server = common::Server::start(&restored, &["--addr", "127.0.0.1:0"]);
    let out = kip_run(
        &restored,
        &["restore", "--force", dest.to_str().expect("path")],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("in use by process"), "{text}");
    drop(server);
    let out = kip_run(
        &restored,
        &["restore", "--force", dest.to_str().expect("path")],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(restored.join("data.mdb.before-restore").is_file());
    check_store(&restored);
}

/// `kip compact` drops the free pages several imports leave, keeps every
/// element, leaves no staging files, and is refused while another process
/// has the nexus open (which then changes nothing).
#[test]
fn compact_shrinks_the_file_keeps_the_graph_and_waits_for_other_processes() {
    let work = tempfile::tempdir().expect("tempdir");
    let db = work.path().join("nexus");
    let base = fresh(&db);
    for round in 0..3 {
        let file = write_large(
            work.path(),
            &format!("large{round}.kip"),
            &format!("compact{round}"),
        );
        assert!(import(&db, &file).wait().expect("import").success());
    }
    let server = common::Server::start(&db, &["--addr", "127.0.0.1:0"]);
    let out = kip_run(&db, &["compact"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("in use by process"), "{text}");
    drop(server);
    assert!(!db.join(".compacting").exists());

    let out = kip_run(&db, &["compact"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json_of(&out);
    let (before, after) = (
        report["bytes_before"].as_u64().expect("before"),
        report["bytes_after"].as_u64().expect("after"),
    );
    assert!(after < before, "{report:#}");
    assert_eq!(report["check"]["ok"], true, "{report:#}");
    assert_eq!(
        std::fs::metadata(db.join("data.mdb")).expect("data").len(),
        after
    );
    assert!(!db.join(".compacting").exists());
    assert!(!db.join("data.mdb.before-restore").exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(db.join("data.mdb"))
            .expect("data")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    assert_eq!(persons(&db), base + 3 * LARGE);
    check_store(&db);
    // Writable as before.
    let out = kip_run(
        &db,
        &[
            "exec",
            "UPSERT { CONCEPT ?p { {type: \"Person\", name: \"after compact\"} } }",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(persons(&db), base + 3 * LARGE + 1);
}

#[test]
fn kip_serve_refuses_a_body_above_its_limit_with_413_and_writes_nothing() {
    use std::io::{Read as _, Write as _};

    let db = tempfile::tempdir().expect("tempdir");
    let server =
        common::Server::start(db.path(), &["--addr", "127.0.0.1:0", "--max-body-mib", "1"]);
    let (_, info) = server.get("/api/info");
    let seq = info["last_change_seq"].clone();
    let big = json_body_of_size(2 << 20);
    // With a Content-Length: refused before the body is read.
    let (status, answer) = common::http(
        server.port,
        "POST",
        "/api/import",
        &[],
        Some(&serde_json::from_str(&big).expect("JSON")),
    );
    assert_eq!(status, 413, "{answer:#}");
    assert_eq!(answer["error"]["code"], "KIP_4002", "{answer:#}");
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(message.contains(&(1u64 << 20).to_string()), "{message}");
    // Chunked, without a length: cut off at the limit.
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    stream
        .set_read_timeout(Some(common::READ_TIMEOUT))
        .expect("timeout");
    let head = format!(
        "POST /api/import HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        server.port
    );
    stream.write_all(head.as_bytes()).expect("send");
    for chunk in big.as_bytes().chunks(64 * 1024) {
        if stream
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .is_err()
            || stream.write_all(chunk).is_err()
            || stream.write_all(b"\r\n").is_err()
        {
            break; // The server may close early, having answered.
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    assert!(
        text.starts_with("HTTP/1.1 413"),
        "{}",
        &text[..text.len().min(300)]
    );
    assert!(text.contains("KIP_4002"), "{text}");
    // Nothing was written; a body under the limit still works.
    let (_, info) = server.get("/api/info");
    assert_eq!(info["last_change_seq"], seq);
    let (status, _) = server.post(
        "/api/kip",
        &serde_json::json!({"command": "DESCRIBE PRIMER"}),
    );
    assert_eq!(status, 200);
}

/// An `import` request of about `size` bytes.
fn json_body_of_size(size: usize) -> String {
    let mut text = String::from("// padding\n");
    while text.len() < size {
        text.push_str("// padding padding padding padding padding padding\n");
    }
    serde_json::json!({"file_name": "big.kip", "text": text}).to_string()
}
