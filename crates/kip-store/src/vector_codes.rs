//! The binary codes beside the vectors ([`codec::vector_code`]) and the
//! search by meaning that uses them: a Hamming scan of every code picks the
//! candidates, and only those are scored exactly, as
//! [`Store::scan_vectors_centred`] scores every vector.
//!
//! A code is the sign of the stored vector minus its group's *code centre*
//! (`meta` `vector_code_centre_<group>`: one `f32` LE per dimension; none:
//! zero). The engine records its groups' centres ([`Store::set_code_centres`],
//! which recomputes every code when they change); they stay fixed while
//! vectors come and go, so a code never goes stale. Every write that stores
//! or drops a vector stores or drops its code in the same transaction
//! (`vectors.rs`), and [`Store::check`] verifies each code against its
//! vector (`vector-code-matches`).

use heed::{RoTxn, RwTxn};

use crate::Store;
use crate::codec::vector;
use crate::codec::vector_code as vc;
use crate::error::{Lmdb as _, StoreError};
use crate::ids::ConceptId;

const CENTRE_PREFIX: &str = "vector_code_centre_";

/// Recorded code centres closer than this (in every component) to new
/// ones are kept: the same model's centres, embedded again by another
/// build, differ in the last digits, and recomputing every code for that
/// would gain nothing.
const CENTRE_TOLERANCE: f32 = 1e-3;

/// A query ready for the exact centred score of a stored vector: quantised,
/// with each group's quantised centre, the query's dot product with it and
/// its squared length.
pub(crate) struct CentredQuery {
    scale: f32,
    q: Vec<i8>,
    by_group: Vec<Option<Centre>>,
}

#[derive(Clone)]
struct Centre {
    scale: f32,
    q: Vec<i8>,
    q_mu: f32,
    mu2: f32,
}

impl CentredQuery {
    pub(crate) fn new(query: &[f32], centres: &[(u8, Vec<f32>)]) -> CentredQuery {
        let (scale, q) = vector::quantize(query);
        let mut by_group: Vec<Option<Centre>> = vec![None; 256];
        for (g, mu) in centres {
            let (scale, q) = vector::quantize(mu);
            let q_mu: f32 = query.iter().zip(mu).map(|(a, b)| a * b).sum();
            let mu2: f32 = mu.iter().map(|x| x * x).sum();
            by_group[usize::from(*g)] = Some(Centre {
                scale,
                q,
                q_mu,
                mu2,
            });
        }
        CentredQuery { scale, q, by_group }
    }

    /// The cosine of the query with `stored − centre of its group` (no
    /// centre: `stored`); `None` if `stored` is malformed. Two integer dot
    /// products.
    pub(crate) fn score(&self, stored: &[u8]) -> Option<f32> {
        let q_d = vector::dot(self.scale, &self.q, stored)?;
        let centre = vector::group(stored).and_then(|g| self.by_group[usize::from(g)].as_ref());
        Some(match centre {
            None => q_d,
            Some(c) => {
                let d_mu = vector::dot(c.scale, &c.q, stored).unwrap_or(0.0);
                // |d − μ|² for a unit d.
                let norm2 = (1.0 - 2.0 * d_mu + c.mu2).max(1e-6);
                (q_d - c.q_mu) / norm2.sqrt()
            }
        })
    }
}

/// What [`Store::nearest_vectors_centred`] found: the candidates with their
/// exact centred cosines, in no order, and whether the prefilter left any
/// vector out (when not, the answer is the exact scan's).
#[derive(Debug, Default)]
pub struct Nearest {
    pub hits: Vec<(ConceptId, f32)>,
    pub cut: bool,
}

fn decode_centre(raw: &[u8]) -> Vec<f32> {
    raw.chunks_exact(4)
        .map(|c| f32::from_le_bytes(<[u8; 4]>::try_from(c).unwrap_or_default()))
        .collect()
}

