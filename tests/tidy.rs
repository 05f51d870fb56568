//! The architecture's rules, checked rather than remembered (in the manner
//! of rust-analyzer's tidy tests): which crate may depend on which, read
//! from `cargo metadata`, and which module may name what, read from the
//! sources. ARCHITECTURE.md states each rule; this file is its proof. A rule
//! that must change is changed here and there together. The lists the map
//! gives (the store's databases, the MCP tools and resources) are checked
//! against the code here too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kip_e2e::{metadata, workspace};
use serde_json::Value as Json;

/// Every workspace crate and the workspace crates it may depend on (normal
/// dependencies). Layers point one way: language and storage at the bottom,
/// the engine on both, files on the engine, the API on those, hosts on top.
const LAYERS: &[(&str, &[&str])] = &[
    ("kip-lang", &[]),
    ("kip-store", &[]),
    // The embedder: text in, vectors out; knows neither KIP nor the store.
    ("kip-embed", &[]),
    ("kip-nexus", &["kip-lang", "kip-store", "kip-embed"]),
    ("kip-capsule", &["kip-lang", "kip-nexus"]),
    // The logic-property resolver: on the engine, beside the capsules. It
    // is async inside and offers a blocking entry point, so kip-api calls
    // it without knowing a runtime.
    ("kip-logic", &["kip-lang", "kip-nexus"]),
    (
        "kip-api",
        &["kip-lang", "kip-nexus", "kip-capsule", "kip-logic"],
    ),
    (
        "kip-cli",
        &[
            "kip-lang",
            "kip-nexus",
            "kip-capsule",
            "kip-logic",
            "kip-api",
        ],
    ),
    ("kip-explorer", &["kip-capsule", "kip-api"]),
    ("kip-e2e", &[]),
];

/// Transport and host crates: only the binaries (and their tests) know them.
const TRANSPORTS: &[&str] = &["tauri", "axum", "rmcp", "tokio", "tower-http", "hyper"];

/// `(crate, external dependency)` pairs that may exist only there.
const OWNERS: &[(&str, &str)] = &[
    ("kip-store", "heed"),
    ("kip-lang", "pest"),
    ("kip-lang", "pest_derive"),
];

fn packages() -> BTreeMap<String, Json> {
    let meta = metadata();
    meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["name"].as_str().unwrap_or_default().to_owned(), p.clone()))
        .collect()
}

