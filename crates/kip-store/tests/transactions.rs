//! Transactions: atomicity, dry runs, snapshot isolation, concurrent
//! writers (threads, handles and processes) and growing the map.
//!
//! No assertion depends on timing: threads meet on channels, and concurrent
//! runs are checked for their end state, whatever the interleaving was.

use std::cell::Cell;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;

use kip_store::{ConceptRecord, Namespace, RwTxn, Store, StoreError, StoreOptions};
use serde_json::{Map, Value, json};

fn tiny() -> StoreOptions {
    StoreOptions {
        initial_map_size: 256 << 10,
        ..StoreOptions::default()
    }
}

fn payload(i: usize) -> Map<String, Value> {
    let mut attrs = Map::new();
    attrs.insert("i".to_owned(), json!(i));
    attrs.insert("text".to_owned(), json!("x".repeat(1000)));
    attrs
}

/// Creates concept `name` of type `Thing` with a 1 KB payload, counts it,
/// and logs the change: several databases touched by one write.
fn add_thing(store: &Store, txn: &mut RwTxn<'_>, name: &str, i: usize) -> Result<(), StoreError> {
    let ty = store.intern(txn, Namespace::ConceptType, "Thing")?;
    let record = ConceptRecord {
        type_id: ty,
        name: name.to_owned(),
        attributes: payload(i),
        ..Default::default()
    };
    store.create_concept(txn, &record)?;
    store.add_counter(txn, b"things", 1)?;
    store.append_change(txn, &json!({ "added": name }))?;
    Ok(())
}

/// `(concepts, counter, last change)` in one snapshot.
fn snapshot(store: &Store) -> (u64, i64, u64) {
    store
        .read(|txn| {
            Ok::<_, StoreError>((
                store.concept_count(txn)?,
                store.counter(txn, b"things")?,
                store.last_change_seq(txn)?,
            ))
        })
        .expect("read")
}

fn thing_names(store: &Store) -> Vec<String> {
    store
        .read(|txn| {
            let mut names: Vec<String> = store
                .all_concepts(txn)?
                .map(|c| c.map(|(_, r)| r.name))
                .collect::<Result<_, _>>()?;
            names.sort();
            Ok::<_, StoreError>(names)
        })
        .expect("read")
}

#[test]
fn store_is_send_and_sync() {
    fn check<T: Send + Sync + Clone>() {}
    check::<Store>();
}

#[test]
fn a_failed_write_leaves_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let result: Result<(), StoreError> = store.write(|txn| {
        add_thing(&store, txn, "a", 0)?;
        Err(StoreError::Invalid {
            detail: "the engine gave up".to_owned(),
        })
    });
    assert!(result.is_err());
    assert_eq!(snapshot(&store), (0, 0, 0));
    let names = store
        .read(|txn| store.names(txn, Namespace::ConceptType))
        .expect("read");
    assert!(names.is_empty(), "interned in an aborted write: {names:?}");
}

#[test]
fn a_dry_run_executes_exactly_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let seen = store
        .write_uncommitted(|txn| {
            add_thing(&store, txn, "a", 0)?;
            add_thing(&store, txn, "b", 1)?;
            store.put_state(txn, "import/x", &json!("hash"))?;
            // Inside the dry run its own changes are visible.
            Ok::<_, StoreError>((store.concept_count(txn)?, store.counter(txn, b"things")?))
        })
        .expect("dry run");
    assert_eq!(seen, (2, 2));
    assert_eq!(snapshot(&store), (0, 0, 0));
    let state = store
        .read(|txn| store.get_state(txn, "import/x"))
        .expect("read");
    assert_eq!(state, None);
    // Ids were not consumed: the first real concept is still C:1.
    let id = store
        .write(|txn| {
            let ty = store.intern(txn, Namespace::ConceptType, "Thing")?;
            store.create_concept(
                txn,
                &ConceptRecord {
                    type_id: ty,
                    name: "a".into(),
                    ..Default::default()
                },
            )
        })
        .expect("write");
    assert_eq!(id.to_string(), "C:1");
}

#[test]
fn readers_see_the_old_state_until_commit_and_never_half_a_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    store
        .write(|txn| add_thing(&store, txn, "first", 0))
        .expect("write");

    let (written, on_written) = mpsc::channel::<()>();
    let (read, on_read) = mpsc::channel::<()>();
    let (committed, on_committed) = mpsc::channel::<()>();
    let (checked, on_checked) = mpsc::channel::<()>();
    let store = &store;
    thread::scope(|s| {
        // A reader that opened its snapshot before the write began.
        let early_reader = s.spawn(move || {
            store
                .read(|txn| {
                    let before = (store.concept_count(txn)?, store.counter(txn, b"things")?);
                    read.send(()).expect("send");
                    on_committed.recv().expect("recv");
                    let after = (store.concept_count(txn)?, store.counter(txn, b"things")?);
                    Ok::<_, StoreError>((before, after))
                })
                .expect("read")
        });
        on_read.recv().expect("recv");
        s.spawn(move || {
            store
                .write(|txn| {
                    add_thing(store, txn, "second", 1)?;
                    add_thing(store, txn, "third", 2)?;
                    written.send(()).expect("send");
                    // Hold the write open until the main thread has looked.
                    on_checked.recv().expect("recv");
                    Ok::<_, StoreError>(())
                })
                .expect("write");
            committed.send(()).expect("send");
        });
        on_written.recv().expect("recv");
        // The write is done but not committed: a new reader sees none of it.
        assert_eq!(snapshot(store), (1, 1, 1));
        checked.send(()).expect("send");
        let (before, after) = early_reader.join().expect("reader thread");
        assert_eq!(before, (1, 1));
        assert_eq!(after, (1, 1), "a snapshot changed under its reader");
    });
    assert_eq!(snapshot(store), (3, 3, 3));
}

