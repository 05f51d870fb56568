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
    ("kip-nexus", &["kip-lang", "kip-store"]),
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

/// The code of a file with `//` comments and the contents of string
/// literals removed (comments and messages may name anything; code may
/// not). Good enough for the scans below, not a Rust lexer: a `"` inside a
/// char literal is the one case it does not handle, and the scans do not
/// meet it.
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            'r' if chars.peek() == Some(&'#') => {
                // A raw string r#"…"# (one or more #).
                let mut hashes = 0;
                while chars.peek() == Some(&'#') {
                    chars.next();
                    hashes += 1;
                }
                if chars.peek() != Some(&'"') {
                    out.push('r');
                    out.extend(std::iter::repeat_n('#', hashes));
                    continue;
                }
                chars.next();
                out.push_str("\"\"");
                let mut run = None;
                for c in chars.by_ref() {
                    run = match (c, run) {
                        ('"', _) => Some(0),
                        ('#', Some(n)) => Some(n + 1),
                        _ => None,
                    };
                    if run == Some(hashes) {
                        break;
                    }
                }
            }
            '"' => {
                out.push_str("\"\"");
                let mut escaped = false;
                for c in chars.by_ref() {
                    match (c, escaped) {
                        ('\\', false) => escaped = true,
                        ('"', false) => break,
                        _ => escaped = false,
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
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
/// `bulk.rs`, `lib.rs`), the
/// cognitive trace (`trace/`, its own databases). The
/// query planner and executor, META, explain and everything else see the
/// graph through `graph::Graph` and may name only the id types.
#[test]
fn only_the_storage_facing_modules_of_the_engine_use_kip_store() {
    let facing = [
        "crates/kip-nexus/src/graph.rs",
        "crates/kip-nexus/src/kml/",
        "crates/kip-nexus/src/search.rs",
        "crates/kip-nexus/src/genesis.rs",
        "crates/kip-nexus/src/run.rs",
        "crates/kip-nexus/src/write.rs",
        "crates/kip-nexus/src/bulk.rs",
        "crates/kip-nexus/src/lib.rs",
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
            if code.contains("pest::") && p != "crates/kip-lang/src/parser.rs" {
                offenders.push(format!("{p}: pest"));
            }
            if code.contains("heed::") && !p.starts_with("crates/kip-store/") {
                offenders.push(format!("{p}: heed"));
            }
            let unsafe_allowed = ["crates/kip-store/src/env.rs", "crates/kip-cli/src/alloc.rs"];
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
    let mut offenders = Vec::new();
    let mut stack = vec![workspace().join("ui/src")];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let p = rel(path.strip_prefix(workspace()).unwrap_or(&path));
            if p.starts_with("ui/src/transport/") {
                continue;
            }
            if std::fs::read_to_string(&path).is_ok_and(|t| t.contains("@tauri-apps/")) {
                offenders.push(p);
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
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
