//! The JSON objects KML writes as attributes and metadata, and the
//! engine's own metadata keys (`_version`, `_created_at`, `_updated_at`),
//! which a command may neither write nor delete.

use kip_lang::ast::Span;
use kip_lang::{ErrorCode, KipError};
use serde_json::{Map, Value as Json};

pub(in crate::kml) type Object = Map<String, Json>;

/// [`Writer::stamp_new`](super::writer::Writer::stamp_new) at time `now`.
pub(in crate::kml) fn stamp_new_at(meta: &mut Object, now: &str) {
    meta.insert("_version".into(), Json::from(1));
    meta.insert("_created_at".into(), Json::from(now));
    meta.insert("_updated_at".into(), Json::from(now));
}

pub(in crate::kml) fn reserved_key_error(key: &str, source: &str, span: Span) -> KipError {
    KipError::new(
        ErrorCode::ConstraintViolation,
        format!("'{key}' is reserved for the engine: metadata keys starting with '_' cannot be written or deleted"),
    )
    .with_hint("The engine maintains _version, _created_at, _updated_at, _merged_from and _score itself; rename the key without the leading underscore.")
    .at(source, span)
}

/// An element's `_version` (RC9 §2.11.1): its mutation counter, 1 when it
/// was created. A record written before versions existed counts as 1.
pub fn version_of(meta: &Object) -> u64 {
    meta.get("_version").and_then(Json::as_u64).unwrap_or(1)
}

pub(in crate::kml) fn json_object(obj: Option<&kip_lang::ast::Object>) -> Object {
    obj.and_then(kip_lang::ast::Object::to_json)
        .unwrap_or_default()
}

/// `base` with `over`'s keys laid over it (a shallow merge).
pub(in crate::kml) fn merged(base: &Object, over: &Object) -> Object {
    let mut out = base.clone();
    for (k, v) in over {
        out.insert(k.clone(), v.clone());
    }
    out
}
