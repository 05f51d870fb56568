//! Which files are capsules: `.kip`, `.yaml` and `.yml` files that are not
//! hidden and not an editor's or a downloader's temporary file, and the
//! walk that finds them in a folder.

use std::io;
use std::path::{Path, PathBuf};

use crate::report::Format;

/// The largest file imported whole by default, in MiB. A whole import
/// holds the text and its parsed form in memory (several times the file's
/// size), so a larger `.kip` capsule is read and applied part by part
/// (`stream.rs`), and a larger YAML bundle (parsed whole) is refused before
/// it is read, with a message naming it and the limit. `KIP_MAX_FILE_MIB`
/// changes the limit.
pub const DEFAULT_MAX_FILE_MIB: u64 = 64;

/// The environment variable that overrides [`DEFAULT_MAX_FILE_MIB`].
pub const MAX_FILE_VAR: &str = "KIP_MAX_FILE_MIB";

/// The file-size limit in force, in bytes.
pub fn max_file_bytes() -> u64 {
    std::env::var(MAX_FILE_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(DEFAULT_MAX_FILE_MIB)
        .saturating_mul(1 << 20)
}

/// Reads `path` unless it is larger than `limit` bytes: `Ok(Err(size))`
/// then, without reading it (or after reading just past the limit, if the
/// file grew while it was read).
pub(crate) fn read_limited(path: &Path, limit: u64) -> io::Result<Result<Vec<u8>, u64>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size > limit {
        return Ok(Err(size));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Ok(Err(bytes.len() as u64));
    }
    Ok(Ok(bytes))
}

/// Whether a name is hidden or temporary: `.name`, editor backups and
/// locks (`name~`, `#name#`, `~$name`), swap and partial files (their
/// extensions are not a capsule's anyway, but the rule is stated once).
fn is_hidden_or_temporary(name: &str) -> bool {
    name.starts_with('.')
        || name.starts_with('#')
        || name.starts_with("~$")
        || name.ends_with('~')
        || name.ends_with('#')
        || [
            ".swp",
            ".swo",
            ".swx",
            ".tmp",
            ".temp",
            ".part",
            ".crdownload",
            ".bak",
            ".orig",
        ]
        .iter()
        .any(|ext| name.to_ascii_lowercase().ends_with(ext))
}

/// Whether `path` names a capsule file (by its name; the file need not
/// exist). Any hidden component below `root` disqualifies it.
pub fn is_capsule_file(root: &Path, path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    if Format::of(name).is_none() || is_hidden_or_temporary(name) {
        return false;
    }
    let below = path.strip_prefix(root).unwrap_or(path);
    !below.components().any(|c| {
        c.as_os_str()
            .to_str()
            .is_some_and(|s| s.starts_with('.') && s != "." && s != "..")
    })
}

/// The capsule files under `dir`, recursively, in path order (so that
/// `10_schema.kip` comes before `11_data.kip`). Hidden folders are skipped.
pub fn capsule_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let hidden = name.to_str().is_some_and(|n| n.starts_with('.'));
        let kind = entry.file_type()?;
        if kind.is_dir() && !hidden {
            walk(root, &path, out)?;
        } else if (kind.is_file() || kind.is_symlink())
            && is_capsule_file(root, &path)
            && path.is_file()
        {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_capsules_and_ignores_hidden_temporary_and_swap_files() {
        let root = Path::new("/w");
        for yes in ["/w/a.kip", "/w/b.yaml", "/w/c.YML", "/w/sub/d.yaml"] {
            assert!(is_capsule_file(root, Path::new(yes)), "{yes}");
        }
        for no in [
            "/w/.a.kip",
            "/w/a.kip~",
            "/w/#a.yaml#",
            "/w/.#a.yaml",
            "/w/a.yaml.swp",
            "/w/.a.yaml.swp",
            "/w/~$a.yaml",
            "/w/a.yaml.tmp",
            "/w/4913",
            "/w/a.json",
            "/w/.git/x.kip",
            "/w/sub/.hidden/x.yaml",
            "/w/a.yaml.crdownload",
        ] {
            assert!(!is_capsule_file(root, Path::new(no)), "{no}");
        }
    }
}
