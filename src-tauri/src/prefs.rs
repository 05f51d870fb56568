//! What the desktop app remembers between runs, in the preferences file of
//! `kip_api::prefs` (`<config dir>/kip-explorer/prefs.json`, shared with
//! the UI's `prefs_get` / `prefs_put`): the last nexus, the watched folder
//! and the window's size. The UI keeps its theme and panels there too.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json, json};

/// The last nexus opened.
pub const LAST_NEXUS: &str = "last_nexus";
/// The watched capsule folder.
pub const CAPSULES: &str = "capsules";
/// The window's inner size in logical pixels: `{width, height}`.
pub const WINDOW: &str = "window";

/// The window's size when none is remembered, and the smallest it may be.
pub const DEFAULT_SIZE: (f64, f64) = (1440.0, 900.0);
pub const MIN_SIZE: (f64, f64) = (880.0, 560.0);
/// The largest size taken from the file (a corrupt value never makes a huge window).
const MAX_SIDE: f64 = 16384.0;

/// Where the app starts: the folders it opens and the window's size.
#[derive(Debug, PartialEq)]
pub struct Startup {
    /// The nexus folder to open; `None`: `kip_api::paths`' default.
    pub db: Option<PathBuf>,
    /// The folder to watch; `None`: `kip_api::paths`' default.
    pub capsules: Option<PathBuf>,
    pub size: (f64, f64),
}

/// The arguments win; without `--db` (and without `$KIP_DB`, which
/// `kip_api::paths::nexus_dir` honours) the last nexus, when its folder
/// still exists; without `--capsules` the remembered folder.
pub fn startup(
    prefs: &Map<String, Json>,
    db: Option<PathBuf>,
    capsules: Option<PathBuf>,
    kip_db_set: bool,
) -> Startup {
    let remembered = |key: &str| {
        prefs
            .get(key)
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
    };
    let db = db.or_else(|| {
        if kip_db_set {
            None
        } else {
            remembered(LAST_NEXUS).filter(|p| p.is_dir())
        }
    });
    let capsules = capsules.or_else(|| remembered(CAPSULES));
    let side = |key: &str, default: f64, min: f64| {
        prefs
            .get(WINDOW)
            .and_then(|w| w.get(key))
            .and_then(Json::as_f64)
            .filter(|v| v.is_finite())
            .map_or(default, |v| v.clamp(min, MAX_SIDE))
    };
    Startup {
        db,
        capsules,
        size: (
            side("width", DEFAULT_SIZE.0, MIN_SIZE.0),
            side("height", DEFAULT_SIZE.1, MIN_SIZE.1),
        ),
    }
}

/// Remembers one thing, reporting (never failing on) a file that cannot be written.
pub fn remember(file: Option<&Path>, key: &str, value: Json) {
    let Some(file) = file else { return };
    if let Err(e) = kip_api::prefs::set(file, key, value) {
        eprintln!(
            "kip-explorer: cannot save the preferences to {}: {e}",
            file.display()
        );
    }
}

/// The window size as the file keeps it.
pub fn size_value(width: f64, height: f64) -> Json {
    json!({ "width": width.round(), "height": height.round() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefs(v: Json) -> Map<String, Json> {
        v.as_object().expect("an object").clone()
    }

    #[test]
    fn arguments_win_over_what_is_remembered() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let p = prefs(
            json!({"last_nexus": dir.path(), "capsules": "/tmp/caps", "window": {"width": 1000, "height": 700}}),
        );
        let s = startup(&p, Some("/x/db".into()), Some("/x/caps".into()), false);
        assert_eq!(
            (s.db, s.capsules),
            (Some("/x/db".into()), Some("/x/caps".into()))
        );
        let s = startup(&p, None, None, false);
        assert_eq!(
            s,
            Startup {
                db: Some(dir.path().into()),
                capsules: Some("/tmp/caps".into()),
                size: (1000.0, 700.0)
            }
        );
        // $KIP_DB names the nexus: the remembered one waits.
        assert_eq!(startup(&p, None, None, true).db, None);
    }

    #[test]
    fn a_vanished_nexus_or_a_strange_size_falls_back() {
        let p = prefs(
            json!({"last_nexus": "/no/such/folder/anywhere", "window": {"width": "wide", "height": 1e12}}),
        );
        let s = startup(&p, None, None, false);
        assert_eq!(s.db, None);
        assert_eq!(s.size, (DEFAULT_SIZE.0, MAX_SIDE));
        let s = startup(
            &prefs(json!({"window": {"width": 10, "height": 10}})),
            None,
            None,
            false,
        );
        assert_eq!(s.size, MIN_SIZE);
        assert_eq!(startup(&Map::new(), None, None, false).size, DEFAULT_SIZE);
    }

    #[test]
    fn remembering_keeps_the_rest_of_the_file() {
        let dir = tempfile::tempdir().expect("a temp folder");
        let file = dir.path().join("prefs.json");
        remember(Some(&file), "theme", json!("dark"));
        remember(Some(&file), WINDOW, size_value(1200.4, 800.6));
        let (p, warning) = kip_api::prefs::load(&file);
        assert_eq!(warning, None);
        assert_eq!(p["theme"], json!("dark"));
        assert_eq!(startup(&p, None, None, false).size, (1200.0, 801.0));
    }
}
