//! What the curator's desk relies on (issue 15): a dry run's `changes`
//! list, Primer counts equal to `COUNT` queries, and SEARCH for a single
//! CJK character.

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};

use crate::common;
use common::{examples_dir, fixture};

#[track_caller]
fn ok(nexus: &Nexus, command: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(command), &Context::default());
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

#[track_caller]
fn preview(nexus: &Nexus, command: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(command).dry_run(), &Context::default());
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

fn find(changes: &Json, f: impl Fn(&Json) -> bool) -> &Json {
    changes
        .as_array()
        .expect("a changes list")
        .iter()
        .find(|c| f(c))
        .unwrap_or_else(|| panic!("no such change in {changes:#}"))
}

// ---------------------------------------------------------------- dry-run changes

#[test]
fn a_dry_run_lists_each_created_and_updated_element_with_names_and_states() {
    let (_d, nexus) = fixture();
    let r = preview(
        &nexus,
        r#"UPSERT {
            CONCEPT ?n { {type: "Drug", name: "Newdrug"} SET ATTRIBUTES { risk_level: 1 }
                SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) } }
            CONCEPT { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 3 } }
        } WITH METADATA { source: "test" }"#,
    );
    assert_eq!(r["dry_run"], true);
    let changes = &r["changes"];
    assert_eq!(changes.as_array().map(Vec::len), Some(3), "{changes:#}");

    let created = find(changes, |c| c["name"] == "Newdrug");
    assert_eq!(created["op"], "created");
    assert_eq!(created["kind"], "concept");
    assert_eq!(created["type"], "Drug");
    assert!(created["id"].as_str().is_some_and(|i| i.starts_with("C:")));
    assert!(created.get("before").is_none());
    assert_eq!(created["after"]["attributes"], json!({"risk_level": 1}));
    assert_eq!(created["after"]["metadata"]["source"], "test");

    let updated = find(changes, |c| c["name"] == "Aspirin");
    assert_eq!(updated["op"], "updated");
    assert_eq!(updated["before"]["attributes"]["risk_level"], 2);
    assert_eq!(updated["after"]["attributes"]["risk_level"], 3);
    assert_eq!(
        updated["before"]["attributes"]["molecular_formula"],
        updated["after"]["attributes"]["molecular_formula"]
    );

    let link = find(changes, |c| c["kind"] == "proposition");
    assert_eq!(link["op"], "created");
    assert_eq!(link["predicate"], "treats");
    assert_eq!(link["subject"]["name"], "Newdrug");
    assert_eq!(link["subject"]["type"], "Drug");
    assert_eq!(link["subject"]["id"], created["id"]);
    assert_eq!(link["object"]["name"], "Headache");
    assert_eq!(link["object"]["type"], "Symptom");
    assert!(link["id"].as_str().is_some_and(|i| i.starts_with("P:")));
}

