//! The LMDB environment: opening it once per process, beginning
//! transactions, and remapping it when it must grow or when another process
//! grew it. This is the only module with `unsafe` code: heed marks opening
//! and resizing an environment unsafe because a memory map must not change
//! under a live transaction (and the FFI call that caps glibc's malloc
//! arenas, see [`limit_malloc_arenas`], is unsafe by nature).
//!
//! Three rules, and how they are kept:
//!
//! - **One environment per folder per process.** LMDB forbids opening the
//!   same environment twice in one process (and heed refuses to), so
//!   [`open`] keeps a registry of the environments this process has open and
//!   hands every `Store` for the same folder the same [`EnvHandle`].
//! - **No transaction may be open while the map is resized.** Every
//!   transaction holds a slot of the handle's [`Gate`] for its whole life;
//!   a resize waits until no slot is held and, meanwhile, holds back new
//!   transactions so it cannot starve. A thread that already holds a slot may
//!   open nested transactions without waiting (the resize cannot start while
//!   it holds one anyway), but cannot itself resize: that would wait for
//!   itself, so it gets [`StoreError::Busy`] instead.
//! - **Follow other processes.** When another process grows the file past
//!   this process's map, LMDB refuses to begin a transaction with
//!   `MDB_MAP_RESIZED`; [`EnvHandle`] then adopts the size recorded in the
//!   file (`mdb_env_set_mapsize(0)`) and tries again. When this process runs
//!   out of room (`MDB_MAP_FULL`) it doubles its own map; LMDB records the
//!   larger size in the file for the others.
//!
//! Memory. Without `MDB_WRITEMAP`, LMDB copies every page a write
//! transaction changes into a `malloc`ed page, and keeps those pages for
//! reuse after the commit (they are never given back while the environment
//! is open). A 20,000-link capsule on a 1M-proposition store dirties tens of
//! thousands of pages scattered over the indexes, so the engine's anonymous
//! memory grows to the largest transaction's dirty set. kip-store builds
//! LMDB with `MDB_IDL_LOGN` 11 (heed's `mdb_idl_logn_11`, in Cargo.toml):
//! a transaction keeps at most 2^12 dirty pages (16 MiB at 4 KiB pages)
//! and spills older ones to the file (written, not synced: they belong to
//! no committed tree until the commit syncs them), instead of 2^17
//! (512 MiB). The file format does not change; it is the same LMDB. On the
//! 1M benchmark import 32 MiB was as fast as 128 MiB (a shorter dirty list
//! is also faster to search) and the import's peak fell from 289 to 186 MB
//! (BENCHMARKS.md, "Engine memory"). 16 MiB (2026-11-25) left room for the
//! pipelined import's reader to check a file further ahead: with both, the
//! 1M import peaks at 172–173 MB and runs faster (BENCHMARKS.md, "Latest").
//!
//! `MDB_WRITEMAP` would remove the copies altogether, and is not used: LMDB
//! then extends the file to the whole map size (a sparse file) and writes
//! pages through the map, so a full disk is a `SIGBUS` that kills the
//! process instead of `MDB_MAP_FULL`/`ENOSPC` reported as KIP_4002 with the
//! store as it was; it is incompatible with nested transactions; and every
//! process that opens the folder would have to use it (an older `kip`
//! without it must not share the file).
//!
//! What this module does not do: decide when to retry a write (that is
//! `Store::write`), or know any database of the store.

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};

use heed::{CompactionOption, Env, EnvOpenOptions, MdbError, RoTxn, RwTxn, WithoutTls};

use crate::error::{Lmdb as _, StoreError, lmdb};

/// Named databases the environment may hold. The store uses 24; the rest is
/// room for future formats without reopening old files with new limits.
const MAX_DBS: u32 = 32;

/// Map sizes are kept multiples of this, which is a multiple of every page
/// size LMDB runs with (4 KiB, 16 KiB, 64 KiB).
const MAP_GRANULE: usize = 64 * 1024;

/// How many times in a row a transaction may find the map resized by other
/// processes before giving up.
const MAX_ADOPTIONS: usize = 32;

/// How a store is opened.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// The map size to start with, in bytes (rounded up to 64 KiB). The file
    /// only grows as data arrives; the map doubles whenever a write needs
    /// more room. Default: 64 MiB.
    pub initial_map_size: usize,
    /// The map never grows beyond this; a write that needs more fails with
    /// [`StoreError::Full`]. Default: 1 TiB on 64-bit targets, 1 GiB on
    /// 32-bit ones.
    pub max_map_size: usize,
}

