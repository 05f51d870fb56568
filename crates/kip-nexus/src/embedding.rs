//! The process's embedding model and what a nexus keeps of it: a leaf
//! module (`nexus.rs` holds a [`Semantic`]; `semantic.rs` does the work).
//!
//! The model is found at open (is its file installed?) but loaded on first
//! use (a search by meaning, the vector chore, PRIMER), once per process: a
//! `kip exec` that only reads or writes never pays for loading ~150 MB of
//! weights.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use kip_embed::{Embedder, TextKind};

/// Reference sentences per language group (0: English and other non-CJK,
/// 1: CJK), unrelated to any test data: their mean vector is each group's
/// prior centre (see `semantic.rs`), so a nexus holding only a few texts of
/// a language is still centred sensibly.
const REFERENCE: [(u8, &str); 2] = [
    (0, include_str!("../data/centre-en.txt")),
    (1, include_str!("../data/centre-zh.txt")),
];

/// An installed model, loaded on first [`Model::get`].
#[derive(Debug)]
pub struct Model {
    dir: PathBuf,
    loaded: OnceLock<Result<Arc<Embedder>, String>>,
    priors: OnceLock<Vec<(u8, Vec<f32>)>>,
}

impl Model {
    /// The loaded model, or why it does not load.
    pub fn get(&self) -> Result<Arc<Embedder>, String> {
        self.loaded
            .get_or_init(|| {
                Embedder::load(&self.dir)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// Each language group's prior centre: the mean vector of its
    /// reference sentences (embedded once per process, on first use).
    pub fn priors(&self) -> Result<&[(u8, Vec<f32>)], String> {
        if let Some(p) = self.priors.get() {
            return Ok(p);
        }
        let embedder = self.get()?;
        let priors = REFERENCE
            .iter()
            .map(|(group, text)| {
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                let vectors = embedder.embed(&lines, TextKind::Passage);
                let mut mean = vec![0.0f32; embedder.info().dimension];
                for v in &vectors {
                    mean.iter_mut()
                        .zip(v)
                        .for_each(|(m, x)| *m += x / vectors.len() as f32);
                }
                (*group, mean)
            })
            .collect();
        Ok(self.priors.get_or_init(|| priors))
    }

    /// What the store records beside the vectors: another value re-embeds.
    pub fn key(&self) -> String {
        format!("{} | {}", kip_embed::MODEL_NAME, kip_embed::MODEL_VERSION)
    }
}

/// The process's model: `Some` when one is installed in
/// `$KIP_EMBED_MODEL_DIR` or the default model directory.
pub fn shared_model() -> Option<Arc<Model>> {
    static MODEL: OnceLock<Option<Arc<Model>>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = kip_embed::model_dir()?;
            dir.join(kip_embed::MODEL_FILE).is_file().then(|| {
                Arc::new(Model {
                    dir,
                    loaded: OnceLock::new(),
                    priors: OnceLock::new(),
                })
            })
        })
        .clone()
}

/// The state a nexus keeps for semantic search.
#[derive(Debug, Default)]
pub(crate) struct Semantic {
    pub model: Option<Arc<Model>>,
    /// One catch-up at a time: two would embed the same concepts twice.
    pub catching_up: Mutex<()>,
}
