//! The vectors of SEARCH by meaning: `vector-has-concept` (every vector
//! and backlog entry belongs to a concept that exists), `vector-decodes`
//! (every vector has the dimension of the others) and
//! `vector-sum-matches` (each group's count in `meta` is its number of
//! vectors).

use std::collections::BTreeMap;

use heed::RoTxn;

use super::Findings;
use super::records::Elements;
use crate::codec::vector;
use crate::error::{Lmdb as _, StoreError};
use crate::{ElementId, Store, db_name};

impl Store {
    pub(super) fn check_vectors(
        &self,
        txn: &RoTxn<'_>,
        f: &mut Findings,
        elements: &Elements,
    ) -> Result<(), StoreError> {
        let mut per_group: BTreeMap<u8, u64> = BTreeMap::new();
        let mut dimension = None;
        for entry in self.db.vectors.iter(txn).lmdb()? {
            let (id, raw) = entry.lmdb()?;
            if !elements.exists(ElementId::Concept(id)) {
                f.add(
                    "vector-has-concept",
                    db_name::VECTORS,
                    format!("a vector for {id}, which does not exist"),
                );
            }
            match vector::decode(raw) {
                Some((group, v)) if *dimension.get_or_insert(v.len()) == v.len() => {
                    *per_group.entry(group).or_default() += 1;
                }
                _ => f.add(
                    "vector-decodes",
                    db_name::VECTORS,
                    format!("the vector of {id} is malformed"),
                ),
            }
        }
        for entry in self.db.vector_backlog.iter(txn).lmdb()? {
            let (id, _) = entry.lmdb()?;
            if !elements.exists(ElementId::Concept(id)) {
                f.add(
                    "vector-has-concept",
                    db_name::VECTOR_BACKLOG,
                    format!("{id} waits for a vector but does not exist"),
                );
            }
        }
        let recorded: BTreeMap<u8, u64> = self
            .vector_centroids(txn)?
            .into_iter()
            .map(|(g, n, _)| (g, n))
            .collect();
        if recorded != per_group {
            f.add(
                "vector-sum-matches",
                db_name::META,
                format!("vectors per group {per_group:?}, but the sums count {recorded:?}"),
            );
        }
        Ok(())
    }
}
