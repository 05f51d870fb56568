//! `kip exec` and `kip import` on a real nexus folder, including several
//! processes writing to the same nexus at once.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kip(db: &Path, args: &[&str]) -> Output {
    Command::new(kip_e2e::kip_bin())
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .expect("kip runs")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../capsules/examples")
}

#[test]
fn exec_prints_the_response_and_exits_by_outcome() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = kip(dir.path(), &["exec", "DESCRIBE PRIMER"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json(&out)["result"]["identity"]["name"], "$self");

    let out = kip(
        dir.path(),
        &["exec", r#"FIND(?x) WHERE { ?x {type: "Persn"} }"#],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json(&out)["error"]["code"], "KIP_2001");

    let out = kip(
        dir.path(),
        &[
            "exec",
            r#"FIND(?p.name) WHERE { ?p {type: "Person", name: :n} }"#,
            "--params",
            r#"{"n": "$system"}"#,
        ],
    );
    assert_eq!(json(&out)["result"], serde_json::json!(["$system"]));

    let out = kip(dir.path(), &["exec", "DESCRIBE PRIMER", "--params", "[1]"]);
    assert_eq!(out.status.code(), Some(2), "--params must be an object");

    let out = kip(
        dir.path(),
        &[
            "exec",
            r#"UPSERT { CONCEPT { {type: "Person", name: "Ada"} SET ATTRIBUTES { person_class: "Human" } } }"#,
            "--dry-run",
        ],
    );
    assert_eq!(json(&out)["result"]["dry_run"], true);
    let out = kip(
        dir.path(),
        &["exec", r#"FIND(COUNT(?p)) WHERE { ?p {type: "Person"} }"#],
    );
    assert_eq!(json(&out)["result"], 2, "the dry run wrote nothing");
}

#[test]
fn exec_takes_a_whole_request_from_a_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let request = dir.path().join("request.json");
    std::fs::write(&request, r#"{"commands": ["DESCRIBE DOMAINS", {"command": "SEARCH CONCEPT :t", "parameters": {"t": "system"}}]}"#).expect("write");
    let db = dir.path().join("nexus");
    let out = kip(
        &db,
        &["exec", "--request", request.to_str().expect("utf-8")],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let r = json(&out);
    assert_eq!(r["result"][0]["result"][0]["name"], "CoreSchema");
    // RC11's Genesis has a `System` domain: its exact name ranks first.
    assert_eq!(r["result"][1]["result"][0]["type"], "Domain");
    assert_eq!(r["result"][1]["result"][0]["name"], "System");
    assert_eq!(r["result"][1]["result"][1]["name"], "$system");
}

#[test]
fn import_reports_per_file_and_applies_nothing_from_a_broken_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("nexus");
    let out = kip(&db, &["import", examples().to_str().expect("utf-8")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let broken = dir.path().join("broken.kip");
    std::fs::write(&broken, "UPSERT {\n  CONCEPT { {type: \"Drug\", name: \"New\"} }\n  CONCEPT { {type: \"Drugg\", name: \"Other\"} }\n}\n").expect("write");
    let out = kip(&db, &["import", broken.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("a report line")).expect("JSON");
    assert_eq!(report["status"], "failed");
    assert_eq!(report["errors"][0]["code"], "KIP_2001");
    assert_eq!(report["errors"][0]["data"]["line"], 3);
    let out = kip(
        &db,
        &[
            "exec",
            r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug", name: "New"} }"#,
        ],
    );
    assert_eq!(json(&out)["result"], 0);
}

#[test]
fn several_processes_writing_at_once_lose_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("nexus");
    let out = kip(
        &db,
        &[
            "exec",
            r#"UPSERT { CONCEPT { {type: "$ConceptType", name: "Note"} SET ATTRIBUTES { description: "n" } } }"#,
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..8 {
                    let text = format!(r#"UPSERT {{ CONCEPT {{ {{type: "Note", name: "w{w}-{i}"}} SET ATTRIBUTES {{ n: {i} }} }} }}"#);
                    let out = kip(&db, &["exec", &text]);
                    common::assert_exited_ok(&out);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let out = kip(
        &db,
        &[
            "exec",
            r#"FIND(COUNT(?n), SUM(?n.attributes.n)) WHERE { ?n {type: "Note"} }"#,
        ],
    );
    assert_eq!(json(&out)["result"], serde_json::json!([32, 4 * 28]));
}

#[test]
fn check_store_sizes_accounts_for_every_database_and_page() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = kip(dir.path(), &["check-store", "--sizes"]);
    // No nexus there yet: refused, and none created.
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a nexus"));
    assert!(!dir.path().join("data.mdb").exists());

    let out = kip(dir.path(), &["exec", "DESCRIBE PRIMER"]);
    assert_eq!(out.status.code(), Some(0));
    let out = kip(dir.path(), &["check-store", "--sizes"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sizes = json(&out);
    let page = sizes["page_size"].as_u64().expect("page size");
    let databases = sizes["databases"].as_array().expect("databases");
    // The 27 of ARCHITECTURE.md's storage table (with `vectors`, `vector_backlog`, `vector_codes`).
    assert_eq!(databases.len(), 27, "{sizes:#}");
    let mut held = 0;
    for d in databases {
        let pages = ["branch_pages", "leaf_pages", "overflow_pages"]
            .iter()
            .map(|k| d[k].as_u64().expect("pages"))
            .sum::<u64>();
        assert_eq!(d["bytes"].as_u64(), Some(pages * page), "{d:#}");
        held += pages * page;
    }
    let concepts = databases
        .iter()
        .find(|d| d["database"] == "concepts")
        .expect("concepts");
    // Genesis wrote its concepts, and their records have bytes.
    assert!(concepts["entries"].as_u64() > Some(0), "{concepts:#}");
    assert!(concepts["value_bytes"].as_u64() > Some(0), "{concepts:#}");
    assert_eq!(
        sizes["used_bytes"].as_u64(),
        Some(held + sizes["other_bytes"].as_u64().expect("other")),
        "{sizes:#}"
    );
    assert!(sizes["file_bytes"].as_u64() >= sizes["used_bytes"].as_u64());
}

/// BRIEF §5: `kip exec --idempotency-key K` applies a write once; the
/// repeat prints the first response; the key with another command is
/// refused (exit 1, the error JSON).
#[test]
fn exec_with_an_idempotency_key_applies_a_write_once() {
    let db = tempfile::tempdir().expect("temp dir");
    let seed = kip(
        db.path(),
        &[
            "exec",
            "UPSERT { CONCEPT ?d { {type: \"Domain\", name: \"Visits\"} SET ATTRIBUTES { visits: 0 } } }",
        ],
    );
    assert!(seed.status.success(), "{seed:?}");
    let add = "UPDATE ?d SET ATTRIBUTES { visits: ADD(?d.attributes.visits, 1) } WHERE { ?d {type: \"Domain\", name: \"Visits\"} }";
    let first = kip(db.path(), &["exec", add, "--idempotency-key", "cli-1"]);
    let again = kip(db.path(), &["exec", add, "--idempotency-key", "cli-1"]);
    assert!(
        first.status.success() && again.status.success(),
        "{again:?}"
    );
    assert_eq!(json(&first), json(&again));
    let visits = kip(
        db.path(),
        &[
            "exec",
            "FIND(?d.attributes.visits) WHERE { ?d {type: \"Domain\", name: \"Visits\"} }",
        ],
    );
    assert_eq!(json(&visits)["result"], serde_json::json!([1]));
    let other = kip(
        db.path(),
        &["exec", "DESCRIBE PRIMER", "--idempotency-key", "cli-1"],
    );
    assert_eq!(other.status.code(), Some(1));
    assert_eq!(json(&other)["error"]["code"], "API_BAD_REQUEST");
}

fn official(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/kip-rc11-official")
        .join(name)
        .display()
        .to_string()
}

/// BRIEF §3, the owner's authority: the official RC11 Genesis and personas
/// change the protected scope, so every client is refused (`KIP_3004`) but
/// `kip import --owner` applies them, traced as the owner's; afterwards an
/// ordinary client is still refused.
#[test]
fn the_owner_applies_the_official_genesis_and_personas_that_every_client_is_refused() {
    let db = tempfile::tempdir().expect("temp dir");
    let genesis = official("Genesis.kip");
    let refused = kip(db.path(), &["import", &genesis]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert_eq!(json(&refused)["errors"][0]["code"], "KIP_3004");
    let (persona, system) = (official("persons/self.kip"), official("persons/system.kip"));
    let refused = kip(db.path(), &["import", &persona]);
    assert_eq!(json(&refused)["errors"][0]["code"], "KIP_3004");

    let owned = kip(
        db.path(),
        &["import", "--owner", &genesis, &persona, &system],
    );
    assert!(owned.status.success(), "{owned:?}");
    let reports: Vec<serde_json::Value> = String::from_utf8_lossy(&owned.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON report"))
        .collect();
    assert_eq!(reports.len(), 3);
    assert!(
        reports.iter().all(|r| r["status"] == "imported"),
        "{reports:?}"
    );
    let id = kip(
        db.path(),
        &[
            "exec",
            "FIND(?s.attributes.id) WHERE { ?s {type: \"Person\", name: \"$self\"} }",
        ],
    );
    // The persona file's own id (a placeholder a deployment replaces).
    assert_eq!(json(&id)["result"], serde_json::json!(["uuc56-gyb"]));

    // Traced as the owner's, one entry per file.
    let traced = kip(db.path(), &["trace", "list", "--tag", "OwnerAuthority"]);
    assert_eq!(String::from_utf8_lossy(&traced.stdout).lines().count(), 3);
    // Every other client keeps meeting the protected scope.
    let agent = kip(
        db.path(),
        &[
            "exec",
            "UPSERT { CONCEPT ?t { {type: \"$ConceptType\", name: \"$ConceptType\"} SET ATTRIBUTES { description: \"mine\" } } }",
        ],
    );
    assert_eq!(json(&agent)["error"]["code"], "KIP_3004");

    // Reverting an owner's write to the protected scope takes the owner's
    // authority too: `kip trace revert` (the operation every face shares)
    // is refused, `--owner` puts the persona's id back.
    let persona_entry = String::from_utf8_lossy(&traced.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("an entry"))
        .find(|e| {
            e["data"]["command"]
                .as_str()
                .is_some_and(|c| c.contains("uuc56-gyb"))
        })
        .expect("the persona's entry")["id"]
        .as_str()
        .expect("an id")
        .to_owned();
    let refused = kip(db.path(), &["trace", "revert", &persona_entry]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert_eq!(json(&refused)["error"]["code"], "KIP_3004");
    assert!(
        json(&refused)["error"]["hint"]
            .as_str()
            .is_some_and(|h| h.contains("--owner"))
    );
    let reverted = kip(db.path(), &["trace", "revert", &persona_entry, "--owner"]);
    assert!(reverted.status.success(), "{reverted:?}");
    let id = kip(
        db.path(),
        &[
            "exec",
            "FIND(?s.attributes.id) WHERE { ?s {type: \"Person\", name: \"$self\"} }",
        ],
    );
    assert_ne!(json(&id)["result"], serde_json::json!(["uuc56-gyb"]));
}

/// BRIEF §3 / §5: `kip init --profile memory` creates a nexus with the RC11
/// cognitive memory profile; running it again keeps the nexus and changes
/// nothing; the official RC11 README's order then imports on top of it
/// (Genesis and the personas as the owner, the profile capsules as any
/// client), and agents still meet the protected scope.
#[test]
fn kip_init_creates_a_nexus_with_the_memory_profile_that_the_official_capsules_import_into() {
    let db = tempfile::tempdir().expect("temp dir");
    let nexus = db.path().join("nexus");
    let first = kip(&nexus, &["init", "--profile", "memory"]);
    assert!(first.status.success(), "{first:?}");
    let first = json(&first);
    assert_eq!(first["created"], true);
    assert_eq!(first["profile"]["profile"]["installed"], true, "{first:#}");
    let types = kip(
        &nexus,
        &[
            "exec",
            "FIND(?t.name) WHERE { ?t {type: \"$ConceptType\", name: \"SleepTask\"} }",
        ],
    );
    assert_eq!(json(&types)["result"], serde_json::json!(["SleepTask"]));
    let again = json(&kip(&nexus, &["init", "--profile", "memory"]));
    assert_eq!(again["created"], false);
    let changed: Vec<&serde_json::Value> = again["profile"]["reports"]
        .as_array()
        .expect("reports")
        .iter()
        .filter(|r| {
            r["stats"]
                .as_object()
                .is_some_and(|s| s.values().any(|n| n != 0))
        })
        .collect();
    assert!(changed.is_empty(), "{changed:#?}");
    let unknown = kip(&nexus, &["init", "--profile", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
    // A nexus full of data: the examples, then the official capsules.
    let data = kip(&nexus, &["import", &examples().display().to_string()]);
    assert!(data.status.success(), "{data:?}");

    // The official capsules, in their README's order.
    let official_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/kip-rc11-official");
    let owned = kip(
        &nexus,
        &[
            "import",
            "--owner",
            &official("Genesis.kip"),
            &official("persons/self.kip"),
            &official("persons/system.kip"),
        ],
    );
    assert!(owned.status.success(), "{owned:?}");
    let profile: Vec<String> = [
        "Person.kip",
        "Event.kip",
        "Preference.kip",
        "Insight.kip",
        "Commitment.kip",
        "SleepTask.kip",
        "Experience.kip",
        "ExperienceStep.kip",
        "Skill.kip",
        "has_step.kip",
        "caused_by.kip",
        "derived_insight.kip",
        "compiled_to.kip",
        "involves.kip",
        "mentions.kip",
        "consolidated_to.kip",
        "derived_from.kip",
    ]
    .iter()
    .map(|f| official_dir.join(f).display().to_string())
    .collect();
    let mut args = vec!["import"];
    args.extend(profile.iter().map(String::as_str));
    let client = kip(&nexus, &args);
    assert!(client.status.success(), "{client:?}");
    let agent = kip(
        &nexus,
        &[
            "exec",
            "UPSERT { CONCEPT ?s { {type: \"Person\", name: \"$self\"} SET ATTRIBUTES { core_directives: [] } } }",
        ],
    );
    assert_eq!(json(&agent)["error"]["code"], "KIP_3004");
}

/// Issue 31 §3: `kip duplicates` lists candidate pairs as JSON Lines (`a`,
/// `b`, `score`, `reasons`), best first; `kip duplicates dismiss ID ID`
/// keeps a pair away; a bad id is a KIP error (exit 1).
#[test]
fn kip_duplicates_lists_candidates_and_remembers_a_dismissal() {
    let db = tempfile::tempdir().expect("temp dir");
    let capsule = db.path().join("dupes.kip");
    std::fs::write(
        &capsule,
        r#"UPSERT {
            CONCEPT ?t { {type: "$ConceptType", name: "Drug"} SET ATTRIBUTES { description: "A medicine." } }
            CONCEPT ?a { {type: "Drug", name: "Ibuprofen"} }
            CONCEPT ?b { {type: "Drug", name: "IBUPROFEN "} }
            CONCEPT ?c { {type: "Drug", name: "Naproxen"} }
        }"#,
    )
    .expect("written");
    let nexus = db.path().join("nexus");
    assert!(
        kip(&nexus, &["import", capsule.to_str().expect("path")])
            .status
            .success()
    );
    let listed = kip(&nexus, &["duplicates", "--type", "Drug"]);
    assert!(listed.status.success(), "{listed:?}");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert_eq!(lines[0]["a"]["name"], "Ibuprofen");
    assert_eq!(lines[0]["b"]["name"], "IBUPROFEN ");
    assert!(
        lines[0]["score"]
            .as_f64()
            .is_some_and(|s| s > 0.5 && s <= 1.0)
    );
    assert!(!lines[0]["reasons"].as_array().expect("reasons").is_empty());
    let (a, b) = (
        lines[0]["a"]["id"].as_str().expect("id"),
        lines[0]["b"]["id"].as_str().expect("id"),
    );
    let dismissed = kip(&nexus, &["duplicates", "dismiss", a, b]);
    assert!(dismissed.status.success(), "{dismissed:?}");
    let again = kip(&nexus, &["duplicates"]);
    assert!(again.stdout.is_empty(), "{again:?}");
    let bad = kip(&nexus, &["duplicates", "dismiss", "P:1", b]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(json(&bad)["error"]["code"], "KIP_1001");
}

#[test]
fn kip_schema_map_prints_the_memorys_shape() {
    let db = tempfile::tempdir().expect("temp dir");
    let nexus = db.path().join("nexus");
    let examples = examples();
    assert!(
        kip(&nexus, &["import", examples.to_str().expect("path")])
            .status
            .success()
    );
    let out = kip(&nexus, &["schema", "--map", "--hubs", "3"]);
    assert!(out.status.success(), "{out:?}");
    let map = json(&out);
    let types = map["types"].as_array().expect("types");
    let drugs = types.iter().find(|t| t["name"] == "Drug").expect("Drug");
    assert!(drugs["count"].as_u64().is_some_and(|n| n > 0));
    assert!(
        !types
            .iter()
            .any(|t| { t["name"].as_str().is_some_and(|n| n.starts_with('$')) })
    );
    let edges = map["edges"].as_array().expect("edges");
    assert!(
        edges.iter().any(|e| e["subject_type"] == "Drug"
            && e["predicate"] == "treats"
            && e["object_type"] == "Symptom"),
        "{edges:#?}"
    );
    assert_eq!(map["hubs"].as_array().expect("hubs").len(), 3);
    // --hubs belongs to --map.
    let bad = kip(&nexus, &["schema", "--hubs", "3"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}

/// Issue 31 §4: `kip contradictions` prints the contradictions as a JSON
/// array with each side's provenance; `kip contradictions resolve --keep
/// --retire --dry-run` previews and changes nothing, without `--dry-run`
/// it marks the other side superseded (one traced write), after which the
/// list is empty; a bad id is a KIP error (exit 1).
#[test]
fn kip_contradictions_lists_a_functional_predicates_two_objects_and_resolves_one() {
    let db = tempfile::tempdir().expect("temp dir");
    let capsule = db.path().join("born.kip");
    std::fs::write(
        &capsule,
        r#"UPSERT {
            CONCEPT ?t { {type: "$ConceptType", name: "Place"} SET ATTRIBUTES { description: "A place." } }
            CONCEPT ?p { {type: "$PropositionType", name: "born_in"} SET ATTRIBUTES { description: "Birthplace.", subject_types: ["Person"], object_types: ["Place"], functional: true } }
            CONCEPT ?paris { {type: "Place", name: "Paris"} }
            CONCEPT ?lyon { {type: "Place", name: "Lyon"} }
            CONCEPT ?ada { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("born_in", ?paris), ("born_in", ?lyon) } }
        } WITH METADATA { source: "letters", author: "archivist" }"#,
    )
    .expect("written");
    let nexus = db.path().join("nexus");
    let imported = kip(&nexus, &["import", capsule.to_str().expect("path")]);
    assert!(imported.status.success(), "{imported:?}");
    let listed = kip(&nexus, &["contradictions", "--type", "Person"]);
    assert!(listed.status.success(), "{listed:?}");
    let list = json(&listed);
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list:#}");
    let c = &list[0];
    assert_eq!(c["subject"]["name"], "Ada");
    assert_eq!(c["predicate"], "born_in");
    assert_eq!(c["sides"][0]["source"], "letters");
    assert_eq!(c["sides"][1]["author"], "archivist");
    let (keep, retire) = (
        c["sides"][0]["id"].as_str().expect("id"),
        c["sides"][1]["id"].as_str().expect("id"),
    );
    let resolve = |extra: &[&str]| {
        let mut args = vec![
            "contradictions",
            "resolve",
            "--keep",
            keep,
            "--retire",
            retire,
        ];
        args.extend(extra);
        kip(&nexus, &args)
    };
    let preview = resolve(&["--dry-run", "--reason", "The letters say Paris."]);
    assert!(preview.status.success(), "{preview:?}");
    assert_eq!(json(&preview)["dry_run"], true);
    assert_eq!(
        json(&kip(&nexus, &["contradictions"]))
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let applied = resolve(&["--reason", "The letters say Paris."]);
    assert!(applied.status.success(), "{applied:?}");
    assert_eq!(
        json(&kip(&nexus, &["contradictions"])),
        serde_json::json!([])
    );
    let old = kip(
        &nexus,
        &[
            "exec",
            &format!("FIND(?l) WHERE {{ ?l (id: \"{retire}\") }}"),
        ],
    );
    let metadata = &json(&old)["result"][0]["metadata"];
    assert_eq!(metadata["superseded"], true, "{old:?}");
    assert_eq!(metadata["superseded_by"], keep);
    assert_eq!(metadata["superseded_reason"], "The letters say Paris.");
    let bad = kip(
        &nexus,
        &[
            "contradictions",
            "resolve",
            "--keep",
            "C:1",
            "--retire",
            retire,
        ],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(json(&bad)["error"]["code"], "KIP_1001");
}
