//! A host's preferences: what belongs to one machine, not to the knowledge
//! (the theme, which panels are open, the watched folder, the last nexus,
//! the window's size), kept in a small JSON object in the platform's config
//! directory ([`crate::paths::prefs_file`]). Styling rules and saved
//! queries belong to the nexus instead (`settings.rs`).
//!
//! The file is read whole and written whole (through a temporary file and a
//! rename, so a crash leaves the old file or the new one). A missing file is
//! no preferences; an unreadable or corrupt one is no preferences with a
//! warning the host shows: a broken file never stops the app.

use std::path::Path;

use serde_json::{Map, Value as Json};

use crate::error::{ApiError, ErrorCode};
use crate::settings::MAX_KEY;
use crate::types::{SettingsGetRequest, SettingsPutRequest, SettingsResponse};

/// The largest preferences file kept, in bytes of JSON.
pub const MAX_FILE: usize = 1 << 20;

/// The preferences in `file`, and a warning when the file exists but cannot
/// be used (unreadable, not JSON, not an object): then no preferences.
pub fn load(file: &Path) -> (Map<String, Json>, Option<String>) {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Map::new(), None),
        Err(e) => {
            return (
                Map::new(),
                Some(format!(
                    "cannot read the preferences in {}: {e}; using the defaults",
                    file.display()
                )),
            );
        }
    };
    match serde_json::from_str::<Json>(&text) {
        Ok(Json::Object(map)) => (map, None),
        Ok(_) => (
            Map::new(),
            Some(format!(
                "the preferences in {} are not a JSON object; using the defaults",
                file.display()
            )),
        ),
        Err(e) => (
            Map::new(),
            Some(format!(
                "the preferences in {} are not valid JSON ({e}); using the defaults",
                file.display()
            )),
        ),
    }
}

/// Writes `prefs` to `file` (its folder created when missing), atomically.
pub fn save(file: &Path, prefs: &Map<String, Json>) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(prefs).map_err(std::io::Error::other)?;
    let tmp = file.with_extension("json.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, file)
}

/// Sets `key` to `value` in the file (`null` forgets it), keeping the rest.
/// A corrupt file is replaced by one holding this key alone.
pub fn set(file: &Path, key: &str, value: Json) -> std::io::Result<()> {
    let (mut prefs, _) = load(file);
    if value.is_null() {
        prefs.remove(key);
    } else {
        prefs.insert(key.to_owned(), value);
    }
    save(file, &prefs)
}

fn io_error(file: &Path, e: std::io::Error) -> ApiError {
    ApiError::new(
        ErrorCode::Io,
        format!("cannot write the preferences to {}: {e}", file.display()),
        "Check that the config folder is writable.",
    )
}

pub(crate) fn get(file: &Path, request: &SettingsGetRequest) -> SettingsResponse {
    let prefix = request.prefix.as_deref().unwrap_or("");
    let (prefs, _) = load(file);
    SettingsResponse {
        values: prefs
            .into_iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .collect(),
    }
}

pub(crate) fn put(file: &Path, request: &SettingsPutRequest) -> Result<SettingsResponse, ApiError> {
    if request.key.is_empty() || request.key.len() > MAX_KEY {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("a preference's key is 1 to {MAX_KEY} bytes"),
            "Use a short key such as `theme`.",
        )
        .with_data("path", "key"));
    }
    let (mut prefs, _) = load(file);
    if request.value.is_null() {
        prefs.remove(&request.key);
    } else {
        prefs.insert(request.key.clone(), request.value.clone());
    }
    let size = serde_json::to_vec(&prefs).map_or(0, |v| v.len());
    if size > MAX_FILE {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("the preferences would be {size} bytes of JSON; at most {MAX_FILE} are kept"),
            "Keep large things with the nexus (settings_put) or in files.",
        )
        .with_data("path", "value"));
    }
    save(file, &prefs).map_err(|e| io_error(file, e))?;
    let mut values = Map::new();
    if !request.value.is_null() {
        values.insert(request.key.clone(), request.value.clone());
    }
    Ok(SettingsResponse { values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_is_written_is_read_back() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let file = dir.path().join("deep/kip-explorer/prefs.json");
        assert_eq!(
            load(&file),
            (Map::new(), None),
            "no file: no preferences, no warning"
        );
        set(&file, "theme", json!("dark")).expect("saved");
        set(&file, "window", json!({"width": 1200, "height": 800})).expect("saved");
        let (prefs, warning) = load(&file);
        assert_eq!(warning, None);
        assert_eq!(prefs["theme"], json!("dark"));
        assert_eq!(prefs["window"]["width"], json!(1200));
        set(&file, "theme", Json::Null).expect("saved");
        assert!(!load(&file).0.contains_key("theme"));
        assert!(!file.with_extension("json.tmp").exists());
    }

    #[test]
    fn a_corrupt_file_gives_the_defaults_and_a_warning() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let file = dir.path().join("prefs.json");
        for bad in ["{\"theme\": \"da", "[1, 2]", "\u{0}\u{1}garbage"] {
            std::fs::write(&file, bad).expect("written");
            let (prefs, warning) = load(&file);
            assert!(prefs.is_empty());
            assert!(warning.expect("a warning").contains("using the defaults"));
        }
        // Writing over a corrupt file keeps only what was written.
        set(&file, "theme", json!("light")).expect("saved");
        assert_eq!(
            load(&file),
            (Map::from_iter([("theme".to_owned(), json!("light"))]), None)
        );
    }

    #[test]
    fn the_operations_filter_by_prefix_and_check_keys() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let file = dir.path().join("prefs.json");
        let put_one = |key: &str, value: Json| {
            put(
                &file,
                &SettingsPutRequest {
                    key: key.into(),
                    value,
                },
            )
        };
        put_one("panels.inspector", json!(true)).expect("saved");
        put_one("theme", json!("dark")).expect("saved");
        let got = get(
            &file,
            &SettingsGetRequest {
                prefix: Some("panels.".into()),
            },
        );
        assert_eq!(got.values.len(), 1);
        assert_eq!(got.values["panels.inspector"], json!(true));
        assert!(put_one("", json!(1)).is_err());
        assert!(put_one(&"k".repeat(MAX_KEY + 1), json!(1)).is_err());
        assert!(put_one("big", json!("x".repeat(MAX_FILE))).is_err());
        assert_eq!(get(&file, &SettingsGetRequest::default()).values.len(), 2);
    }
}