#[test]
fn two_handles_and_a_reader_in_one_process_lose_nothing_while_the_map_grows() {
    const PER_WRITER: usize = 300;
    let dir = tempfile::tempdir().expect("tempdir");
    let a = Store::open_with(dir.path(), &tiny()).expect("open a");
    let b = Store::open_with(dir.path(), &tiny()).expect("open b");
    assert!(
        a.is_fresh() && !b.is_fresh(),
        "only the first open creates the store"
    );
    let start = a.map_size().expect("map size");
    let (done, finished) = mpsc::channel::<()>();
    thread::scope(|s| {
        for (store, who) in [(&a, "a"), (&b, "b")] {
            let done = done.clone();
            s.spawn(move || {
                for i in 0..PER_WRITER {
                    store
                        .write(|txn| add_thing(store, txn, &format!("{who}{i:04}"), i))
                        .expect("write");
                }
                done.send(()).expect("send");
            });
        }
        drop(done);
        // Every snapshot is a whole number of writes: never half of one.
        let reader = b.clone();
        s.spawn(move || {
            loop {
                let (concepts, counter, seq) = snapshot(&reader);
                assert_eq!(concepts as i64, counter);
                assert_eq!(concepts, seq);
                match finished.try_recv() {
                    Err(mpsc::TryRecvError::Disconnected) => break,
                    Ok(()) | Err(mpsc::TryRecvError::Empty) => {}
                }
            }
        });
    });
    let total = (2 * PER_WRITER) as u64;
    assert_eq!(snapshot(&a), (total, total as i64, total));
    assert!(
        a.map_size().expect("map size") > start,
        "the map should have grown from {start} bytes"
    );
    drop((a, b));
    let reopened = Store::open(dir.path()).expect("reopen");
    let names = thing_names(&reopened);
    assert_eq!(names.len(), 2 * PER_WRITER);
    assert_eq!(names[0], "a0000");
    assert_eq!(names[names.len() - 1], format!("b{:04}", PER_WRITER - 1));
}

#[test]
fn one_write_larger_than_the_map_is_rerun_after_growing() {
    const THINGS: usize = 2_000; // about 2 MB of payload into a 256 KiB map
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_with(dir.path(), &tiny()).expect("open");
    let runs = Cell::new(0);
    store
        .write(|txn| {
            runs.set(runs.get() + 1);
            for i in 0..THINGS {
                add_thing(&store, txn, &format!("t{i:05}"), i)?;
            }
            Ok::<_, StoreError>(())
        })
        .expect("write");
    assert!(runs.get() > 1, "the write never ran out of room");
    let total = THINGS as u64;
    assert_eq!(snapshot(&store), (total, total as i64, total));
    drop(store);
    let store = Store::open_with(dir.path(), &tiny()).expect("reopen");
    assert!(
        store.map_size().expect("map size") >= 2 << 20,
        "reopening keeps a map big enough for the data"
    );
    let record = store
        .read(|txn| {
            let ty = store
                .lookup(txn, Namespace::ConceptType, "Thing")?
                .expect("type");
            let id = store.find_concept(txn, ty, "t01999")?.expect("concept");
            store.get_concept(txn, id)
        })
        .expect("read")
        .expect("record");
    assert_eq!(record.attributes, payload(1999));
}

#[test]
fn the_map_stops_growing_at_its_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = StoreOptions {
        initial_map_size: 256 << 10,
        max_map_size: 1 << 20,
    };
    let store = Store::open_with(dir.path(), &options).expect("open");
    let result = store.write(|txn| {
        for i in 0..2_000 {
            add_thing(&store, txn, &format!("t{i}"), i)?;
        }
        Ok::<_, StoreError>(())
    });
    assert!(matches!(result, Err(StoreError::Full { .. })), "{result:?}");
    // Nothing of the failed write is visible and the store still works.
    assert_eq!(snapshot(&store), (0, 0, 0));
    store
        .write(|txn| add_thing(&store, txn, "small", 0))
        .expect("small write");
}

#[test]
fn a_write_inside_a_write_is_refused_instead_of_deadlocking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(dir.path()).expect("open");
    let inner = store
        .write(|_txn| Ok::<_, StoreError>(store.write(|txn| add_thing(&store, txn, "inner", 0))))
        .expect("outer write");
    assert!(matches!(inner, Err(StoreError::Busy { .. })), "{inner:?}");
}

