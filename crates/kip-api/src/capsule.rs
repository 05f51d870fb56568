//! The capsule pipeline's two operations (`get_knowledge_schema`,
//! `import_knowledge_bundle`), adapted to the API's types. The pipeline
//! itself (YAML bundles, JSON Schema, validation with paths and positions,
//! the atomic import) lives in `kip-capsule`.

use kip_capsule::{ImportReport, KnowledgeSchema};
use kip_nexus::{Nexus, Origin};

use crate::error::ApiError;
use crate::types::ImportRequest;

pub(crate) fn knowledge_schema(nexus: &Nexus) -> Result<KnowledgeSchema, ApiError> {
    kip_capsule::knowledge_schema(nexus).map_err(ApiError::from)
}

/// The import report: a failed import is a report whose `status` is
/// `"failed"` with every error, not an `Err`.
pub(crate) fn import_text(
    nexus: &Nexus,
    request: &ImportRequest,
    dry_run: bool,
    origin: &Origin,
    originator: &str,
) -> ImportReport {
    let options = kip_capsule::ImportOptions {
        dry_run,
        originator: Some(originator),
        ..kip_capsule::ImportOptions::default()
    };
    kip_capsule::import_text_with(nexus, &request.file_name, &request.text, origin, &options)
}
