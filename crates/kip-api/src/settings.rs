//! A client's settings kept with the nexus: styling rules, saved queries,
//! saved scenes — what belongs to this knowledge, not to one machine, so it
//! is the same in the desktop app and in a browser on `kip serve`.
//!
//! They live in the nexus's host-state table (the one the watcher keeps its
//! memory in), each key under the `settings/` namespace so no client can
//! read or overwrite another part of the table. Writing a setting is not a
//! change to the knowledge: it appends nothing to the change log.

use serde_json::Map;

use kip_nexus::Nexus;

use crate::error::{ApiError, ErrorCode};
use crate::types::{SettingsGetRequest, SettingsPutRequest, SettingsResponse};

/// The host-state namespace of settings.
const NAMESPACE: &str = "settings/";
/// The longest key, in bytes.
pub const MAX_KEY: usize = 200;
/// The largest value, in bytes of its JSON.
pub const MAX_VALUE: usize = 1 << 20;

pub(crate) fn get(
    nexus: &Nexus,
    request: &SettingsGetRequest,
) -> Result<SettingsResponse, ApiError> {
    let prefix = request.prefix.as_deref().unwrap_or("");
    let mut values = Map::new();
    for (key, value) in nexus.states_with_prefix(&format!("{NAMESPACE}{prefix}"))? {
        values.insert(key[NAMESPACE.len()..].to_owned(), value);
    }
    Ok(SettingsResponse { values })
}

pub(crate) fn put(
    nexus: &Nexus,
    request: &SettingsPutRequest,
) -> Result<SettingsResponse, ApiError> {
    check_key(&request.key)?;
    let key = format!("{NAMESPACE}{}", request.key);
    let mut values = Map::new();
    if request.value.is_null() {
        nexus.remove_state(&key)?;
    } else {
        let size = serde_json::to_vec(&request.value).map_or(0, |v| v.len());
        if size > MAX_VALUE {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("the value of setting `{}` is {size} bytes of JSON; at most {MAX_VALUE} are kept", request.key),
                "Keep large things (exports, scenes with many nodes) in files instead.",
            )
            .with_data("path", "value"));
        }
        nexus.set_state(&key, &request.value)?;
        values.insert(request.key.clone(), request.value.clone());
    }
    Ok(SettingsResponse { values })
}

fn check_key(key: &str) -> Result<(), ApiError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/');
    if key.is_empty() || key.len() > MAX_KEY || !key.chars().all(allowed) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("`{key}` is not a setting key"),
            format!("Use 1 to {MAX_KEY} letters, digits and `._-/`, e.g. `ui.styles`."),
        )
        .with_data("path", "key"));
    }
    Ok(())
}
