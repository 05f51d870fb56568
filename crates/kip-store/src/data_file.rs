//! The check a `data.mdb` passes before LMDB maps it (see [`validate`]).

use std::fs;
use std::path::Path;

use crate::error::StoreError;

/// LMDB's magic number, the first word of both meta pages.
const LMDB_MAGIC: u32 = 0xBEEF_C0DE;

/// Where the fields of an LMDB meta page sit (64-bit layout): after the
/// 16-byte page header, `mm_magic` (u32), `mm_version` (u32),
/// `mm_address` (8), `mm_mapsize` (8), two `MDB_db` of 48 bytes (the first
/// one's `md_pad` is the page size), `mm_last_pg` (u64), `mm_txnid` (u64).
mod meta_page {
    pub const MAGIC: usize = 16;
    pub const PAGE_SIZE: usize = 16 + 24;
    pub const LAST_PAGE: usize = 16 + 120;
    pub const TXN_ID: usize = 16 + 128;
    pub const END: usize = TXN_ID + 8;
}

/// Refuses a `data.mdb` that LMDB would map blindly and then fault on: a
/// file that is not an LMDB environment, or one shorter than its last
/// commit (truncated by a copy, a full disk or a careless tool). Touching
/// a page past the end of a mapped file kills the process (SIGBUS), so this
/// is checked by reading the two meta pages before the file is mapped.
///
/// Other processes may commit while this reads: a commit writes its pages
/// (growing the file) before its meta page, so the length is taken after
/// the meta pages are read, and a file found short is read again before it
/// is called truncated (a meta page caught mid-write, a commit landing
/// between the reads): a truly truncated file stays short.
pub(crate) fn validate(dir: &Path) -> Result<(), StoreError> {
    const ATTEMPTS: u32 = 3;
    let mut attempt = 1;
    loop {
        match check_data_file(dir) {
            Err(StoreError::Corrupt { .. }) if attempt < ATTEMPTS => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// One reading of [`validate`]'s checks.
fn check_data_file(dir: &Path) -> Result<(), StoreError> {
    use std::io::Read as _;

    let file = dir.join("data.mdb");
    let Ok(mut f) = fs::File::open(&file) else {
        return Ok(()); // A new environment (or LMDB's own error on open).
    };
    if f.metadata()?.len() == 0 {
        return Ok(()); // LMDB initialises an empty file.
    }
    let corrupt = |what: String| StoreError::Corrupt {
        detail: format!("{}: {what}", file.display()),
    };
    let mut first = vec![0u8; meta_page::END];
    if f.read_exact(&mut first).is_err() {
        let len = f.metadata()?.len();
        return Err(corrupt(format!(
            "the file is {len} bytes, too short to be an LMDB environment (truncated?)"
        )));
    }
    let word = |page: &[u8], at: usize| {
        u32::from_ne_bytes(page[at..at + 4].try_into().unwrap_or_default())
    };
    let long = |page: &[u8], at: usize| {
        u64::from_ne_bytes(page[at..at + 8].try_into().unwrap_or_default())
    };
    if word(&first, meta_page::MAGIC) != LMDB_MAGIC {
        return Err(corrupt(
            "the file is not an LMDB environment (no LMDB magic number in its first page)"
                .to_owned(),
        ));
    }
    let page_size = u64::from(word(&first, meta_page::PAGE_SIZE));
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return Err(corrupt(format!(
            "its first meta page records a page size of {page_size}"
        )));
    }
    let mut second = vec![0u8; meta_page::END];
    let second_ok = {
        use std::io::Seek as _;
        f.seek(std::io::SeekFrom::Start(page_size)).is_ok() && f.read_exact(&mut second).is_ok()
    } && word(&second, meta_page::MAGIC) == LMDB_MAGIC;
    // After the meta pages: the pages of the commit they name are written.
    let len = f.metadata()?.len();
    // LMDB uses the meta page with the larger transaction id.
    let meta = if second_ok && long(&second, meta_page::TXN_ID) > long(&first, meta_page::TXN_ID) {
        &second
    } else {
        &first
    };
    let needed = long(meta, meta_page::LAST_PAGE)
        .saturating_add(1)
        .saturating_mul(page_size);
    if len < needed || !second_ok {
        return Err(corrupt(format!(
            "the file is truncated: it is {len} bytes, but its last commit uses {} bytes",
            needed.max(2 * page_size)
        )));
    }
    Ok(())
}