impl Store {
    /// The code centre of every group that has one.
    pub fn code_centres(&self, txn: &RoTxn<'_>) -> Result<Vec<(u8, Vec<f32>)>, StoreError> {
        let mut out = Vec::new();
        for entry in self.db.meta.prefix_iter(txn, CENTRE_PREFIX).lmdb()? {
            let (key, raw) = entry.lmdb()?;
            let Ok(group) = key[CENTRE_PREFIX.len()..].parse::<u8>() else {
                return Err(StoreError::corrupt(format!("meta `{key}`")));
            };
            out.push((group, decode_centre(raw)));
        }
        Ok(out)
    }

    /// Whether the recorded code centres are `centres` (within
    /// [`CENTRE_TOLERANCE`]), group for group.
    pub fn code_centres_are(
        &self,
        txn: &RoTxn<'_>,
        centres: &[(u8, Vec<f32>)],
    ) -> Result<bool, StoreError> {
        let recorded = self.code_centres(txn)?;
        let mut wanted: Vec<&(u8, Vec<f32>)> = centres.iter().collect();
        wanted.sort_by_key(|c| c.0);
        Ok(recorded.len() == wanted.len()
            && recorded.iter().zip(wanted).all(|(r, w)| {
                r.0 == w.0
                    && r.1.len() == w.1.len()
                    && r.1
                        .iter()
                        .zip(&w.1)
                        .all(|(a, b)| (a - b).abs() <= CENTRE_TOLERANCE)
            }))
    }

    /// Records `centres` as the groups' code centres (replacing all others)
    /// and recomputes every code, unless they are already recorded; returns
    /// how many codes it recomputed.
    pub fn set_code_centres(
        &self,
        txn: &mut RwTxn<'_>,
        centres: &[(u8, Vec<f32>)],
    ) -> Result<u64, StoreError> {
        if self.code_centres_are(txn, centres)? {
            return Ok(0);
        }
        self.clear_code_centres(txn)?;
        for (group, centre) in centres {
            let raw: Vec<u8> = centre.iter().flat_map(|x| x.to_le_bytes()).collect();
            let key = format!("{CENTRE_PREFIX}{group}");
            self.db.meta.put(txn, &key, &raw).lmdb()?;
        }
        self.rebuild_codes(txn)
    }

    /// Forgets every code centre (the codes stay until rebuilt).
    pub(crate) fn clear_code_centres(&self, txn: &mut RwTxn<'_>) -> Result<(), StoreError> {
        for (group, _) in self.code_centres(txn)? {
            let key = format!("{CENTRE_PREFIX}{group}");
            self.db.meta.delete(txn, &key).lmdb()?;
        }
        Ok(())
    }

    /// Recomputes the code of every vector; returns how many.
    pub(crate) fn rebuild_codes(&self, txn: &mut RwTxn<'_>) -> Result<u64, StoreError> {
        self.db.vector_codes.clear(txn).lmdb()?;
        let centres = self.code_centres(txn)?;
        let mut block: Option<(u64, Vec<u8>)> = None;
        let mut n = 0;
        let mut pending = Vec::new();
        for entry in self.db.vectors.iter(txn).lmdb()? {
            let (id, stored) = entry.lmdb()?;
            let Some(code) = code_of(stored, &centres) else {
                continue;
            };
            let (key, slot) = vc::place(id.0);
            match &mut block {
                Some((k, b)) if *k == key => *b = vc::with_code(Some(b), slot, &code),
                _ => {
                    pending.extend(block.take());
                    block = Some((key, vc::with_code(None, slot, &code)));
                }
            }
            n += 1;
        }
        pending.extend(block);
        for (key, value) in pending {
            self.db.vector_codes.put(txn, &key, &value).lmdb()?;
        }
        Ok(n)
    }