/// Overrides [`StoreOptions::initial_map_size`] of the default options, in
/// KiB: for tests that must make the map grow, and for tuning.
pub const INITIAL_MAP_VAR: &str = "KIP_STORE_INITIAL_MAP_KIB";
/// Overrides [`StoreOptions::max_map_size`] of the default options, in
/// KiB: for tests of a full store, and to cap a nexus's size.
pub const MAX_MAP_VAR: &str = "KIP_STORE_MAX_MAP_KIB";

fn kib_from_env(var: &str) -> Option<usize> {
    let kib: usize = std::env::var(var).ok()?.trim().parse().ok()?;
    Some(kib.saturating_mul(1024))
}

impl Default for StoreOptions {
    /// 1 GiB to start with and 1 TiB at most (64 MiB and 1 GiB on 32-bit
    /// targets), unless `KIP_STORE_INITIAL_MAP_KIB` / `KIP_STORE_MAX_MAP_KIB`
    /// say otherwise. The map is address space, not disk: without
    /// `MDB_WRITEMAP` the file grows only by the pages written. Starting
    /// large matters because a write that fills the map is re-run whole
    /// after the map doubles: from 64 MiB, a 100,000-concept capsule was
    /// applied three times, and the 1M-link benchmark re-ran five capsules.
    fn default() -> Self {
        StoreOptions {
            initial_map_size: kib_from_env(INITIAL_MAP_VAR)
                .unwrap_or_else(default_initial_map_size),
            max_map_size: kib_from_env(MAX_MAP_VAR).unwrap_or_else(default_max_map_size),
        }
    }
}

#[cfg(target_pointer_width = "64")]
fn default_initial_map_size() -> usize {
    1 << 30
}

#[cfg(not(target_pointer_width = "64"))]
fn default_initial_map_size() -> usize {
    64 << 20
}

#[cfg(target_pointer_width = "64")]
fn default_max_map_size() -> usize {
    1 << 40
}

#[cfg(not(target_pointer_width = "64"))]
fn default_max_map_size() -> usize {
    1 << 30
}

/// How many malloc arenas glibc may create: see [`limit_malloc_arenas`].
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MALLOC_ARENAS: libc::c_int = 2;

/// Caps glibc's malloc arenas at [`MALLOC_ARENAS`], once per process,
/// unless `MALLOC_ARENA_MAX` says otherwise. glibc gives threads their own
/// arenas (up to 8 per core) and keeps what is freed in each for reuse, so
/// a server whose requests run on whichever thread is free holds many
/// arenas' worth of freed memory: `kip serve` on the 1M bench graph grew to
/// 180 MB of anonymous memory over 6,300 browsing requests with a live heap
/// of 14 MB, and stays at 31 MB with two arenas. Done when the first
/// environment opens, before a face starts its worker threads; arenas
/// that already exist are kept.
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
                // SAFETY: mallopt only changes a tunable of the allocator,
                // which takes its own lock; it is safe to call at any time.
                unsafe {
                    libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS);
                }
            }
        });
    }
}