#[test]
fn a_dry_run_of_a_delete_lists_the_cascade_with_before_images() {
    let (_d, nexus) = fixture();
    let r = preview(
        &nexus,
        r#"DELETE CONCEPT ?d DETACH WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let changes = r["changes"].as_array().expect("changes");
    assert_eq!(
        changes.len(),
        7,
        "Aspirin, its 5 links and the link about one"
    );
    assert!(
        changes
            .iter()
            .all(|c| c["op"] == "deleted" && c.get("after").is_none())
    );
    let concept = find(&r["changes"], |c| c["kind"] == "concept");
    assert_eq!(concept["name"], "Aspirin");
    assert_eq!(concept["before"]["attributes"]["risk_level"], 2);
    let treats = find(&r["changes"], |c| {
        c["predicate"] == "treats" && c["object"]["name"] == "Headache"
    });
    assert_eq!(treats["subject"]["name"], "Aspirin");

    let r = preview(
        &nexus,
        r#"DELETE ATTRIBUTES {"risk_level"} FROM ?d WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let c = &r["changes"][0];
    assert_eq!(c["op"], "updated");
    assert_eq!(c["before"]["attributes"]["risk_level"], 2);
    assert!(c["after"]["attributes"].get("risk_level").is_none());
}

#[test]
fn a_repeated_write_previews_no_changes_and_a_commit_returns_none() {
    let (_d, nexus) = fixture();
    let capsule =
        std::fs::read_to_string(examples_dir().join("12_cognizine.kip")).expect("capsule");
    assert_eq!(preview(&nexus, &capsule)["changes"], json!([]));
    // A committed write's result keeps its shape: no `changes`.
    let r = ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Newdrug"} } }"#,
    );
    assert!(r.get("changes").is_none(), "{r:#}");
    assert!(r.get("dry_run").is_none(), "{r:#}");
}

#[test]
fn an_element_created_then_updated_in_one_command_is_one_created_change() {
    let (_d, nexus) = fixture();
    let r = preview(
        &nexus,
        r#"UPSERT {
            CONCEPT ?n { {type: "Drug", name: "Newdrug"} SET ATTRIBUTES { risk_level: 1 } }
            CONCEPT { {type: "Drug", name: "Newdrug"} SET ATTRIBUTES { risk_level: 2 } }
        }"#,
    );
    let changes = r["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 1, "{changes:#?}");
    assert_eq!(changes[0]["op"], "created");
    assert_eq!(changes[0]["after"]["attributes"]["risk_level"], 2);
}

// ---------------------------------------------------------------- the Primer's counts

/// UPDATE and MERGE (RC9–RC10) are writes like UPSERT: their preview lists
/// every element they change, before → after.
#[test]
fn a_dry_run_of_update_and_merge_lists_each_changed_element() {
    let (_d, nexus) = fixture();
    let r = preview(
        &nexus,
        r#"UPDATE ?d SET ATTRIBUTES { risk_level: ADD(?d.attributes.risk_level, 1) } WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    let aspirin = find(&r["changes"], |c| c["name"] == "Aspirin");
    assert_eq!(aspirin["op"], "updated");
    let before = aspirin["before"]["attributes"]["risk_level"]
        .as_f64()
        .expect("before");
    let after = aspirin["after"]["attributes"]["risk_level"]
        .as_f64()
        .expect("after");
    assert_eq!(after, before + 1.0, "{aspirin:#}");

    ok(
        &nexus,
        r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Asprin"} SET ATTRIBUTES { risk_level: 2 } SET PROPOSITIONS { ("treats", {type: "Symptom", name: "Headache"}) } } }"#,
    );
    let r = preview(
        &nexus,
        r#"MERGE CONCEPT ?s INTO ?t WHERE { ?s {type: "Drug", name: "Asprin"} ?t {type: "Drug", name: "Aspirin"} }"#,
    );
    let changes = &r["changes"];
    assert_eq!(
        find(changes, |c| c["name"] == "Asprin")["op"],
        "deleted",
        "{changes:#}"
    );
    let target = find(changes, |c| c["name"] == "Aspirin");
    assert_eq!(target["op"], "updated");
    assert!(
        target["after"]["attributes"]["aliases"]
            .to_string()
            .contains("Asprin"),
        "{target:#}"
    );
    // The source's link was repointed to (or folded into) the target's.
    assert!(
        changes
            .as_array()
            .expect("list")
            .iter()
            .any(|c| c["kind"] == "proposition"),
        "{changes:#}"
    );
}

fn count(nexus: &Nexus, query: &str) -> Json {
    ok(nexus, query)
}

#[test]
fn primer_counts_equal_count_queries() {
    let (_d, nexus) = fixture();
    // A concept of a key type that is not linked to its domain still counts.
    ok(
        &nexus,
        r#"UPSERT { CONCEPT { {type: "Drug", name: "Unlinked"} } }"#,
    );
    let primer = ok(&nexus, "DESCRIBE PRIMER");
    let domains = primer["domain_map"].as_array().expect("domains");
    assert!(!domains.is_empty());
    for d in domains {
        let name = d["domain"].as_str().expect("name");
        let mut sum = 0;
        for t in d["key_concept_types"].as_array().expect("types") {
            let t = t.as_str().expect("type");
            let n = count(
                &nexus,
                &format!(r#"FIND(COUNT(?x)) WHERE {{ ?x {{type: "{t}"}} }}"#),
            );
            assert_eq!(d["counts"]["by_type"][t], n, "{name}/{t}: {d:#}");
            sum += n.as_u64().expect("a count");
        }
        assert_eq!(d["counts"]["concepts"], sum, "{name}: {d:#}");
        let members = count(
            &nexus,
            &format!(
                r#"FIND(COUNT(?x)) WHERE {{ (?x, "belongs_to_domain", {{type: "Domain", name: "{name}"}}) }}"#
            ),
        );
        assert_eq!(d["counts"]["members"], members, "{name}: {d:#}");
        // The members by type add up to the members, and each type's
        // number is what a COUNT over the domain's members of it says.
        let member_types = d["counts"]["member_types"]
            .as_object()
            .expect("member_types");
        let mut by_member_type = 0;
        for (t, n) in member_types {
            let q = count(
                &nexus,
                &format!(
                    r#"FIND(COUNT(?x)) WHERE {{ ?x {{type: "{t}"}} (?x, "belongs_to_domain", {{type: "Domain", name: "{name}"}}) }}"#
                ),
            );
            assert_eq!(*n, q, "{name}/{t}: {d:#}");
            by_member_type += n.as_u64().expect("a count");
        }
        assert_eq!(members.as_u64(), Some(by_member_type), "{name}: {d:#}");
    }
    let medical = domains
        .iter()
        .find(|d| d["domain"] == "Medical")
        .expect("Medical");
    assert_eq!(
        medical["counts"]["by_type"]["Drug"],
        count(&nexus, r#"FIND(COUNT(?d)) WHERE { ?d {type: "Drug"} }"#)
    );
}

/// Issue 33 §1: an agent's own domain, whose types are all defined in
/// `CoreSchema`, was shown as holding nothing.
#[test]
fn primer_counts_a_domain_by_its_members_not_by_its_types_home() {
    let (_d, nexus) = fixture();
    ok(
        &nexus,
        r#"UPSERT {
            CONCEPT ?rel { {type: "Domain", name: "Relationships"} }
            CONCEPT { {type: "Person", name: "Ada"} SET PROPOSITIONS { ("belongs_to_domain", ?rel) } }
            CONCEPT { {type: "Person", name: "Bob"} SET PROPOSITIONS { ("belongs_to_domain", ?rel) } }
            CONCEPT { {type: "Event", name: "Ada meets Bob"} SET PROPOSITIONS { ("belongs_to_domain", ?rel) } }
        }"#,
    );
    let primer = ok(&nexus, "DESCRIBE PRIMER");
    let domains = primer["domain_map"].as_array().expect("domains");
    let rel = domains
        .iter()
        .find(|d| d["domain"] == "Relationships")
        .expect("Relationships");
    assert_eq!(rel["counts"]["members"], 3, "{rel:#}");
    assert_eq!(
        rel["counts"]["member_types"],
        json!({"Person": 2, "Event": 1}),
        "{rel:#}"
    );
    // The types' home domain keeps them: Relationships defines no type.
    assert_eq!(rel["key_concept_types"], json!([]), "{rel:#}");
    let core = domains
        .iter()
        .find(|d| d["domain"] == "CoreSchema")
        .expect("CoreSchema");
    assert!(
        core["key_concept_types"]
            .as_array()
            .expect("types")
            .iter()
            .any(|t| t == "Person"),
        "{core:#}"
    );
}

// ---------------------------------------------------------------- SEARCH, one CJK character

fn chinese() -> (tempfile::TempDir, Nexus) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    ok(
        &nexus,
        r#"UPSERT {
            CONCEPT ?t { {type: "$ConceptType", name: "Formula"} SET ATTRIBUTES { description: "方剂" } }
            CONCEPT { {type: "Formula", name: "麻黄汤"} SET ATTRIBUTES { description: "发汗解表" } }
            CONCEPT { {type: "Formula", name: "桂枝汤"} SET ATTRIBUTES { description: "解肌发表" } }
            CONCEPT { {type: "Formula", name: "汤剂总论"} SET ATTRIBUTES { description: "剂型" } }
            CONCEPT { {type: "Formula", name: "小青龙"} SET ATTRIBUTES { description: "本方以麻黄汤为基础" } }
            CONCEPT { {type: "Formula", name: "汤"} }
        }"#,
    );
    (dir, nexus)
}

fn names(hits: &Json) -> Vec<&str> {
    hits.as_array()
        .expect("hits")
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect()
}

#[test]
fn one_cjk_character_finds_every_name_containing_it_ranked() {
    let (_d, nexus) = chinese();
    let hits = ok(&nexus, r#"SEARCH CONCEPT "汤" MODE "keyword""#);
    let found = names(&hits);
    // At the end of a name, at its start, and alone.
    for name in ["麻黄汤", "桂枝汤", "汤剂总论", "汤"] {
        assert!(found.contains(&name), "{name} in {found:?}");
    }
    // The exact name first; a mere mention after every name containing it.
    assert_eq!(found[0], "汤");
    assert_eq!(found.last(), Some(&"小青龙"), "{found:?}");
    // In the middle of a name.
    assert_eq!(
        names(&ok(&nexus, r#"SEARCH CONCEPT "黄" MODE "keyword""#))[0],
        "麻黄汤"
    );
    // Two characters still match as a bigram.
    assert_eq!(
        names(&ok(&nexus, r#"SEARCH CONCEPT "桂枝" MODE "keyword""#))[0],
        "桂枝汤"
    );
}

#[test]
fn a_lone_character_query_respects_with_type_and_limit() {
    let (_d, nexus) = chinese();
    let hits = ok(
        &nexus,
        r#"SEARCH CONCEPT "汤" WITH TYPE "Formula" MODE "keyword" LIMIT 2"#,
    );
    assert_eq!(hits.as_array().map(Vec::len), Some(2));
    let none = ok(
        &nexus,
        r#"SEARCH CONCEPT "汤" WITH TYPE "$ConceptType" MODE "keyword""#,
    );
    assert_eq!(none, json!([]));
}