    /// The stored code of `id`'s vector, if it has one.
    pub fn vector_code(
        &self,
        txn: &RoTxn<'_>,
        id: ConceptId,
    ) -> Result<Option<Vec<u64>>, StoreError> {
        let (key, slot) = vc::place(id.0);
        let Some(block) = self.db.vector_codes.get(txn, &key).lmdb()? else {
            return Ok(None);
        };
        let (Some(words), true) = (vc::block_words(block), vc::mask(block) & (1 << slot) != 0)
        else {
            return Ok(None);
        };
        let code = vc::slot(block, words, slot)
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(<[u8; 8]>::try_from(c).unwrap_or_default()))
            .collect();
        Ok(Some(code))
    }

    /// Stores the code of `id`'s stored vector `stored`.
    pub(crate) fn put_code(
        &self,
        txn: &mut RwTxn<'_>,
        id: ConceptId,
        stored: &[u8],
    ) -> Result<(), StoreError> {
        let centres = self.code_centres(txn)?;
        let Some(code) = code_of(stored, &centres) else {
            return Ok(());
        };
        let (key, slot) = vc::place(id.0);
        let old = self.db.vector_codes.get(txn, &key).lmdb()?;
        let value = vc::with_code(old, slot, &code);
        self.db.vector_codes.put(txn, &key, &value).lmdb()
    }

    /// Drops the code of `id`, if it has one.
    pub(crate) fn drop_code(&self, txn: &mut RwTxn<'_>, id: ConceptId) -> Result<(), StoreError> {
        let (key, slot) = vc::place(id.0);
        let Some(old) = self.db.vector_codes.get(txn, &key).lmdb()? else {
            return Ok(());
        };
        match vc::without_code(old, slot) {
            Some(value) => self.db.vector_codes.put(txn, &key, &value).lmdb(),
            None => self.db.vector_codes.delete(txn, &key).lmdb().map(drop),
        }
    }

    /// The vectors nearest `query` after centring (as
    /// [`Store::scan_vectors_centred`] scores them): the `candidates`
    /// nearest by their codes' Hamming distance to the query's sign bits,
    /// each scored exactly. With no more vectors than `candidates`, every
    /// vector is scored (the exact scan).
    pub fn nearest_vectors_centred(
        &self,
        txn: &RoTxn<'_>,
        query: &[f32],
        centres: &[(u8, Vec<f32>)],
        candidates: usize,
    ) -> Result<Nearest, StoreError> {
        let mut out = Nearest::default();
        if self.vector_count(txn)? as usize <= candidates {
            self.scan_vectors_centred(txn, query, centres, |id, s| out.hits.push((id, s)))?;
            return Ok(out);
        }
        let picked = self.hamming_nearest(txn, &vc::code(query, None), candidates)?;
        out.cut = true;
        let scorer = CentredQuery::new(query, centres);
        for id in picked {
            let Some(stored) = self.db.vectors.get(txn, &id).lmdb()? else {
                continue;
            };
            if let Some(score) = scorer.score(stored) {
                out.hits.push((id, score));
            }
        }
        Ok(out)
    }

    /// The `n` concepts whose codes are nearest `query` in Hamming distance
    /// (ties at the cut broken by id), in id order.
    pub fn hamming_nearest(
        &self,
        txn: &RoTxn<'_>,
        query: &[u64],
        n: usize,
    ) -> Result<Vec<ConceptId>, StoreError> {
        let bits = query.len() * 64;
        let count = usize::try_from(self.vector_count(txn)?).unwrap_or(0);
        let mut dist: Vec<(u16, u64)> = Vec::with_capacity(count);
        let mut histogram = vec![0usize; bits + 1];
        for entry in self.db.vector_codes.iter(txn).lmdb()? {
            let (key, block) = entry.lmdb()?;
            vc::for_each_distance(query, block, |slot, d| {
                histogram[d as usize] += 1;
                dist.push((d as u16, key * vc::PER_BLOCK + slot as u64));
            });
        }
        // The distance at which the `n`th nearest lies: all nearer ones are
        // taken, and as many at that distance as fit.
        let mut cut = bits;
        let mut below = 0;
        for (d, count) in histogram.iter().enumerate() {
            if below + count >= n {
                cut = d;
                break;
            }
            below += count;
        }
        let mut room_at_cut = n.saturating_sub(below);
        let mut out = Vec::with_capacity(n);
        for (d, id) in dist {
            let d = usize::from(d);
            if d < cut {
                out.push(ConceptId(id));
            } else if d == cut && room_at_cut > 0 {
                room_at_cut -= 1;
                out.push(ConceptId(id));
            }
        }
        Ok(out)
    }
}