/// A package's dependencies of one kind (`None` is normal, else `"dev"` or
/// `"build"`), by name.
fn deps(package: &Json, kind: Option<&str>) -> BTreeSet<String> {
    package["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["kind"].as_str() == kind)
        .filter_map(|d| d["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn every_workspace_crate_is_in_the_layering() {
    let known: BTreeSet<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    let members: BTreeSet<String> = packages().into_keys().collect();
    let members: BTreeSet<&str> = members.iter().map(String::as_str).collect();
    assert_eq!(
        members, known,
        "a crate was added or removed: place it in LAYERS (and in ARCHITECTURE.md)"
    );
}

#[test]
fn crates_depend_only_on_the_layers_below_them() {
    let packages = packages();
    let workspace: BTreeSet<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    for (name, allowed) in LAYERS {
        let Some(package) = packages.get(*name) else {
            continue;
        };
        let allowed: BTreeSet<&str> = allowed.iter().copied().collect();
        let normal = deps(package, None);
        let actual: BTreeSet<&str> = normal
            .iter()
            .map(String::as_str)
            .filter(|d| workspace.contains(d))
            .collect();
        let extra: Vec<&&str> = actual.difference(&allowed).collect();
        assert!(
            extra.is_empty(),
            "{name} depends on {extra:?}, which its layer may not use"
        );
        // Tests may reach further down (a test builds a nexus), never up.
        for dev in deps(package, Some("dev")) {
            if workspace.contains(dev.as_str()) && dev != *name {
                assert!(
                    allowed.contains(dev.as_str()),
                    "{name}'s tests depend on {dev}, a crate above or beside it"
                );
            }
        }
    }
}

#[test]
fn no_layer_below_the_hosts_knows_a_transport() {
    let packages = packages();
    for library in [
        "kip-lang",
        "kip-store",
        "kip-nexus",
        "kip-capsule",
        "kip-api",
    ] {
        let normal = deps(&packages[library], None);
        for transport in TRANSPORTS {
            assert!(
                !normal.contains(*transport),
                "{library} depends on {transport}: transports belong to kip-cli and src-tauri"
            );
        }
    }
}

#[test]
fn storage_and_parsing_libraries_have_one_owner_each() {
    let packages = packages();
    for (owner, dependency) in OWNERS {
        for (name, package) in &packages {
            if name != owner {
                assert!(
                    !deps(package, None).contains(*dependency),
                    "{name} depends on {dependency}, which only {owner} may use"
                );
            }
        }
    }
}

// ------------------------------------------------------------------ sources

/// Every `.rs` file under `dir`, relative to the workspace.
fn rust_files(dir: &str) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![workspace().join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                let rel = path
                    .strip_prefix(workspace())
                    .map(Path::to_path_buf)
                    .unwrap_or(path);
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

/// The code of a file with comments and the contents of string and char
/// literals removed (comments and messages may name anything; code may
/// not; and a `'{'` must not open a block for the brace scans below). Good
/// enough for these scans, not a Rust lexer: a lifetime is told from a char
/// literal by the quote two or three characters on, which suffices for
/// rustfmt-formatted code.
fn code(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        i += 1;
        match c {
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                // A block comment (not nested in this code base): keep its
                // line breaks so line numbers stay right.
                i += 1;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    if chars[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i += 2;
            }
            'r' if next == Some('#') || next == Some('"') => {
                // A raw string r#"…"# (zero or more #), unless the `r` ends
                // an identifier (`for"` cannot occur; `r#ident` can).
                let ident_before = i >= 2 && is_ident(chars[i - 2]);
                let mut j = i;
                while chars.get(j) == Some(&'#') {
                    j += 1;
                }
                if ident_before || chars.get(j) != Some(&'"') {
                    out.push('r');
                    continue;
                }
                let hashes = j - i;
                i = j + 1;
                out.push_str("\"\"");
                while i < chars.len() {
                    if chars[i] == '"'
                        && chars[i + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&c| c == '#')
                            .count()
                            == hashes
                    {
                        i += 1 + hashes;
                        break;
                    }
                    push_newline(&mut out, chars[i]);
                    i += 1;
                }
            }
            '"' => {
                out.push_str("\"\"");
                let mut escaped = false;
                while i < chars.len() {
                    let c = chars[i];
                    i += 1;
                    push_newline(&mut out, c);
                    match (c, escaped) {
                        ('\\', false) => escaped = true,
                        ('"', false) => break,
                        _ => escaped = false,
                    }
                }
            }
            '\'' => {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
                let end = if next == Some('\\') {
                    (i + 1..chars.len().min(i + 12)).find(|&j| chars[j] == '\'')
                } else if chars.get(i + 1) == Some(&'\'') {
                    Some(i + 1)
                } else {
                    None
                };
                match end {
                    Some(end) => {
                        out.push_str("' '");
                        i = end + 1;
                    }
                    None => out.push('\''),
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Keeps a literal's line breaks, so that lines counted in the code are the
/// file's lines.
fn push_newline(out: &mut String, c: char) {
    if c == '\n' {
        out.push('\n');
    }
}

fn rel(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// The names a file takes from `kip_store` (`kip_store::X`,
/// `kip_store::{X, Y}`).
fn store_names(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (i, _) in code.match_indices("kip_store::") {
        let rest = &code[i + "kip_store::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            names.extend(
                group[..end]
                    .split(',')
                    .map(|n| n.trim().to_owned())
                    .filter(|n| !n.is_empty()),
            );
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            names.push(rest[..end].to_owned());
        }
    }
    names
}

/// Inside the engine, only these modules use the store's API: the read view
/// (`graph.rs`), the writer (`kml/`), the text index (`search.rs`), the
/// bootstrap (`genesis.rs`), the transactions (`run.rs`, `write.rs`,
/// `bulk.rs`), the handle that owns the store and its copies (`nexus.rs`,
/// `backup.rs`), the crate root's re-exports (`lib.rs`), the
/// cognitive trace (`trace/`, its own databases). The
/// query planner and executor, META, explain and everything else see the
/// graph through `graph::Graph` and may name only the id types.
#[test]
fn only_the_storage_facing_modules_of_the_engine_use_kip_store() {
    let facing = [
        "crates/kip-nexus/src/graph.rs",
        "crates/kip-nexus/src/kml/",
        "crates/kip-nexus/src/search.rs",
        "crates/kip-nexus/src/semantic.rs",
        "crates/kip-nexus/src/genesis.rs",
        "crates/kip-nexus/src/run.rs",
        "crates/kip-nexus/src/write.rs",
        "crates/kip-nexus/src/bulk.rs",
        "crates/kip-nexus/src/lib.rs",
        "crates/kip-nexus/src/nexus.rs",
        "crates/kip-nexus/src/backup.rs",
        "crates/kip-nexus/src/trace/",
    ];
    let ids = ["ConceptId", "ElementId", "PropositionId"];
    let mut offenders = Vec::new();
    for (path, text) in rust_files("crates/kip-nexus/src") {
        let p = rel(&path);
        if facing.iter().any(|f| p.starts_with(f)) {
            continue;
        }
        for name in store_names(&code(&text)) {
            if !ids.contains(&name.as_str()) {
                offenders.push(format!("{p}: kip_store::{name}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "use the store through graph::Graph (reads) or kml (writes): {offenders:#?}"
    );
}

/// Nothing above the engine names `kip_store` at all (its ids are
/// re-exported by `kip_nexus`).
#[test]
fn nothing_above_the_engine_names_kip_store() {
    let mut offenders = Vec::new();
    for dir in [
        "crates/kip-capsule",
        "crates/kip-api",
        "crates/kip-cli",
        "src-tauri/src",
        "tests",
    ] {
        for (path, text) in rust_files(dir) {
            if rel(&path) == "tests/tidy.rs" {
                continue;
            }
            if code(&text).contains("kip_store") {
                offenders.push(rel(&path));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// `pest` is seen by the parser alone; `heed` by the store alone; `unsafe`
/// only in the store's environment handling and the `kip` binary's
/// allocator setting; `anyhow` only in binaries and tests.
#[test]
fn low_level_crates_stay_where_they_belong() {
    let mut offenders = Vec::new();
    for dir in ["crates", "src-tauri/src"] {
        for (path, text) in rust_files(dir) {
            let p = rel(&path);
            let code = code(&text);
            let is_test = p.contains("/tests/") || p.contains("/benches/");
            if code.contains("pest::") && !p.starts_with("crates/kip-lang/src/parser/") {
                offenders.push(format!("{p}: pest"));
            }
            if code.contains("heed::") && !p.starts_with("crates/kip-store/") {
                offenders.push(format!("{p}: heed"));
            }
            // kip-embed's encoder calls matrixmultiply's `sgemm`, an unsafe
            // fn taking raw pointers, with every shape asserted first; its
            // kernels call their AVX2 builds after checking the CPU has it.
            let unsafe_allowed = [
                "crates/kip-store/src/env.rs",
                "crates/kip-cli/src/alloc.rs",
                "crates/kip-embed/src/encoder.rs",
                "crates/kip-embed/src/kernel.rs",
            ];
            if code.contains("allow(unsafe_code)") && !unsafe_allowed.contains(&p.as_str()) {
                offenders.push(format!("{p}: unsafe"));
            }
            let library = [
                "kip-lang",
                "kip-store",
                "kip-nexus",
                "kip-capsule",
                "kip-api",
            ]
            .iter()
            .any(|c| p.starts_with(&format!("crates/{c}/src/")));
            if library && !is_test && code.contains("anyhow") {
                offenders.push(format!("{p}: anyhow in a library"));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// Hosts go through `kip_api::Api`: no module of the binaries names the
/// engine (`kip_nexus`) — not by a `use`, not by a path — but the engine
/// benchmark (`kip bench` measures the engine itself, without the API).
/// What a host needs of the nexus is an `Api` method (opening it, its
/// folder, sessions and chores: `kip_api::host`).
#[test]
fn hosts_reach_the_engine_only_through_the_api() {
    let offenders = engine_names(&[
        ("crates/kip-cli/src", &["crates/kip-cli/src/bench"]),
        ("src-tauri/src", &[]),
    ]);
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The files under each `(dir, allowed prefixes)` whose code names
/// `kip_nexus` (test modules included: they build fixtures through
/// `Api::open`).
fn engine_names(dirs: &[(&str, &[&str])]) -> Vec<String> {
    let mut offenders = Vec::new();
    for (dir, allowed) in dirs {
        for (path, text) in rust_files(dir) {
            let p = rel(&path);
            if allowed.iter().any(|a| p.starts_with(a)) {
                continue;
            }
            if code(&text).contains("kip_nexus") {
                offenders.push(p);
            }
        }
    }
    offenders
}

#[test]
fn the_host_rule_fails_on_a_host_that_names_the_engine() {
    let dir = workspace().join("target/tidy-host-rule");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).expect("create");
    std::fs::write(
        dir.join("src/main.rs"),
        "// kip_nexus in a comment is fine\nuse kip_nexus::Nexus;\n",
    )
    .expect("write");
    std::fs::write(dir.join("src/ok.rs"), "let s = \"kip_nexus\";\n").expect("write");
    let found = engine_names(&[("target/tidy-host-rule/src", &[])]);
    assert_eq!(found, ["target/tidy-host-rule/src/main.rs"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Only `ui/src/transport/` imports `@tauri-apps/*`: the same UI runs in a
/// browser over HTTP.
#[test]
fn only_the_ui_transport_knows_tauri() {
    let offenders: Vec<String> = ui_files()
        .into_iter()
        .filter(|(p, text)| !p.starts_with("ui/src/transport/") && text.contains("@tauri-apps/"))
        .map(|(p, _)| p)
        .collect();
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// Every file under `ui/src` (relative to the workspace) with its text.
fn ui_files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![workspace().join("ui/src")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((rel(path.strip_prefix(workspace()).unwrap_or(&path)), text));
            }
        }
    }
    out.sort();
    out
}

/// The longest a UI source file (`.ts`, `.svelte`) may be: a component or
/// module longer than this holds more than one job.
const MAX_UI_FILE_LINES: usize = 500;

/// The UI's source files over [`MAX_UI_FILE_LINES`], but the bindings
/// generated from kip-api (`ui/src/transport/generated/`).
fn long_ui_files(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(p, _)| {
            (p.ends_with(".ts") || p.ends_with(".svelte"))
                && !p.starts_with("ui/src/transport/generated/")
        })
        .filter_map(|(p, text)| {
            let lines = text.lines().count();
            (lines > MAX_UI_FILE_LINES).then(|| format!("{p}: {lines} lines"))
        })
        .collect()
}

#[test]
fn no_ui_file_is_over_500_lines() {
    let long = long_ui_files(&ui_files());
    assert!(long.is_empty(), "split these UI files by job: {long:#?}");
}

#[test]
fn the_ui_size_rule_fails_on_a_long_file_but_not_on_generated_bindings() {
    let long = "x;\n".repeat(MAX_UI_FILE_LINES + 1);
    let files = vec![
        ("ui/src/views/Long.svelte".to_owned(), long.clone()),
        (
            "ui/src/lib/short.ts".to_owned(),
            "x;\n".repeat(MAX_UI_FILE_LINES),
        ),
        (
            "ui/src/transport/generated/kip-api.ts".to_owned(),
            long.clone(),
        ),
        ("ui/src/app.css".to_owned(), long),
    ];
    assert_eq!(
        long_ui_files(&files),
        ["ui/src/views/Long.svelte: 501 lines"]
    );
}

/// Files embedded from outside a crate's folder (the Genesis capsules, the
/// KIP reference) exist where the `include_str!` says, inside the
/// repository.
#[test]
fn every_embedded_file_is_inside_the_repository() {
    let mut seen = 0;
    for dir in ["crates", "src-tauri/src"] {
        for (path, text) in rust_files(dir) {
            for (i, _) in text.match_indices("include_str!(\"") {
                let rest = &text[i + "include_str!(\"".len()..];
                let Some(end) = rest.find('"') else { continue };
                let target = workspace()
                    .join(&path)
                    .parent()
                    .map(|d| d.join(&rest[..end]))
                    .unwrap_or_default();
                let target = target.canonicalize().unwrap_or(target);
                assert!(
                    target.is_file(),
                    "{}: {} is missing",
                    rel(&path),
                    target.display()
                );
                let root = workspace().canonicalize().expect("workspace");
                assert!(
                    target.starts_with(&root),
                    "{}: {} is outside the repository",
                    rel(&path),
                    target.display()
                );
                seen += 1;
            }
        }
    }
    assert!(
        seen >= 6,
        "the Genesis capsules and the KIP reference are embedded"
    );
}

// ------------------------------------------------------------------- sizes

/// The longest a source file may be. A file longer than this holds more
/// than one job; split it by job into a module folder.
const MAX_FILE_LINES: usize = 700;

/// The longest a function body may be, in lines from its `{` to its `}`.
const MAX_FUNCTION_LINES: usize = 100;

/// Source files allowed over [`MAX_FILE_LINES`]: (path, reason). None:
/// every file that grew past it was split by job.
const LONG_FILES: &[(&str, &str)] = &[];

/// Functions allowed over [`MAX_FUNCTION_LINES`]: (path, name, reason).
const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[(
    "crates/kip-lang/src/parser/syntax.rs",
    "rule_phrase",
    "the exhaustive `Rule → human phrase` table: one line per grammar rule and no `_ =>` arm, \
         so that a new rule cannot ship without an error phrase; split, it would stop being \
         checked for exhaustiveness",
)];

/// The folders whose files the size and import rules cover: the crates'
/// sources and the desktop shell's (test folders are not sources).
fn source_files() -> Vec<(String, String)> {
    let mut dirs: Vec<String> = std::fs::read_dir(workspace().join("crates"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| format!("crates/{}/src", e.file_name().to_string_lossy()))
        .collect();
    dirs.sort();
    dirs.push("src-tauri/src".to_owned());
    dirs.iter()
        .flat_map(|d| rust_files(d))
        .map(|(path, text)| (rel(&path), text))
        .collect()
}

/// The files over [`MAX_FILE_LINES`] that `allowed` does not name.
fn long_files(files: &[(String, String)], allowed: &[(&str, &str)]) -> Vec<String> {
    files
        .iter()
        .filter(|(path, _)| !allowed.iter().any(|(p, _)| p == path))
        .filter_map(|(path, text)| {
            let lines = text.lines().count();
            (lines > MAX_FILE_LINES).then(|| format!("{path}: {lines} lines"))
        })
        .collect()
}

/// Every function with a body in a file's [`code`]: its name, the line of
/// its `fn` and the lines of its body. A scan, not a parser: it finds
/// `fn name`, the first `{` after it outside brackets (a `;` first means a
/// declaration without a body), and the matching `}`. Nested functions are
/// found too, and count inside their enclosing function as well.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let bytes = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let rest = &code[at + 3..];
        let name_len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if name_len == 0 {
            continue;
        }
        let mut depth = 0i32;
        let mut open = None;
        for (j, b) in rest.bytes().enumerate() {
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    open = Some(at + 3 + j);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut depth = 0i32;
        let mut close = None;
        for (j, b) in code[open..].bytes().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else { continue };
        let lines = line_of(close) - line_of(open) + 1;
        out.push((rest[..name_len].to_owned(), line_of(at), lines));
    }
    out
}

/// The functions over [`MAX_FUNCTION_LINES`] that `allowed` does not name.
fn long_functions(files: &[(String, String)], allowed: &[(&str, &str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        for (name, line, lines) in functions(&code(text)) {
            let excused = allowed.iter().any(|(p, n, _)| p == path && *n == name);
            if lines > MAX_FUNCTION_LINES && !excused {
                out.push(format!("{path}:{line}: fn {name} is {lines} lines"));
            }
        }
    }
    out
}

#[test]
fn no_source_file_is_over_700_lines() {
    let long = long_files(&source_files(), LONG_FILES);
    assert!(
        long.is_empty(),
        "split these files by job (or name them in LONG_FILES with a real reason): {long:#?}"
    );
}

#[test]
fn no_function_is_over_100_lines() {
    let long = long_functions(&source_files(), LONG_FUNCTIONS);
    assert!(
        long.is_empty(),
        "split these functions (or name them in LONG_FUNCTIONS with a real reason): {long:#?}"
    );
}

/// Every allow-list entry names a file and function that exist and are
/// still long: an entry outlives its reason otherwise.
#[test]
fn the_size_allow_lists_name_only_what_is_long() {
    let files = source_files();
    let text = |path: &str| files.iter().find(|(p, _)| p == path).map(|(_, t)| t);
    for (path, reason) in LONG_FILES {
        assert!(!reason.is_empty(), "{path}: give a reason");
        let lines = text(path).map_or(0, |t| t.lines().count());
        assert!(
            lines > MAX_FILE_LINES,
            "{path} is {lines} lines: drop it from LONG_FILES"
        );
    }
    for (path, name, reason) in LONG_FUNCTIONS {
        assert!(!reason.is_empty(), "{path}: give a reason");
        let lines = text(path)
            .map(|t| functions(&code(t)))
            .into_iter()
            .flatten()
            .filter(|(n, _, _)| n == name)
            .map(|(_, _, lines)| lines)
            .max()
            .unwrap_or(0);
        assert!(
            lines > MAX_FUNCTION_LINES,
            "{path}: fn {name} is {lines} lines: drop it from LONG_FUNCTIONS"
        );
    }
}

#[test]
fn the_file_size_rule_fails_on_a_long_file() {
    let long = "fn f() {}\n".repeat(MAX_FILE_LINES + 1);
    let short = "fn f() {}\n".repeat(MAX_FILE_LINES);
    let files = vec![
        ("crates/a/src/long.rs".to_owned(), long.clone()),
        ("crates/a/src/short.rs".to_owned(), short),
        ("crates/a/src/excused.rs".to_owned(), long),
    ];
    assert_eq!(
        long_files(&files, &[("crates/a/src/excused.rs", "a reason")]),
        ["crates/a/src/long.rs: 701 lines"]
    );
}

#[test]
fn the_function_size_rule_fails_on_a_long_function() {
    let body = "    let x = 1;\n".repeat(MAX_FUNCTION_LINES - 2);
    let ok = format!("fn ok() {{\n{body}}}\n");
    let long = format!(
        "/// fn doc() {{\nfn long(a: [u8; 2]) -> u8\nwhere\n    u8: Copy,\n{{\n    let c = '{{';\n    let s = \"}}\";\n{body}    x\n}}\n\ntrait T {{\n    fn declared(&self);\n}}\n"
    );
    let files = vec![
        ("crates/a/src/ok.rs".to_owned(), ok),
        ("crates/a/src/long.rs".to_owned(), long),
    ];
    assert_eq!(
        long_functions(&files, &[]),
        ["crates/a/src/long.rs:2: fn long is 103 lines"]
    );
    assert!(long_functions(&files, &[("crates/a/src/long.rs", "long", "a reason")]).is_empty());
}

// ----------------------------------------------------------------- imports

/// References between files that the import rules let stand: (from file,
/// to file, reason), each a cycle's edge or an upward import with the
/// reason it must stay. None today.
const IMPORT_EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// A crate's module files, by module path (`""` for the crate root,
/// `"a::b"` for `src/a/b.rs` or `src/a/b/mod.rs`), from the files under
/// `src` (paths relative to the workspace, as [`source_files`] gives them),
/// test modules left out.
fn module_files<'a>(
    src: &str,
    files: &'a [(String, String)],
) -> BTreeMap<String, &'a (String, String)> {
    let mut out = BTreeMap::new();
    for file in files {
        let Some(inner) = file.0.strip_prefix(&format!("{src}/")) else {
            continue;
        };
        let inner = inner.strip_suffix(".rs").unwrap_or(inner);
        let inner = inner.strip_suffix("/mod").unwrap_or(inner);
        // A binary is a crate of its own; a `tests.rs` is a `#[cfg(test)]`
        // module, which may reach anywhere in its crate like an inline one.
        if inner.starts_with("bin/") || inner == "tests" || inner.ends_with("/tests") {
            continue;
        }
        let module = match inner {
            "lib" | "main" => String::new(),
            _ => inner.replace('/', "::"),
        };
        out.insert(module, file);
    }
    out
}

/// The byte ranges of a code's inline `mod name { … }` blocks, and whether
/// each is a `#[cfg(test)]` module.
fn inline_modules(code: &str) -> Vec<(usize, usize, bool)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("mod ") {
        if at > 0 && is_ident(bytes[at - 1] as char) {
            continue;
        }
        let rest = &code[at + 4..];
        let name_len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if name_len == 0 || !rest[name_len..].trim_start().starts_with('{') {
            continue;
        }
        let open = at + 4 + name_len + rest[name_len..].find('{').unwrap_or(0);
        let mut depth = 0i32;
        let mut close = code.len();
        for (j, b) in code[open..].bytes().enumerate() {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let head = code[..at].trim_end();
        let head = head.strip_suffix("pub").unwrap_or(head).trim_end();
        out.push((open, close, head.ends_with("#[cfg(test)]")));
    }
    out
}

/// The module paths a path written after `crate::`, `super::` or `self::`
/// names: `a::b::C` is one, `{a::C, b::{D, E}}` several.
fn path_tails(rest: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = rest;
    loop {
        let len = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if len == 0 {
            break;
        }
        segments.push(rest[..len].to_owned());
        rest = &rest[len..];
        match rest.strip_prefix("::") {
            Some(more) => rest = more,
            None => return vec![segments],
        }
    }
    let Some(group) = rest.strip_prefix('{') else {
        return vec![segments];
    };
    // Split the group's items at its own commas.
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                for tail in path_tails(group[start..i].trim()) {
                    out.push([segments.clone(), tail].concat());
                }
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                for tail in path_tails(group[start..i].trim()) {
                    out.push([segments.clone(), tail].concat());
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// The graph of one crate's files: for each module, the modules whose files
/// its code names through `crate::…`, `super::…` or `self::…` (a path is
/// resolved to the longest prefix that is a module file; an item of an
/// inline module belongs to the file holding it). `#[cfg(test)]` modules
/// are left out: a test may reach anywhere in its crate to build a fixture.
fn import_graph(src: &str, files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let modules = module_files(src, files);
    let mut graph = BTreeMap::new();
    for (module, (_, text)) in &modules {
        let code = code(text);
        let inline = inline_modules(&code);
        let mut targets = BTreeSet::new();
        for keyword in ["crate::", "super::", "self::"] {
            for (at, _) in code.match_indices(keyword) {
                let before = code[..at].chars().next_back();
                // `pub(in crate::a)` names a module but imports nothing.
                if before.is_some_and(|c| is_ident(c) || c == ':') || code[..at].ends_with("(in ") {
                    continue;
                }
                if inline.iter().any(|&(o, c, test)| test && o < at && at < c) {
                    continue;
                }
                // Inside an inline module, the first `super` names the file.
                let mut depth = inline.iter().filter(|&&(o, c, _)| o < at && at < c).count();
                let mut base: Vec<&str> = match keyword {
                    "crate::" => Vec::new(),
                    _ => module.split("::").filter(|s| !s.is_empty()).collect(),
                };
                let mut rest = &code[at..];
                if keyword != "crate::" {
                    while let Some(more) = rest.strip_prefix("super::") {
                        if depth > 0 {
                            depth -= 1;
                        } else {
                            base.pop();
                        }
                        rest = more;
                    }
                    rest = rest.strip_prefix("self::").unwrap_or(rest);
                } else {
                    rest = &rest[keyword.len()..];
                }
                for tail in path_tails(rest) {
                    let mut path: Vec<String> = base.iter().map(|s| (*s).to_owned()).collect();
                    path.extend(tail);
                    let target = (0..=path.len())
                        .rev()
                        .map(|n| path[..n].join("::"))
                        .find(|m| modules.contains_key(m))
                        .unwrap_or_default();
                    if target != *module {
                        targets.insert(target);
                    }
                }
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// The cycles of a graph, one per strongly connected component of more than
/// one module, each as a path that returns to its start.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, recursive: module graphs are shallow.
    struct Tarjan<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        components: Vec<Vec<&'g str>>,
    }
    impl<'g> Tarjan<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|&m| m == v).unwrap_or(0);
                let component = self.stack.split_off(at);
                if component.len() > 1 {
                    self.components.push(component);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        components: Vec::new(),
    };
    for v in graph.keys() {
        if !tarjan.index.contains_key(v.as_str()) {
            tarjan.visit(v);
        }
    }
    // Print each component as one cycle through it: a shortest way back to
    // its first module, found breadth-first inside the component.
    tarjan
        .components
        .iter()
        .map(|component| {
            let start = component.iter().min().copied().unwrap_or_default();
            let mut previous: BTreeMap<&str, &str> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([start]);
            'search: while let Some(v) = queue.pop_front() {
                for w in graph.get(v).into_iter().flatten() {
                    let w = w.as_str();
                    if !component.contains(&w) || previous.contains_key(w) {
                        continue;
                    }
                    previous.insert(w, v);
                    if w == start {
                        break 'search;
                    }
                    queue.push_back(w);
                }
            }
            let mut path = vec![start.to_owned()];
            let mut v = previous.get(start).copied().unwrap_or(start);
            while v != start {
                path.push(v.to_owned());
                v = previous.get(v).copied().unwrap_or(start);
            }
            path.push(start.to_owned());
            path.reverse();
            path
        })
        .collect()
}

/// Shows a module by its file.
fn file_of(src: &str, files: &[(String, String)], module: &str) -> String {
    module_files(src, files)
        .get(module)
        .map_or_else(|| module.to_owned(), |(path, _)| path.clone())
}

/// The import graph of the crate under `src`, without the references that
/// `allowed` excuses.
fn crate_graph(
    src: &str,
    files: &[(String, String)],
    allowed: &[(&str, &str, &str)],
) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = import_graph(src, files);
    for (module, targets) in graph.iter_mut() {
        let from = file_of(src, files, module);
        targets.retain(|to| {
            let to = file_of(src, files, to);
            !allowed.iter().any(|(f, t, _)| *f == from && *t == to)
        });
    }
    graph
}

/// Every import cycle between the files of the crate under `src`, each as
/// `a.rs → b.rs → a.rs`.
fn import_cycles(
    src: &str,
    files: &[(String, String)],
    allowed: &[(&str, &str, &str)],
) -> Vec<String> {
    cycles(&crate_graph(src, files, allowed))
        .iter()
        .map(|cycle| {
            cycle
                .iter()
                .map(|m| file_of(src, files, m))
                .collect::<Vec<_>>()
                .join(" → ")
        })
        .collect()
}

/// The references of the crate under `src` from a module to one of its
/// ancestors (its parent's file, the crate root), as `from → to`.
fn upward_imports(
    src: &str,
    files: &[(String, String)],
    allowed: &[(&str, &str, &str)],
) -> Vec<String> {
    let mut out = Vec::new();
    for (module, targets) in crate_graph(src, files, allowed) {
        for target in targets {
            let ancestor = target.is_empty() || module.starts_with(&format!("{target}::"));
            if ancestor {
                out.push(format!(
                    "{} → {}",
                    file_of(src, files, &module),
                    file_of(src, files, &target)
                ));
            }
        }
    }
    out
}

/// The source folders of the workspace's crates.
fn source_dirs(files: &[(String, String)]) -> BTreeSet<String> {
    files
        .iter()
        .filter_map(|(path, _)| {
            let at = path.find("/src/")?;
            Some(path[..at + "/src".len()].to_owned())
        })
        .collect()
}

/// Modules of one crate may not import each other in a circle: each file
/// has a job that the files it names do not depend back on, so it can be
/// read, tested and moved on its own.
#[test]
fn no_import_cycles_between_the_files_of_a_crate() {
    let files = source_files();
    let mut found = Vec::new();
    for src in source_dirs(&files) {
        found.extend(import_cycles(&src, &files, IMPORT_EXCEPTIONS));
    }
    assert!(
        found.is_empty(),
        "break these cycles (move what both sides share into a small leaf module): {found:#?}"
    );
}

/// In the engine, modules do not import upward (from their parent module's
/// file or the crate root): the root and each folder's `mod.rs` assemble
/// their children, and the children share what they need through leaf
/// modules beside them.
#[test]
fn no_module_of_the_engine_imports_upward() {
    let files = source_files();
    let upward = upward_imports("crates/kip-nexus/src", &files, IMPORT_EXCEPTIONS);
    assert!(
        upward.is_empty(),
        "these modules import from their parent (move what they share into a leaf module): {upward:#?}"
    );
}

#[test]
fn every_import_exception_is_still_a_reference() {
    let files = source_files();
    for (from, to, reason) in IMPORT_EXCEPTIONS {
        assert!(!reason.is_empty(), "{from} → {to}: give a reason");
        let src = source_dirs(&files)
            .into_iter()
            .find(|src| from.starts_with(&format!("{src}/")))
            .unwrap_or_default();
        let graph = import_graph(&src, &files);
        let referenced = graph.iter().any(|(m, targets)| {
            file_of(&src, &files, m) == *from
                && targets.iter().any(|t| file_of(&src, &files, t) == *to)
        });
        assert!(
            referenced,
            "{from} no longer names {to}: drop it from IMPORT_EXCEPTIONS"
        );
    }
}

#[test]
fn the_import_rules_fail_on_a_cycle_and_an_upward_import() {
    let file = |path: &str, text: &str| (format!("crates/a/src/{path}"), text.to_owned());
    let files = vec![
        file("lib.rs", "mod a;\nmod b;\npub struct Root;\n"),
        file("a.rs", "use crate::b::{B, c::C};\npub struct A;\n"),
        file("b/mod.rs", "pub mod c;\nuse super::a::A;\npub struct B;\n"),
        // `super::super` from an inline module reaches the crate root.
        file(
            "b/c.rs",
            "mod inner { use super::super::B; }\npub struct C;\n#[cfg(test)]\nmod tests { use crate::Root; }\n",
        ),
    ];
    let src = "crates/a/src";
    assert_eq!(
        import_cycles(src, &files, &[]),
        ["crates/a/src/a.rs → crates/a/src/b/mod.rs → crates/a/src/a.rs"]
    );
    let excused = [("crates/a/src/b/mod.rs", "crates/a/src/a.rs", "a reason")];
    assert!(import_cycles(src, &files, &excused).is_empty());
    assert_eq!(
        upward_imports(src, &files, &[]),
        ["crates/a/src/b/c.rs → crates/a/src/b/mod.rs"]
    );
}

// ------------------------------------------------------------------ the map

/// The file at `rel` (relative to the workspace), which a test below reads.
fn read(rel: &str) -> String {
    std::fs::read_to_string(workspace().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every `` `name` `` in `text`, in order.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The first cell of every row of the first table in `text` (a markdown
/// table: a header row, a `|---|` row, then the rows).
fn first_cells(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .skip_while(|line| !line.starts_with("|---"))
        .skip(1)
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| line.split('|').nth(1).map(str::to_owned))
        .collect()
}

/// The part of ARCHITECTURE.md under the heading `## {title}`, up to the
/// next heading of that level.
fn architecture_section(title: &str) -> String {
    let text = read("ARCHITECTURE.md");
    let heading = format!("\n## {title}\n");
    let start = text
        .find(&heading)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no section `## {title}`"))
        + heading.len();
    let rest = &text[start..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_owned()
}

/// The paragraph of ARCHITECTURE.md that starts with `label` (up to the
/// next blank line).
fn architecture_paragraph(label: &str) -> String {
    let text = read("ARCHITECTURE.md");
    let start = text
        .lines()
        .position(|line| line.starts_with(label))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no paragraph starting `{label}`"));
    let lines: Vec<&str> = text.lines().skip(start).collect();
    let end = lines
        .iter()
        .position(|l| l.trim().is_empty())
        .unwrap_or(lines.len());
    lines[..end].join("\n")
}

/// Asserts that the code and a document name the same things, saying what
/// each has that the other lacks.
fn same_names(what: &str, code: &[String], doc: &[String]) {
    let (mut code, mut doc) = (code.to_vec(), doc.to_vec());
    code.sort();
    doc.sort();
    let missing: Vec<&String> = code.iter().filter(|n| !doc.contains(n)).collect();
    let extra: Vec<&String> = doc.iter().filter(|n| !code.contains(n)).collect();
    assert!(
        code == doc,
        "{what}: the code has {missing:?} that the document does not list, the document lists {extra:?} that the code does not have (or lists a name twice)"
    );
}

/// The store's database names: the string constants of the `db_name`
/// module of `kip-store` (except `ALL`, the list of them).
fn database_names() -> Vec<String> {
    let text = read("crates/kip-store/src/lib.rs");
    let start = text.find("pub mod db_name {").expect(
        "crates/kip-store/src/lib.rs declares the database names in `pub mod db_name { … }`",
    );
    let body = &text[start..];
    let body = &body[..body.find("\n}").unwrap_or(body.len())];
    let names: Vec<String> = body
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("pub const ") && line.contains(": &str = \""))
        .filter_map(|line| line.split('"').nth(1).map(str::to_owned))
        .collect();
    assert!(!names.is_empty(), "no names found in `db_name`");
    names
}

/// ARCHITECTURE.md's storage table, and the table in `kip-store`'s crate
/// documentation, name exactly the databases the store declares.
#[test]
fn the_storage_tables_name_every_database() {
    let names = database_names();
    let map: Vec<String> = first_cells(&architecture_section("Storage layout"))
        .iter()
        .flat_map(|cell| backticked(cell))
        .collect();
    same_names(
        "ARCHITECTURE.md, section `Storage layout`, against kip-store's `db_name`",
        &names,
        &map,
    );
    let crate_doc: String = read("crates/kip-store/src/lib.rs")
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let documented: Vec<String> = first_cells(&crate_doc)
        .iter()
        .flat_map(|cell| backticked(cell))
        .collect();
    same_names(
        "kip-store's crate documentation (its table of databases) against `db_name`",
        &names,
        &documented,
    );
}

/// The MCP tools `kip mcp` serves: the definitions `kip_api::tools::all`
/// lists, each a function returning a `ToolDefinition` whose `name` is a
/// string literal.
fn mcp_tools() -> Vec<String> {
    let text = read("crates/kip-api/src/tools.rs");
    let start = text
        .find("pub fn all() -> Vec<ToolDefinition> {")
        .expect("crates/kip-api/src/tools.rs lists the tools in `pub fn all()`");
    let body = &text[start..];
    let body = &body[body.find('{').unwrap_or(0)..body.find("\n}").unwrap_or(body.len())];
    let functions: Vec<&str> = body
        .split("()")
        .filter_map(|part| {
            let name = part
                .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()?;
            (!name.is_empty() && name != "vec").then_some(name)
        })
        .collect();
    assert!(!functions.is_empty(), "no tools found in `tools::all`");
    functions
        .iter()
        .map(|f| {
            let signature = format!("pub fn {f}() -> ToolDefinition {{");
            let at = text
                .find(&signature)
                .unwrap_or_else(|| panic!("tools.rs has no `{signature}`"));
            let rest = &text[at..];
            let name = rest
                .find("name: \"")
                .map(|i| &rest[i + "name: \"".len()..])
                .and_then(|r| r.split('"').next())
                .unwrap_or_else(|| panic!("`{f}` sets no `name: \"…\"`"));
            name.to_owned()
        })
        .collect()
}

/// The MCP resources `kip mcp` lists: each `Resource::new(tools::CONST, …)`
/// of `kip-cli`'s `mcp.rs`, with the URI that constant holds in `tools.rs`.
fn mcp_resources() -> Vec<String> {
    let mcp = read("crates/kip-cli/src/mcp.rs");
    let tools = read("crates/kip-api/src/tools.rs");
    let uris: Vec<String> = mcp
        .match_indices("Resource::new(tools::")
        .map(|(i, m)| {
            let rest = &mcp[i + m.len()..];
            let constant = &rest[..rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())];
            let declaration = format!("pub const {constant}: &str = \"");
            let at = tools
                .find(&declaration)
                .unwrap_or_else(|| panic!("tools.rs has no `{declaration}…\"`"));
            tools[at + declaration.len()..]
                .split('"')
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert!(!uris.is_empty(), "no `Resource::new(tools::…)` in mcp.rs");
    uris
}

/// The MCP tools and resources ARCHITECTURE.md lists are those `kip mcp`
/// serves.
#[test]
fn the_mcp_lists_name_what_kip_mcp_serves() {
    same_names(
        "ARCHITECTURE.md's `MCP tools:` against `kip_api::tools::all`",
        &mcp_tools(),
        &backticked(&architecture_paragraph("MCP tools:")),
    );
    same_names(
        "ARCHITECTURE.md's `MCP resources:` against the resources of `kip mcp`",
        &mcp_resources(),
        &backticked(&architecture_paragraph("MCP resources:")),
    );
}
