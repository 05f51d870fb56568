//! Exports from the window (graph PNG / SVG, table CSV, saved queries,
//! the trace as JSON Lines, …) saved as files. In a browser the page offers
//! them as downloads; a webview drops `<a download>` and blob URLs, so the
//! shell writes them where a browser would: the user's download folder
//! (`$KIP_DOWNLOAD_DIR` when set, for tests and for users who want another),
//! never over an existing file (`name (1).ext`, as browsers do).

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The download folder: `explicit` (`$KIP_DOWNLOAD_DIR`) when set and not
/// empty, else the platform's (`platform`), else `~/Downloads`.
pub fn download_dir(
    explicit: Option<std::ffi::OsString>,
    platform: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    explicit
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or(platform)
        .or_else(|| home.map(|h| h.join("Downloads")))
}

/// The file name the page asked for, reduced to its last component; `None`
/// when nothing usable is left (empty, `.`, `..`).
pub fn file_name(asked: &str) -> Option<String> {
    let last = asked.rsplit(['/', '\\']).next()?.trim();
    let clean: String = last.chars().filter(|c| !c.is_control()).collect();
    (!clean.is_empty() && clean != "." && clean != "..").then_some(clean)
}

/// `%XX` escapes decoded (the page sends the name `encodeURIComponent`ed,
/// as a header must be ASCII); a malformed escape is kept as it is.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes `bytes` as `name` in `dir` (created when missing), or as
/// `stem (n).ext` when that name is taken; answers the path written.
pub fn save(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 => (&name[..i], &name[i..]),
        _ => (name, ""),
    };
    for n in 0u32.. {
        let candidate = if n == 0 {
            dir.join(name)
        } else {
            dir.join(format!("{stem} ({n}){ext}"))
        };
        // `create_new` claims the name atomically: two exports at once never
        // write the same file.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(mut file) => {
                file.write_all(bytes)?;
                file.sync_all()?;
                return Ok(candidate);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("u32 names run out before a folder does")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_name_gets_a_number_and_nothing_is_overwritten() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = save(dir.path(), "kip-graph.png", b"one").expect("saved");
        let second = save(dir.path(), "kip-graph.png", b"two").expect("saved");
        let bare = save(dir.path(), "README", b"x").expect("saved");
        let bare2 = save(dir.path(), "README", b"y").expect("saved");
        assert_eq!(first, dir.path().join("kip-graph.png"));
        assert_eq!(second, dir.path().join("kip-graph (1).png"));
        assert_eq!(bare2, dir.path().join("README (1)"));
        assert_eq!(std::fs::read(first).expect("read"), b"one");
        assert_eq!(std::fs::read(second).expect("read"), b"two");
        assert_eq!(std::fs::read(bare).expect("read"), b"x");
    }

    #[test]
    fn names_arrive_uri_encoded() {
        assert_eq!(
            percent_decode("kip%20graph%20%E2%80%94%20%E9%BA%BB.png"),
            "kip graph — 麻.png"
        );
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("a%zzb"), "a%zzb");
    }

    #[test]
    fn a_missing_folder_is_created() {
        let dir = tempfile::tempdir().expect("temp dir");
        let nested = dir.path().join("Downloads");
        let path = save(&nested, "kip-result.csv", b"a,b\r\n").expect("saved");
        assert_eq!(path, nested.join("kip-result.csv"));
    }

    #[test]
    fn only_the_last_component_of_a_name_is_used() {
        assert_eq!(file_name("../../etc/passwd").as_deref(), Some("passwd"));
        assert_eq!(
            file_name("C:\\x\\trace.jsonl").as_deref(),
            Some("trace.jsonl")
        );
        assert_eq!(file_name("kip-graph.svg").as_deref(), Some("kip-graph.svg"));
        assert_eq!(file_name(""), None);
        assert_eq!(file_name("a/.."), None);
        assert_eq!(file_name("dir/"), None);
    }

    #[test]
    fn the_explicit_folder_else_the_platform_folder_else_home_downloads() {
        let (p, h) = (Some(PathBuf::from("/p")), Some(PathBuf::from("/h")));
        assert_eq!(
            download_dir(Some("/e".into()), p.clone(), h.clone()),
            Some(PathBuf::from("/e"))
        );
        assert_eq!(
            download_dir(Some("".into()), p.clone(), h.clone()),
            Some(PathBuf::from("/p"))
        );
        assert_eq!(
            download_dir(None, None, h),
            Some(PathBuf::from("/h/Downloads"))
        );
        assert_eq!(download_dir(None, None, None), None);
    }
}
