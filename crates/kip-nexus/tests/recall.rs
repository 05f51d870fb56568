//! The recall simulator (issue 31 §8): the same SEARCH an agent would run,
//! with each score's parts and one-hop context, and the pin / demote
//! actions as traced, revertible writes.

use kip_nexus::recall::{MAX_CONTEXT, RecallAction, RecallQuery};
use kip_nexus::{Context, ExecuteKip, HeatQuery, Nexus};
use serde_json::{Value as Json, json};

use crate::common::fixture;

fn search(nexus: &Nexus, command: &str) -> Vec<(String, f64)> {
    let r = nexus.execute(&ExecuteKip::command(command), &Context::default());
    assert!(r.get("error").is_none(), "{r:#}");
    (r["result"].as_array().expect("hits").iter())
        .map(|h| {
            let id = h["id"].as_str().expect("id").to_owned();
            (id, h["metadata"]["_score"].as_f64().expect("_score"))
        })
        .collect()
}

fn recall(nexus: &Nexus, text: &str, mode: Option<&str>) -> kip_nexus::recall::Recall {
    let q = RecallQuery {
        text: text.into(),
        mode: mode.map(str::to_owned),
        limit: Some(5),
    };
    nexus.recall(&q).expect("recall")
}

#[test]
fn recall_ranks_exactly_as_the_agents_search_in_the_default_and_keyword_modes() {
    let (_dir, nexus) = fixture();
    for (mode, clause) in [(None, ""), (Some("keyword"), " MODE \"keyword\"")] {
        let r = recall(&nexus, "pain reliever", mode);
        let got: Vec<(String, f64)> = r.results.iter().map(|h| (h.id.clone(), h.score)).collect();
        let want = search(
            &nexus,
            &format!("SEARCH CONCEPT \"pain reliever\"{clause} LIMIT 5"),
        );
        assert!(!want.is_empty());
        assert_eq!(got, want, "mode {mode:?}");
        assert_eq!(
            r.search,
            format!("SEARCH CONCEPT \"pain reliever\"{clause} LIMIT 5")
        );
    }
}

