//! The `kip` binary's allocator: mimalloc instead of glibc's malloc. An
//! import allocates and frees many small strings, vectors and JSON maps per
//! item; with glibc, a YAML bundle's import spent a third of its time in
//! `malloc`, `free` and `malloc_consolidate` (BENCHMARKS.md, "The
//! allocator"). Built without transparent huge pages (`no_thp`): with them
//! the kernel zeroed 2 MiB pages each time mimalloc touched fresh memory
//! (14% of a YAML import).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