fn round_up(size: usize) -> usize {
    size.div_ceil(MAP_GRANULE)
        .saturating_mul(MAP_GRANULE)
        .max(MAP_GRANULE)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The protected state is a few counters that are never left half-updated,
    // so a panic elsewhere does not make it unusable.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The environments this process has open, by canonical folder.
static REGISTRY: Mutex<Vec<(PathBuf, Weak<EnvHandle>)>> = Mutex::new(Vec::new());

/// Distinguishes handles in the per-thread record of held slots.
static NEXT_HANDLE_ID: AtomicUsize = AtomicUsize::new(1);

/// Opens (or joins) the environment in `dir`, creating the folder if needed.
pub(crate) fn open(dir: &Path, options: &StoreOptions) -> Result<Arc<EnvHandle>, StoreError> {
    fs::create_dir_all(dir)?;
    let path = dir.canonicalize()?;
    let mut registry = lock(&REGISTRY);
    registry.retain(|(_, handle)| handle.strong_count() > 0);
    if let Some(handle) = registry
        .iter()
        .find(|(p, _)| *p == path)
        .and_then(|(_, h)| h.upgrade())
    {
        return Ok(handle);
    }
    // The last handle of this folder may have just been dropped on another
    // thread, with heed still closing the environment: wait for that, or
    // heed refuses to open it again. No handle exists any more (the registry
    // entry is dead), so nothing this thread holds keeps it open.
    if let Some(closing) = heed::env_closing_event(&path) {
        closing.wait();
    }
    crate::data_file::validate(&path)?;
    limit_malloc_arenas();
    let max_map_size = round_up(options.max_map_size);
    let initial = round_up(options.initial_map_size).min(max_map_size);
    let mut builder = EnvOpenOptions::new().read_txn_without_tls();
    builder.map_size(initial).max_dbs(MAX_DBS);
    // SAFETY: LMDB's own lock file coordinates every process that opens the
    // folder through LMDB, and the registry above guarantees this process
    // opens it once. The remaining hazard heed's docs list — the file being
    // modified by something other than LMDB — is outside our control, as for
    // any database file.
    let env = unsafe { builder.open(&path) }.lmdb()?;
    let handle = Arc::new(EnvHandle {
        env,
        gate: Gate::default(),
        id: NEXT_HANDLE_ID.fetch_add(1, Ordering::Relaxed),
        max_map_size,
        broken: AtomicBool::new(false),
    });
    registry.push((path, Arc::downgrade(&handle)));
    Ok(handle)
}

/// The process id of another process that has the store in `dir` open, if
/// any (`None` also when there is no store). Every process that opens an
/// LMDB environment holds a shared `fcntl` lock on the first byte of its
/// `lock.mdb` for as long as it keeps it open; asking for the conflicting
/// exclusive lock (`F_GETLK`, which takes nothing) names a holder. Locks of
/// this process are not reported.
pub fn opened_elsewhere(dir: &Path) -> Result<Option<u32>, StoreError> {
    let Ok(file) = fs::File::open(dir.join("lock.mdb")) else {
        return Ok(None);
    };
    held_by_other(&file)
}

#[cfg(unix)]
fn held_by_other(file: &fs::File) -> Result<Option<u32>, StoreError> {
    use std::os::fd::AsRawFd as _;
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are valid.
    let mut probe: libc::flock = unsafe { std::mem::zeroed() };
    probe.l_type = libc::F_WRLCK as _;
    probe.l_whence = libc::SEEK_SET as _;
    probe.l_start = 0;
    probe.l_len = 1;
    // SAFETY: the descriptor is open for the call's duration and `probe` is
    // a valid, exclusively borrowed `flock`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut probe) };
    if rc == -1 {
        return Err(StoreError::Io(std::io::Error::last_os_error()));
    }
    if probe.l_type == libc::F_UNLCK as libc::c_short {
        Ok(None)
    } else {
        Ok(Some(u32::try_from(probe.l_pid).unwrap_or(0)))
    }
}

#[cfg(not(unix))]
fn held_by_other(_file: &fs::File) -> Result<Option<u32>, StoreError> {
    Err(StoreError::Lmdb {
        detail: "whether another process has the store open cannot be told on this platform"
            .to_owned(),
    })
}

/// One open environment, shared by every `Store` of its folder in this
/// process.
pub(crate) struct EnvHandle {
    env: Env<WithoutTls>,
    gate: Gate,
    id: usize,
    max_map_size: usize,
    /// Set if a remap failed and could not be undone: the map is then gone
    /// and no transaction may touch it again.
    broken: AtomicBool,
}

impl std::fmt::Debug for EnvHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvHandle")
            .field("path", &self.env.path())
            .finish_non_exhaustive()
    }
}

/// A read transaction and the gate slot it holds. Fields drop in order: the
/// transaction ends before the slot is released.
pub(crate) struct Reading<'e> {
    pub(crate) txn: RoTxn<'e, WithoutTls>,
    _slot: Slot<'e>,
}

/// A write transaction and the gate slot it holds.
pub(crate) struct Writing<'e> {
    pub(crate) txn: RwTxn<'e>,
    slot: Slot<'e>,
}

impl<'e> Writing<'e> {
    pub(crate) fn commit(self) -> Result<(), StoreError> {
        let Writing { txn, slot } = self;
        let result = txn.commit().lmdb();
        drop(slot);
        result
    }

    pub(crate) fn abort(self) {
        let Writing { txn, slot } = self;
        txn.abort();
        drop(slot);
    }

    /// The transaction and its slot, for heed APIs that consume the
    /// transaction. Keep the slot alive until the transaction has ended.
    pub(crate) fn into_parts(self) -> (RwTxn<'e>, Slot<'e>) {
        (self.txn, self.slot)
    }
}

