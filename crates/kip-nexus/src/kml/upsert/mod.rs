//! UPSERT: blocks in order, handles, `{type, name}` match-or-create and
//! `{id}` match-only, shallow merges of attributes and metadata, additive
//! links checked against predicate signatures, and strict idempotency
//! (`_updated_at` moves only when something changed). The links of
//! `SET PROPOSITIONS` are written together at the end of the command or
//! before anything reads links back.
//!
//! Split by job: `blocks` walks the UPSERT and resolves what its blocks
//! name, `concepts` writes a concept, `links` checks and defers a link,
//! `flush` writes what was deferred.

mod blocks;
mod concepts;
mod flush;
mod links;
