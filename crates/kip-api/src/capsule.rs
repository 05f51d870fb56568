//! The capsule pipeline's two operations (`get_knowledge_schema`,
//! `import_knowledge_bundle`), adapted to the API's error type. The pipeline
//! itself (YAML bundles, JSON Schema, validation, the atomic import) lives
//! in `kip-capsule`.

use kip_nexus::{Nexus, Origin};
use serde_json::Value as Json;

use crate::error::{ApiError, ErrorCode};

pub(crate) fn knowledge_schema(_nexus: &Nexus) -> Result<Json, ApiError> {
    Err(unavailable())
}

pub(crate) fn import_text(
    _nexus: &Nexus,
    _file_name: &str,
    _text: &str,
    _origin: &Origin,
) -> Result<Json, ApiError> {
    Err(unavailable())
}

// TEMPORARY: replaced by the calls into `kip-capsule` once its public API lands.
fn unavailable() -> ApiError {
    ApiError::new(
        ErrorCode::InternalError,
        "the capsule pipeline is not built into this version",
        "Use execute_kip with UPSERT commands instead.",
    )
}