#[test]
fn keyword_hits_carry_their_score_parts_and_their_links_both_ways() {
    let (_dir, nexus) = fixture();
    let r = recall(&nexus, "Aspirin", Some("keyword"));
    assert_eq!(r.mode, "keyword");
    let aspirin = r
        .results
        .iter()
        .find(|h| h.type_name == "Drug" && h.name == "Aspirin")
        .expect("the drug");
    assert_eq!(aspirin.parts.keyword, Some(aspirin.score));
    assert_eq!((aspirin.parts.semantic, aspirin.parts.fused), (None, None));
    let treats: Vec<&str> = (aspirin.context.iter())
        .filter(|l| l.predicate == "treats" && l.direction == "out")
        .map(|l| l.other["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(treats.len(), 2, "{:#?}", aspirin.context);
    assert!(treats.contains(&"Headache") && treats.contains(&"Fever"));
    assert!(aspirin.context.len() <= MAX_CONTEXT);
    let headache = recall(&nexus, "Headache", Some("keyword"));
    let headache = (headache.results.iter())
        .find(|h| h.name == "Headache")
        .expect("headache");
    assert!(headache.context.iter().any(|l| l.direction == "in"
        && l.predicate == "treats"
        && l.other["name"] == json!("Aspirin")));
}

#[test]
fn recall_records_no_read_and_refuses_bad_input() {
    let (_dir, nexus) = fixture();
    recall(&nexus, "Aspirin", None);
    nexus.flush_trace();
    let heat = nexus.read_heat(&HeatQuery::default()).expect("heat");
    assert_eq!(heat.reads, 0, "the simulator is not an agent's read");
    for (text, mode) in [("  ", None), ("Aspirin", Some("fuzzy"))] {
        let q = RecallQuery {
            text: text.into(),
            mode: mode.map(str::to_owned),
            limit: None,
        };
        let e = nexus.recall(&q).expect_err("refused");
        assert!(!e.hint.is_empty(), "{e:?}");
    }
}

/// Where a model is installed (and where `KIP_EMBED_REQUIRED=1` promises
/// one), hybrid hits carry both parts and the fused score is their score.
#[test]
fn hybrid_hits_carry_both_parts_and_the_fused_score() {
    let (_dir, nexus) = fixture();
    if !nexus.searches_by_meaning() {
        assert_ne!(
            std::env::var("KIP_EMBED_REQUIRED").as_deref(),
            Ok("1"),
            "KIP_EMBED_REQUIRED=1 but the nexus has no embedding model (scripts/setup-model.sh)"
        );
        eprintln!("no embedding model installed: skipping");
        return;
    }
    let r = recall(&nexus, "medicine for a sore head", Some("hybrid"));
    assert_eq!(r.mode, "hybrid");
    let want = search(
        &nexus,
        "SEARCH CONCEPT \"medicine for a sore head\" MODE \"hybrid\" LIMIT 5",
    );
    let got: Vec<(String, f64)> = r.results.iter().map(|h| (h.id.clone(), h.score)).collect();
    assert_eq!(got, want);
    assert!(r.results.iter().all(|h| h.parts.fused == Some(h.score)));
    assert!(r.results.iter().any(|h| h.parts.semantic.is_some()));
    let exact = recall(&nexus, "Aspirin", Some("hybrid"));
    assert!(exact.results[0].parts.exact_name && exact.results[0].score == 1.0);
}

fn id_of(nexus: &Nexus, name: &str) -> String {
    let r = recall(nexus, name, Some("keyword"));
    r.results
        .iter()
        .find(|h| h.name == name && h.type_name == "Symptom")
        .expect("found")
        .id
        .clone()
}

fn metadata(nexus: &Nexus, id: &str) -> Json {
    let e = id.parse().expect("an id");
    nexus.read(|g| g.element_json(e)).expect("read")["metadata"].clone()
}

fn act(action: &str, id: &str, dry_run: bool) -> RecallAction {
    RecallAction {
        action: action.into(),
        id: id.into(),
        factor: None,
        dry_run: Some(dry_run),
    }
}

#[test]
fn pin_and_demote_preview_then_write_traced_and_revert() {
    let (_dir, nexus) = fixture();
    let ctx = Context::new("test").with_originator("curator");
    let fever = id_of(&nexus, "Fever");
    let before = metadata(&nexus, &fever);
    let preview = nexus
        .recall_action(&act("demote", &fever, true), &ctx)
        .expect("preview");
    assert!(preview.dry_run && preview.entry.is_none());
    assert!(preview.command.contains("MUL(") && preview.command.contains(&fever));
    assert_eq!(
        metadata(&nexus, &fever),
        before,
        "a preview changes nothing"
    );

    let demoted = nexus
        .recall_action(&act("demote", &fever, false), &ctx)
        .expect("demote");
    assert_eq!(metadata(&nexus, &fever)["memory_strength"], json!(0.35));
    nexus
        .recall_action(&act("demote", &fever, false), &ctx)
        .expect("again");
    assert_eq!(metadata(&nexus, &fever)["memory_strength"], json!(0.175));
    let pinned = nexus
        .recall_action(&act("pin", &fever, false), &ctx)
        .expect("pin");
    assert_eq!(metadata(&nexus, &fever)["pinned"], json!(true));
    let pin_entry = pinned.entry.expect("the pin's trace entry");
    let entry = nexus.trace_entry(&pin_entry).expect("entry");
    assert_eq!(entry.originator, "curator");
    assert!(
        entry.data.expect("data")["command"]
            .as_str()
            .is_some_and(|c| c.contains("pinned: true"))
    );
    nexus
        .revert(&pin_entry, "curator", false)
        .expect("revert the pin");
    assert!(metadata(&nexus, &fever).get("pinned").is_none());
    assert_eq!(metadata(&nexus, &fever)["memory_strength"], json!(0.175));
    let first = demoted.entry.expect("the demote's entry");
    assert_ne!(first, pin_entry);
}

#[test]
fn bad_actions_are_refused_and_change_nothing() {
    let (_dir, nexus) = fixture();
    let ctx = Context::new("test").with_originator("curator");
    let fever = id_of(&nexus, "Fever");
    let before = metadata(&nexus, &fever);
    let last = nexus.last_trace_id().expect("last");
    let mut too_big = act("demote", &fever, false);
    too_big.factor = Some(1.5);
    for bad in [
        too_big,
        act("boost", &fever, false),
        act("pin", "P:1", false),
        act("pin", "C:999999", false),
    ] {
        let e = nexus.recall_action(&bad, &ctx).expect_err("refused");
        assert!(!e.hint.is_empty(), "{e:?}");
    }
    assert_eq!(metadata(&nexus, &fever), before);
    assert_eq!(nexus.last_trace_id().expect("last"), last);
}
