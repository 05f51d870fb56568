//! [`Store::sizes`]: where the store's bytes go, per database.
//!
//! For each database: its entries, the bytes of its keys and values as
//! stored (LMDB adds its own node header of 8 bytes per entry on a leaf
//! page), and its pages by kind from `mdb_stat`. The file's pages that no
//! database holds are free pages (LMDB's free list and its own catalog):
//! space a later write reuses, which a compacted backup leaves out. The
//! walk reads every key and value once, in one snapshot, and writes
//! nothing; it does not judge, that is [`Store::check`]'s job.

use heed::RoTxn;

use crate::Store;
use crate::error::{Lmdb as _, StoreError};

/// One database's share of the store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatabaseSize {
    /// Its name ([`db_name`]).
    pub name: &'static str,
    pub entries: u64,
    /// The bytes of every key, as stored.
    pub key_bytes: u64,
    /// The bytes of every value, as stored.
    pub value_bytes: u64,
    /// Height of its B-tree.
    pub depth: u32,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    /// Pages of values too large for a leaf page.
    pub overflow_pages: u64,
}

impl DatabaseSize {
    /// Every page it holds.
    pub fn pages(&self) -> u64 {
        self.branch_pages + self.leaf_pages + self.overflow_pages
    }
}

/// Where the store's bytes go ([`Store::sizes`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreSizes {
    /// LMDB's page size in bytes.
    pub page_size: u64,
    /// The pages the store's file holds up to its last used page (the
    /// map's unused tail is not counted; the file may be longer on
    /// systems that allocate the whole map).
    pub used_pages: u64,
    /// Every database, in [`crate::db_name::ALL`] order.
    pub databases: Vec<DatabaseSize>,
}

impl StoreSizes {
    /// Pages no database holds: LMDB's two meta pages, its catalog of
    /// databases, the free list and the free pages themselves.
    pub fn other_pages(&self) -> u64 {
        let held: u64 = self.databases.iter().map(DatabaseSize::pages).sum();
        self.used_pages.saturating_sub(held)
    }
}

impl Store {
    /// Measures every database in one snapshot (see the module docs).
    pub fn sizes(&self) -> Result<StoreSizes, StoreError> {
        self.read(|txn| self.sizes_in(txn))
    }

    fn sizes_in(&self, txn: &RoTxn<'_>) -> Result<StoreSizes, StoreError> {
        // Every database as bytes: only lengths are counted.
        let all = self.db.raw_all();
        let mut sizes = StoreSizes::default();
        for (name, db) in all {
            let stat = db.stat(txn).lmdb()?;
            sizes.page_size = u64::from(stat.page_size);
            let mut size = DatabaseSize {
                name,
                depth: stat.depth,
                branch_pages: stat.branch_pages as u64,
                leaf_pages: stat.leaf_pages as u64,
                overflow_pages: stat.overflow_pages as u64,
                ..DatabaseSize::default()
            };
            for entry in db.iter(txn).lmdb()? {
                let (key, value) = entry.lmdb()?;
                size.entries += 1;
                size.key_bytes += key.len() as u64;
                size.value_bytes += value.len() as u64;
            }
            sizes.databases.push(size);
        }
        let info = self.env_info();
        sizes.used_pages = info.last_page_number as u64 + 1;
        Ok(sizes)
    }
}
