//! `kip-logic`: the logic-property resolver (BRIEF §8, seed 004).
//!
//! A concept type may declare *logic properties* (`logic_properties` on its
//! `$ConceptType` definition; the model and its checks are `kip-nexus`'s):
//! metrics, computed over a time window by a KQL FIND in the nexus or by a
//! service, and operators, computed by a service. [`Resolver`] takes the
//! seed's request ([`ResolveRequest`]), reads the type fresh, fills each
//! requested property's `dynamic_params` (from the request, else from an
//! OpenAI-compatible LLM — one call per property, in parallel under a
//! semaphore, with the seed's prompts, retries and one repair round — else
//! it answers `MISSING_INPUT_PARAMS`), checks them, and computes every
//! property for every instance in one batch ([`ResolveResponse`], `datas`
//! aligned with `unique_identities`). Any failure fails the whole request.
//!
//! Async on tokio; [`Resolver::resolve_blocking`] serves synchronous callers
//! (kip-api, which knows no runtime) with a small runtime of its own, built
//! only when an LLM or a service is to be called.
//!
//! Modules: `types` (request/response), `error` (codes and the seed's wire
//! shape), `resolve` (the steps), `params` (checking parameters),
//! `generate` and `prompt` (the LLM's part), `llm` (the chat-completions
//! client and its retries), `operator` (`http` sources), `eval` (`kip`
//! metrics), `window` (time buckets).

mod error;
mod eval;
mod generate;
mod llm;
mod operator;
mod params;
mod prompt;
mod resolve;
mod types;
mod window;

pub use error::{Code, ResolveError};
pub use llm::{KEY_VAR, LlmConfig, MODEL_VAR, TIMEOUT_VAR, URL_VAR};
pub use resolve::{DEFAULT_MAX_CONCURRENCY, Prepared, Resolver};
pub use types::*;
pub use window::MAX_BUCKETS;