impl<'e> Reading<'e> {
    /// The transaction and its slot (see [`Writing::into_parts`]).
    pub(crate) fn into_parts(self) -> (RoTxn<'e, WithoutTls>, Slot<'e>) {
        (self.txn, self._slot)
    }
}

impl EnvHandle {
    pub(crate) fn env(&self) -> &Env<WithoutTls> {
        &self.env
    }

    /// Begins a read transaction.
    pub(crate) fn read(&self) -> Result<Reading<'_>, StoreError> {
        let (txn, slot) = self.begin(false, |env| env.read_txn())?;
        Ok(Reading { txn, _slot: slot })
    }

    /// Begins a write transaction (waiting for other writers, in this
    /// process or another).
    pub(crate) fn write(&self) -> Result<Writing<'_>, StoreError> {
        let (txn, slot) = self.begin(true, |env| env.write_txn())?;
        Ok(Writing { txn, slot })
    }

    fn begin<'e, T>(
        &'e self,
        write: bool,
        start: impl Fn(&'e Env<WithoutTls>) -> heed::Result<T>,
    ) -> Result<(T, Slot<'e>), StoreError> {
        for _ in 0..MAX_ADOPTIONS {
            let slot = self.gate.enter(self.id, write)?;
            if self.broken.load(Ordering::Acquire) {
                return Err(StoreError::Lmdb {
                    detail: "a failed remap left the environment unusable; drop every handle \
                             of this store in this process and open it again"
                        .to_owned(),
                });
            }
            match start(&self.env) {
                Ok(txn) => return Ok((txn, slot)),
                Err(heed::Error::Mdb(MdbError::MapResized)) => {
                    drop(slot);
                    self.adopt()?;
                }
                Err(e) => return Err(lmdb(e)),
            }
        }
        Err(StoreError::Lmdb {
            detail: format!(
                "other processes resized the map {MAX_ADOPTIONS} times in a row while this one tried to begin a transaction"
            ),
        })
    }

    /// The store's folder.
    pub(crate) fn dir(&self) -> &Path {
        self.env.path()
    }

    /// The current map size in bytes.
    pub(crate) fn map_size(&self) -> usize {
        self.env.info().map_size
    }

    /// Doubles the map, unless someone already grew it past `observed` (the
    /// size the failed write ran with).
    pub(crate) fn grow(&self, observed: usize) -> Result<(), StoreError> {
        self.gate.exclusive(self.id, "grow its map", || {
            let current = self.env.info().map_size;
            if current > observed {
                return Ok(());
            }
            if current >= self.max_map_size {
                return Err(StoreError::Full {
                    map_size: current as u64,
                });
            }
            let target = round_up(current.saturating_mul(2)).min(self.max_map_size);
            self.remap(target, current).map_err(|_| StoreError::Full {
                map_size: current as u64,
            })
        })?
    }

    /// Adopts the map size another process recorded in the file.
    fn adopt(&self) -> Result<(), StoreError> {
        self.gate.exclusive(
            self.id,
            "follow another process's growth of the map",
            || {
                let current = self.env.info().map_size;
                self.remap(0, current)
            },
        )?
    }

    /// Resizes the map to `size` (0: the size recorded in the file). Must be
    /// called inside [`Gate::exclusive`].
    fn remap(&self, size: usize, fallback: usize) -> Result<(), StoreError> {
        // SAFETY: called only from inside `Gate::exclusive`, which holds the
        // gate's lock and has seen no transaction of this process open, and
        // no transaction can begin until the lock is released (see `Gate`).
        let resized = unsafe { self.env.resize(size) };
        match resized {
            Ok(()) => Ok(()),
            Err(e) => {
                // LMDB unmaps before it maps again; if the new mapping failed
                // the old size usually still fits, so put it back.
                // SAFETY: as above, still inside the same exclusive section.
                if unsafe { self.env.resize(fallback) }.is_err() {
                    self.broken.store(true, Ordering::Release);
                }
                Err(lmdb(e))
            }
        }
    }

    /// Writes a compacted copy of the environment to `path` (a file).
    pub(crate) fn copy_compacted(&self, path: &Path) -> Result<(), StoreError> {
        // A copy reads the map like a transaction does, so it holds a slot.
        let _slot = self.gate.enter(self.id, false)?;
        self.env
            .copy_to_path(path, CompactionOption::Enabled)
            .lmdb()?;
        Ok(())
    }
}

