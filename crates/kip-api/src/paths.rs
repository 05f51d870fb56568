//! Where a host keeps its nexus and its watched capsule folder when the user
//! names neither: one answer for every host (`kip`, the desktop app), so they
//! open the same nexus by default.
//!
//! The nexus folder is the one given explicitly (`--db`), else `$KIP_DB`,
//! else `<platform data dir>/kip-explorer/nexus`; the capsule folder is
//! `<platform data dir>/kip-explorer/capsules`. `None` means the platform
//! has no data directory: the host then asks for an explicit path.

use std::path::PathBuf;

/// `<platform data dir>/kip-explorer` (`~/.local/share/kip-explorer` on Linux).
pub fn data_dir() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("kip-explorer"))
}

/// `<platform config dir>/kip-explorer` (`~/.config/kip-explorer` on Linux),
/// or `$KIP_CONFIG_DIR` when set and not empty: where a host keeps its
/// preferences (`prefs.rs`).
pub fn config_dir() -> Option<PathBuf> {
    std::env::var_os("KIP_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::config_dir().map(|d| d.join("kip-explorer")))
}

/// The preferences file: [`config_dir`]`/prefs.json`.
pub fn prefs_file() -> Option<PathBuf> {
    config_dir().map(|d| d.join("prefs.json"))
}

/// The nexus folder: `explicit`, else `$KIP_DB` (when not empty), else
/// [`data_dir`]`/nexus`.
pub fn nexus_dir(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit
        .or_else(|| {
            std::env::var_os("KIP_DB")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .or_else(|| data_dir().map(|d| d.join("nexus")))
}

/// The watched capsule folder: `explicit`, else [`data_dir`]`/capsules`.
pub fn capsules_dir(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit.or_else(|| data_dir().map(|d| d.join("capsules")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_folder_wins() {
        let mine = PathBuf::from("/tmp/my-nexus");
        assert_eq!(nexus_dir(Some(mine.clone())), Some(mine.clone()));
        assert_eq!(capsules_dir(Some(mine.clone())), Some(mine));
    }

    #[test]
    fn defaults_live_under_one_data_folder() {
        if let Some(base) = data_dir() {
            assert_eq!(capsules_dir(None), Some(base.join("capsules")));
            if std::env::var_os("KIP_DB").is_none_or(|v| v.is_empty()) {
                assert_eq!(nexus_dir(None), Some(base.join("nexus")));
            }
            assert!(base.ends_with("kip-explorer"));
        }
        if let Some(config) = config_dir() {
            assert_eq!(prefs_file(), Some(config.join("prefs.json")));
        }
    }
}