#[test]
fn a_write_that_must_grow_inside_a_read_is_refused_then_succeeds_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_with(dir.path(), &tiny()).expect("open");
    let big = |txn: &mut RwTxn<'_>| {
        for i in 0..1_000 {
            add_thing(&store, txn, &format!("t{i}"), i)?;
        }
        Ok::<_, StoreError>(())
    };
    let inside = store
        .read(|_txn| Ok::<_, StoreError>(store.write(big)))
        .expect("read");
    assert!(matches!(inside, Err(StoreError::Busy { .. })), "{inside:?}");
    store.write(big).expect("write alone");
    assert_eq!(snapshot(&store).0, 1_000);
}

const CHILD_DIR: &str = "KIP_STORE_TEST_CHILD_DIR";
const PER_PROCESS: usize = 300;

fn write_things(dir: &Path, who: &str) {
    let store = Store::open_with(dir, &tiny()).expect("open");
    for i in 0..PER_PROCESS {
        store
            .write(|txn| add_thing(&store, txn, &format!("{who}{i:04}"), i))
            .expect("write");
    }
}

/// Runs this very test a second time in a child process (which sees
/// `CHILD_DIR` and only writes), while the parent writes too. Both start
/// with a tiny map, so each must grow it and follow the other's growth.
#[test]
fn two_processes_write_concurrently_without_losing_writes() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        write_things(Path::new(&dir), "child");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = std::env::current_exe().expect("test executable");
    let child = Command::new(exe)
        .args([
            "--exact",
            "transactions::two_processes_write_concurrently_without_losing_writes",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child process");
    write_things(dir.path(), "parent");
    expect_success(child);
    let store = Store::open(dir.path()).expect("open");
    let total = (2 * PER_PROCESS) as u64;
    assert_eq!(snapshot(&store), (total, total as i64, total));
    let names = thing_names(&store);
    assert_eq!(names.len(), 2 * PER_PROCESS);
    assert!(names.contains(&format!("child{:04}", PER_PROCESS - 1)));
    assert!(names.contains(&format!("parent{:04}", PER_PROCESS - 1)));
    // Each process's changes are in the shared log, in commit order.
    let changes = store.read(|txn| store.changes_since(txn, 0)).expect("read");
    assert_eq!(changes.len(), 2 * PER_PROCESS);
    assert!(changes.windows(2).all(|w| w[0].0 + 1 == w[1].0));
}

fn expect_success(child: Child) {
    let out = child.wait_with_output().expect("child process");
    assert!(
        out.status.success(),
        "the child process failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const GROWER_DIR: &str = "KIP_STORE_TEST_GROWER_DIR";

/// The parent keeps a store open with a tiny map while a child process
/// grows the file far beyond it; the parent's next transactions must adopt
/// the child's map size (LMDB reports `MDB_MAP_RESIZED`) and see all of it.
#[test]
fn a_process_follows_another_processs_growth() {
    if let Some(dir) = std::env::var_os(GROWER_DIR) {
        let store = Store::open_with(Path::new(&dir), &tiny()).expect("open");
        store
            .write(|txn| {
                for i in 0..2_000 {
                    add_thing(&store, txn, &format!("t{i:05}"), i)?;
                }
                Ok::<_, StoreError>(())
            })
            .expect("write");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_with(dir.path(), &tiny()).expect("open");
    let small = store.map_size().expect("map size");
    let child = Command::new(std::env::current_exe().expect("test executable"))
        .args([
            "--exact",
            "transactions::a_process_follows_another_processs_growth",
            "--test-threads=1",
        ])
        .env(GROWER_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child process");
    expect_success(child);
    assert_eq!(snapshot(&store), (2_000, 2_000, 2_000));
    assert!(
        store.map_size().expect("map size") > small,
        "the map was not adopted"
    );
    store
        .write(|txn| add_thing(&store, txn, "after", 0))
        .expect("write after");
    assert_eq!(snapshot(&store).0, 2_001);
}

const COMMITTER_DIR: &str = "KIP_STORE_TEST_COMMITTER_DIR";

/// Opening a store checks that its file is as long as its last commit
/// (before mapping it). While another process commits, growing the file,
/// every open must still succeed: a commit landing between that check's
/// reads is not a truncated file.
#[test]
fn opening_while_another_process_commits_never_finds_the_file_truncated() {
    if let Some(dir) = std::env::var_os(COMMITTER_DIR) {
        write_things(Path::new(&dir), "child");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    drop(Store::open_with(dir.path(), &tiny()).expect("create"));
    let exe = std::env::current_exe().expect("test executable");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "transactions::opening_while_another_process_commits_never_finds_the_file_truncated",
            "--test-threads=1",
        ])
        .env(COMMITTER_DIR, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child process");
    let mut opens = 0;
    while child.try_wait().expect("child state").is_none() {
        // Each open is a fresh environment: the handle is dropped at once.
        if let Err(e) = Store::open_with(dir.path(), &tiny()) {
            let _ = child.kill();
            panic!("open {opens} failed while the other process committed: {e}");
        }
        opens += 1;
    }
    expect_success(child);
    assert!(opens > 0);
}