/// The code of a stored vector against its group's code centre.
pub(crate) fn code_of(stored: &[u8], centres: &[(u8, Vec<f32>)]) -> Option<Vec<u64>> {
    let (group, v) = vector::decode(stored)?;
    let centre = centres
        .iter()
        .find(|c| c.0 == group)
        .map(|c| c.1.as_slice());
    Some(vc::code(&v, centre))
}

#[cfg(test)]
mod tests {
    use crate::codec::vector_code as vc;
    use crate::error::Lmdb as _;
    use crate::{ConceptRecord, Namespace, Store, StoreError};

    fn v(seed: usize) -> Vec<f32> {
        (0..8)
            .map(|j| ((j * 5 + seed * 3) % 7) as f32 - 3.0)
            .collect()
    }

    /// Codes follow every write of a vector — settled, settled again,
    /// dropped with its concept, reset for another model — and the check
    /// finds a code that does not match its vector.
    #[test]
    fn codes_follow_their_vectors_and_the_check_verifies_them() -> Result<(), StoreError> {
        let dir = tempfile::tempdir().map_err(|e| StoreError::invalid(e.to_string()))?;
        let store = Store::open(dir.path())?;
        let settle = |id, group: u8, seed| {
            store.write(|txn| {
                store.mark_vectors_stale(txn, [crate::ElementId::Concept(id)])?;
                let (_, seq) = store
                    .vector_backlog(txn, 100)?
                    .into_iter()
                    .find(|w| w.0 == id)
                    .map_or((id, 0), |w| w);
                store.settle_vector(txn, id, seq, group, &v(seed))
            })
        };
        let ids = store.write(|txn| {
            let ty = store.intern(txn, Namespace::ConceptType, "Memory")?;
            (0..70)
                .map(|i| {
                    let rec = ConceptRecord {
                        type_id: ty,
                        name: format!("m{i}"),
                        ..Default::default()
                    };
                    store.create_concept(txn, &rec)
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        for (i, id) in ids.iter().enumerate() {
            assert!(settle(*id, (i % 2) as u8, i)?);
        }
        let code_of = |id| store.read(|txn| store.vector_code(txn, id));
        assert_eq!(code_of(ids[3])?, Some(vc::code(&v(3), None)));
        assert!(settle(ids[3], 1, 4)?);
        assert_eq!(code_of(ids[3])?, Some(vc::code(&v(4), None)));
        assert!(store.check()?.ok);
        store.write(|txn| store.delete_concept(txn, ids[3]).map(drop))?;
        assert_eq!(code_of(ids[3])?, None);
        // Half-way between the integers the test vectors hold: int8 rounding
        // cannot move a component across its centre.
        let centres = vec![(0u8, vec![0.5f32; 8]), (1, vec![-0.5; 8])];
        assert_eq!(
            store.write(|txn| store.set_code_centres(txn, &centres))?,
            69
        );
        assert_eq!(code_of(ids[4])?, Some(vc::code(&v(4), Some(&[0.5; 8]))));
        assert!(settle(ids[5], 1, 9)?);
        assert_eq!(code_of(ids[5])?, Some(vc::code(&v(9), Some(&[-0.5; 8]))));
        let report = store.check()?;
        assert!(report.ok, "{report:#?}");
        // A code changed behind the store's back is found.
        store.write(|txn| {
            let (key, slot) = vc::place(ids[6].0);
            let block = store
                .db
                .vector_codes
                .get(txn, &key)
                .lmdb()?
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            let wrong = vc::with_code(Some(&block), slot, &[0xff]);
            store.db.vector_codes.put(txn, &key, &wrong).lmdb()
        })?;
        let report = store.check()?;
        assert!(!report.ok);
        assert!(
            report
                .violations
                .iter()
                .any(|v| v.invariant == "vector-code-matches"),
            "{report:#?}"
        );
        // Another model: no vectors, no codes, no centres.
        store.write(|txn| store.reset_vectors(txn, "other").map(drop))?;
        assert_eq!(code_of(ids[4])?, None);
        assert!(store.read(|txn| store.code_centres(txn))?.is_empty());
        assert!(store.check()?.ok);
        Ok(())
    }
}
