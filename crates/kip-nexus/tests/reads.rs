//! What agents read (issue 31 §7): folded read entries keep the ids their
//! reads returned (bounded, with counts), writes are unaffected, and recall
//! heat counts them per element and originator.

use kip_nexus::{Context, ExecuteKip, HeatQuery, MAX_READ_IDS, Nexus, TraceEntry, TraceFilter};
use serde_json::{Value as Json, json};

use crate::common::fixture;

#[track_caller]
fn run(nexus: &Nexus, who: &str, command: &str) -> Json {
    let ctx = Context::new("test").with_originator(who);
    let r = nexus.execute(&ExecuteKip::command(command), &ctx);
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

fn entries_of(nexus: &Nexus, who: &str) -> Vec<TraceEntry> {
    let filter = TraceFilter {
        originator: Some(who.into()),
        ..TraceFilter::default()
    };
    nexus.trace_list(&filter).expect("list").entries
}

fn ids_in(result: &Json) -> Vec<String> {
    let mut out: Vec<String> = result
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["id"].as_str().expect("an id").to_owned())
        .collect();
    out.sort();
    out
}

const DRUGS: &str = r#"FIND(?d) WHERE { ?d {type: "Drug"} }"#;

#[test]
fn a_folded_read_records_the_ids_it_returned_with_a_count_per_id() {
    let (_dir, nexus) = fixture();
    let drugs = ids_in(&run(&nexus, "agent", DRUGS));
    assert!(!drugs.is_empty());
    run(&nexus, "agent", DRUGS);
    run(&nexus, "agent", DRUGS);
    nexus.flush_trace();
    let entries = entries_of(&nexus, "agent");
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let data = entries[0].data.clone().expect("data");
    assert_eq!(data["count"], json!(3));
    let returned = data["returned"].as_object().expect("returned ids");
    let mut kept: Vec<String> = returned.keys().cloned().collect();
    kept.sort();
    assert_eq!(kept, drugs);
    assert!(returned.values().all(|n| n == &json!(3)), "{returned:?}");
    assert!(data.get("returned_more").is_none());
    // A read touches nothing: its ids are data, not the entry's elements.
    let touching = TraceFilter {
        element: Some(drugs[0].clone()),
        originator: Some("agent".into()),
        ..TraceFilter::default()
    };
    assert!(
        nexus
            .trace_list(&touching)
            .expect("list")
            .entries
            .is_empty()
    );
}

#[test]
fn a_large_result_keeps_the_bound_and_counts_the_rest() {
    let (_dir, nexus) = fixture();
    let mut upsert = String::from("UPSERT {\n");
    for i in 0..MAX_READ_IDS + 12 {
        upsert.push_str(&format!(
            "CONCEPT ?s{i} {{ {{type: \"Symptom\", name: \"Bulk {i}\"}} }}\n"
        ));
    }
    upsert.push('}');
    run(&nexus, "writer", &upsert);
    let all = run(
        &nexus,
        "agent",
        r#"FIND(?s) WHERE { ?s {type: "Symptom"} } LIMIT 500"#,
    );
    let total = all.as_array().expect("rows").len();
    assert!(total > MAX_READ_IDS);
    nexus.flush_trace();
    let data = entries_of(&nexus, "agent")[0].data.clone().expect("data");
    assert_eq!(
        data["returned"].as_object().expect("ids").len(),
        MAX_READ_IDS
    );
    assert_eq!(data["returned_more"], json!(total - MAX_READ_IDS));
}

#[test]
fn writes_and_failed_reads_record_no_returned_ids() {
    let (_dir, nexus) = fixture();
    run(
        &nexus,
        "writer",
        r#"UPSERT { CONCEPT ?x { {type: "Symptom", name: "Itch"} } }"#,
    );
    let ctx = Context::new("test").with_originator("agent");
    let bad = nexus.execute(
        &ExecuteKip::command(r#"FIND(?x) WHERE { ?x {type: "NoSuchType"} }"#),
        &ctx,
    );
    assert!(bad.get("error").is_some(), "{bad:#}");
    nexus.flush_trace();
    let write = &entries_of(&nexus, "writer")[0];
    assert!(
        write
            .data
            .as_ref()
            .is_some_and(|d| d.get("returned").is_none())
    );
    let failed = &entries_of(&nexus, "agent")[0];
    assert!(
        failed
            .data
            .as_ref()
            .is_some_and(|d| d.get("returned").is_none())
    );
}

#[test]
fn heat_counts_reads_per_element_and_originator_and_filters_by_both() {
    let (_dir, nexus) = fixture();
    let drugs = ids_in(&run(&nexus, "alice", DRUGS));
    run(&nexus, "alice", DRUGS);
    run(&nexus, "bob", DRUGS);
    let headache = run(
        &nexus,
        "bob",
        r#"FIND(?s) WHERE { ?s {type: "Symptom", name: "Headache"} }"#,
    );
    let headache = headache[0]["id"].as_str().expect("id").to_owned();
    nexus.flush_trace();
    let heat = nexus.read_heat(&HeatQuery::default()).expect("heat");
    assert!(heat.complete);
    assert_eq!(heat.reads, 4);
    let hot = heat
        .elements
        .iter()
        .find(|h| h.id == drugs[0])
        .expect("a drug");
    assert_eq!(hot.reads, 3);
    let by: Vec<(&str, u64)> = hot
        .by
        .iter()
        .map(|b| (b.originator.as_str(), b.reads))
        .collect();
    assert_eq!(by, [("alice", 2), ("bob", 1)]);
    assert_eq!(heat.elements[0].reads, 3, "hottest first");
    let only_bob = nexus
        .read_heat(&HeatQuery {
            originator: Some("bob".into()),
            ..HeatQuery::default()
        })
        .expect("heat");
    assert_eq!(only_bob.reads, 2);
    assert!(
        only_bob
            .elements
            .iter()
            .any(|h| h.id == headache && h.reads == 1)
    );
    let future = nexus
        .read_heat(&HeatQuery {
            since: Some("2999-01-01T00:00:00Z".into()),
            ..HeatQuery::default()
        })
        .expect("heat");
    assert!(future.elements.is_empty() && future.reads == 0);
}

#[test]
fn entries_written_before_reads_kept_ids_still_read_and_count_as_reads() {
    let (_dir, nexus) = fixture();
    // A read entry as an older version wrote it: no `returned`.
    let old = json!({
        "id": "T:1", "originator": "old-agent", "type": "TRACE", "seq": "1",
        "message": "FIND: read 2 times", "tag": ["ToolOutput"], "flags": [],
        "at": "2026-01-01T00:00:00Z",
        "data": {"command": DRUGS, "read_only": true, "count": 2,
                 "first_at": "2026-01-01T00:00:00Z", "last_at": "2026-01-01T00:00:10Z"}
    });
    assert_eq!(nexus.trace_import(&old.to_string()).expect("import"), 1);
    let listed = entries_of(&nexus, "old-agent");
    assert_eq!(listed.len(), 1);
    let heat = nexus
        .read_heat(&HeatQuery {
            originator: Some("old-agent".into()),
            ..HeatQuery::default()
        })
        .expect("heat");
    assert_eq!(heat.reads, 2);
    assert!(heat.elements.is_empty());
}
