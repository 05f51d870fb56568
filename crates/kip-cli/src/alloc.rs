//! The `kip` binary's allocator: mimalloc instead of glibc's malloc. An
//! import allocates and frees many small strings, vectors and JSON maps per
//! item; with glibc, a YAML bundle's import spent a third of its time in
//! `malloc`, `free` and `malloc_consolidate` (BENCHMARKS.md, "The
//! allocator"). Built without transparent huge pages (`no_thp`: with them
//! the kernel zeroed 2 MiB pages each time mimalloc touched fresh memory),
//! and, in the commands that keep running (`serve`, `mcp`, `watch`), freed
//! memory goes back to the system at once (`purge_delay` 0): with
//! mimalloc's default delay (1 s) `kip serve` grew to 141 MB over 18,900
//! requests (glibc with two arenas: 49 MB); with none it stays at 6–22 MB.
//! A command that ends (an import, the benchmark) waits 250 ms: giving
//! memory back at once made a bulk import fault the same pages in again and
//! again (a tenth of its writer's time); 100 ms saved half of that for 30
//! MB more at the peak; 250 ms, once the import's files each took less
//! (its syntax trees freed on the reader's thread, the checks' records
//! boxed), gave the 1M import ~5% for 25 MB more (peak 184–191 MB), where
//! 500 ms reached 193–201 MB and mimalloc's 1 s took the import's peak past
//! its 200 MB budget (BENCHMARKS.md "The allocator").
#![allow(unsafe_code)]

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` of mimalloc v3's `mi_option_e` (mimalloc.h):
/// the Rust bindings name only some options. The versions are pinned in
/// Cargo.toml, so an upgrade re-checks this number (and the test below).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Sets the allocator's options for a command that keeps running
/// (`long_running`) or one that ends; called first thing in `main`.
pub fn configure(long_running: bool) {
    let delay_ms = if long_running { 0 } else { 250 };
    // SAFETY: `mi_option_set` only stores an option's value (an atomic
    // write in mimalloc); any thread may call it at any time, and
    // `PURGE_DELAY` is a valid option of the pinned version.
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, delay_ms);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_purge_delay_option_is_the_one_before_numa_nodes_and_takes_each_value() {
        // `use_numa_nodes` directly follows `purge_delay` in the enum.
        assert_eq!(
            super::PURGE_DELAY + 1,
            libmimalloc_sys::mi_option_use_numa_nodes
        );
        // SAFETY: reads an option's value.
        let get = || unsafe { libmimalloc_sys::mi_option_get(super::PURGE_DELAY) };
        super::configure(false);
        assert_eq!(get(), 250);
        super::configure(true);
        assert_eq!(get(), 0);
    }
}