thread_local! {
    /// The gate slots this thread holds: `(handle id, is a write)`.
    static HELD: RefCell<Vec<(usize, bool)>> = const { RefCell::new(Vec::new()) };
}

fn holds(id: usize, write_only: bool) -> bool {
    HELD.with(|held| {
        held.borrow()
            .iter()
            .any(|&(h, w)| h == id && (w || !write_only))
    })
}

/// Counts this process's open transactions of one environment, so that a
/// remap can wait until there are none.
#[derive(Debug, Default)]
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
    /// Writers in the order they asked (see [`crate::turns`]).
    turns: crate::turns::Turns,
}

#[derive(Debug, Default)]
struct GateState {
    /// Open transactions (slots held).
    active: usize,
    /// A remap is waiting or running.
    resizing: bool,
}

/// One held slot; releasing it wakes a waiting remap.
pub(crate) struct Slot<'g> {
    gate: &'g Gate,
    id: usize,
    write: bool,
    /// A writer's turn, ended with the slot (after the transaction).
    _turn: Option<crate::turns::Turn<'g>>,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if let Some(i) = held.iter().rposition(|&e| e == (self.id, self.write)) {
                held.swap_remove(i);
            }
        });
        let mut state = lock(&self.gate.state);
        state.active -= 1;
        drop(state);
        self.gate.changed.notify_all();
    }
}

impl Gate {
    fn enter(&self, id: usize, write: bool) -> Result<Slot<'_>, StoreError> {
        if write && holds(id, true) {
            // LMDB's writer lock is not reentrant: this would deadlock.
            return Err(StoreError::Busy {
                action: "begin a write inside another write",
            });
        }
        let turn = write.then(|| self.turns.wait());
        let nested = holds(id, false);
        let mut state = lock(&self.state);
        // A pending remap holds back new transactions, but not nested ones:
        // their thread already keeps `active` above zero, so the remap cannot
        // start before they end, and waiting here would deadlock.
        while state.resizing && !nested {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.active += 1;
        drop(state);
        HELD.with(|held| held.borrow_mut().push((id, write)));
        Ok(Slot {
            gate: self,
            id,
            write,
            _turn: turn,
        })
    }

    /// Runs `f` while no transaction of this process is open and none can
    /// begin (the gate's lock is held throughout `f`).
    fn exclusive<R>(
        &self,
        id: usize,
        action: &'static str,
        f: impl FnOnce() -> R,
    ) -> Result<R, StoreError> {
        if holds(id, false) {
            return Err(StoreError::Busy { action });
        }
        let mut state = lock(&self.state);
        while state.resizing {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        state.resizing = true;
        while state.active > 0 {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let result = f();
        state.resizing = false;
        drop(state);
        self.changed.notify_all();
        Ok(result)
    }
}

/// Puts `entries` (keys in ascending order, each with its value) into `db`
/// through one cursor, with `flags` (`NO_OVERWRITE` to insert only new
/// keys: the index of the first entry whose key is taken comes back, and
/// the entries before it are written). LMDB looks for a key first in the
/// leaf page the cursor stands on (where the previous key went), so keys
/// in order mostly skip the descent from the root that each
/// `Database::put` makes with its own fresh cursor: the batch writers' way
/// into indexes that hold keys on both sides of the new ones (where
/// `MDB_APPEND` cannot be used).
pub(crate) fn put_in_order<'a, KC, DC>(
    txn: &mut RwTxn<'_>,
    db: heed::Database<'_, KC, DC>,
    flags: heed::PutFlags,
    entries: impl IntoIterator<Item = (&'a KC::EItem, &'a DC::EItem)>,
) -> Result<Option<usize>, StoreError>
where
    KC: heed::BytesEncode<'a> + 'a,
    DC: heed::BytesEncode<'a> + 'a,
{
    let mut cursor = db.iter_mut(txn).lmdb()?;
    for (i, (key, value)) in entries.into_iter().enumerate() {
        // SAFETY: heed requires that no key or value borrowed from the
        // database is alive while the cursor writes; `key` and `value`
        // are the caller's own, and this loop reads nothing.
        match unsafe { cursor.put_current_with_options::<DC>(flags, key, value) } {
            Ok(()) => {}
            Err(heed::Error::Mdb(MdbError::KeyExist)) => return Ok(Some(i)),
            Err(e) => return Err(lmdb(e)),
        }
    }
    Ok(None)
}
