//! Embeds the built web UI (`ui/dist`) into `kip`, so that `kip serve`
//! shows the full UI from a binary copied anywhere (`cargo install`, a
//! release download, the `.deb`) with no repository beside it.
//!
//! With the `web-ui` feature (the default) a missing `ui/dist` is a build
//! error that says how to build the UI, never a silently UI-less binary.
//! `--no-default-features` builds `kip` without the UI on purpose; its
//! `kip serve` then looks for `ui/dist` at run time, as in development.
//! `KIP_UI_DIST=DIR` embeds another folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=KIP_UI_DIST");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut code = String::from(
        "/// The web UI's files, by path relative to its root.\npub static ASSETS: &[(&str, &[u8])] = &[\n",
    );
    if std::env::var_os("CARGO_FEATURE_WEB_UI").is_some() {
        let dist = std::env::var_os("KIP_UI_DIST")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/dist"));
        println!("cargo:rerun-if-changed={}", dist.display());
        if !dist.join("index.html").is_file() {
            panic!(
                "\n\n`kip` embeds the web UI, but {} holds no built UI (no index.html).\n\
                 Build the UI first:   ./scripts/ui.sh build\n\
                 (or: npm ci --prefix ui && npm --prefix ui run build)\n\
                 or build `kip` without its UI on purpose:   cargo build -p kip-cli --no-default-features\n\n",
                dist.display()
            );
        }
        let mut files = Vec::new();
        collect(&dist, &dist, &mut files);
        files.sort();
        for (rel, abs) in files {
            println!("cargo:rerun-if-changed={}", abs.display());
            let _ = writeln!(
                code,
                "    ({rel:?}, include_bytes!({:?})),",
                abs.display().to_string()
            );
        }
    }
    code.push_str("];\n");
    std::fs::write(out.join("ui_assets.rs"), code).expect("write ui_assets.rs");
}

/// Every file under `dir`, as (path relative to `root` with `/`, absolute path).
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        println!("cargo:rerun-if-changed={}", dir.display());
        if path.is_dir() {
            collect(root, &path, files);
        } else if let Ok(rel) = path.strip_prefix(root) {
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let abs = path.canonicalize().unwrap_or(path);
            files.push((rel, abs));
        }
    }
}
