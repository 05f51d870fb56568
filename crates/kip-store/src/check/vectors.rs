//! The vectors of SEARCH by meaning: `vector-has-concept` (every vector
//! and backlog entry belongs to a concept that exists), `vector-decodes`
//! (every vector has the dimension of the others) and
//! `vector-sum-matches` (each group's count in `meta` is its number of
//! vectors) and `vector-code-matches` (every vector has its code, computed
//! again from the vector and its group's code centre, and every code a
//! vector).

use std::collections::BTreeMap;

use heed::RoTxn;

use super::Findings;
use super::records::Elements;
use crate::codec::vector;
use crate::codec::vector_code as vc;
use crate::error::{Lmdb as _, StoreError};
use crate::ids::ConceptId;
use crate::vector_codes::code_of;
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
        self.check_codes(txn, f)?;
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

impl Store {
    /// `vector-code-matches`: each code slot belongs to a vector and equals
    /// its code; as many codes as vectors.
    fn check_codes(&self, txn: &RoTxn<'_>, f: &mut Findings) -> Result<(), StoreError> {
        let centres = self.code_centres(txn)?;
        let mut codes = 0u64;
        let bad = |f: &mut Findings, detail: String| {
            f.add("vector-code-matches", db_name::VECTOR_CODES, detail);
        };
        for entry in self.db.vector_codes.iter(txn).lmdb()? {
            let (key, block) = entry.lmdb()?;
            let Some(words) = vc::block_words(block) else {
                bad(f, format!("the code block {key} is malformed"));
                continue;
            };
            let mut m = vc::mask(block);
            while m != 0 {
                let slot = m.trailing_zeros() as usize;
                m &= m - 1;
                codes += 1;
                let id = ConceptId(key * vc::PER_BLOCK + slot as u64);
                let stored = self.db.vectors.get(txn, &id).lmdb()?;
                match stored.and_then(|s| code_of(s, &centres)) {
                    None => bad(f, format!("a code for {id}, which has no vector")),
                    Some(code) if !vc::equals(vc::slot(block, words, slot), &code) => {
                        bad(f, format!("the code of {id} is not its vector's"));
                    }
                    Some(_) => {}
                }
            }
        }
        let vectors = self.vector_count(txn)?;
        if codes != vectors {
            bad(f, format!("{vectors} vectors but {codes} codes"));
        }
        Ok(())
    }
}
