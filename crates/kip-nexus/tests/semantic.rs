//! SEARCH by meaning (RC10 §5.2) with the real embedding model, installed
//! by `scripts/setup-model.sh`. Where the setup promised it
//! (`KIP_EMBED_REQUIRED=1`, as `scripts/test.sh` sets), a missing model
//! fails these tests instead of skipping them.

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Value as Json, json};

const MEMORIES: &str = r#"
UPSERT {
  CONCEPT ?memory_type {
    {type: "$ConceptType", name: "Memory"}
    SET ATTRIBUTES { description: "Something the agent remembers about its user." }
  }
  CONCEPT ?note_type {
    {type: "$ConceptType", name: "Note"}
    SET ATTRIBUTES { description: "A free note." }
  }
}
UPSERT {
  CONCEPT ?a { {type: "Memory", name: "Mortgage renewal"}
    SET ATTRIBUTES { description: "Renew the loan with the bank before the fixed rate ends in June." } }
  CONCEPT ?b { {type: "Memory", name: "降压药"}
    SET ATTRIBUTES { description: "每天早上服用一片。" } }
  CONCEPT ?c { {type: "Memory", name: "Dark mode"}
    SET ATTRIBUTES { description: "The user prefers dark themes in every app." } }
  CONCEPT ?d { {type: "Memory", name: "SKU-4471-B"}
    SET ATTRIBUTES { description: "Replacement hinge for the kitchen cabinet." } }
  CONCEPT ?e { {type: "Memory", name: "Weekly team sync"}
    SET ATTRIBUTES { description: "Tuesdays at ten with the platform team." } }
  CONCEPT ?f { {type: "Memory", name: "Passport"}
    SET ATTRIBUTES { description: "Expires in March 2027; renew three months before." } }
  CONCEPT ?g { {type: "Note", name: "Grocery list"}
    SET ATTRIBUTES { description: "Milk, eggs, tomatoes." } }
}
"#;

fn exec(nexus: &Nexus, command: &str) -> Json {
    nexus.execute(&ExecuteKip::command(command), &Context::default())
}

/// A nexus holding [`MEMORIES`], or `None` (test skipped) when no model is
/// installed and none was promised.
fn memories() -> Option<(tempfile::TempDir, Nexus)> {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    if !nexus.searches_by_meaning() {
        assert_ne!(
            std::env::var("KIP_EMBED_REQUIRED").as_deref(),
            Ok("1"),
            "KIP_EMBED_REQUIRED=1 but the nexus has no embedding model (scripts/setup-model.sh)"
        );
        eprintln!("no embedding model installed: skipping");
        return None;
    }
    let r = exec(&nexus, MEMORIES);
    assert!(r.get("error").is_none(), "{r:#}");
    Some((dir, nexus))
}

/// The names of a SEARCH's hits, best first, checking the response shape:
/// `_score` in [0, 1], descending.
fn names(r: &Json) -> Vec<String> {
    let hits = r["result"].as_array().unwrap_or_else(|| panic!("{r:#}"));
    let scores: Vec<f64> = hits
        .iter()
        .map(|h| h["metadata"]["_score"].as_f64().expect("a _score"))
        .collect();
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    hits.iter()
        .map(|h| h["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_paraphrase_is_found_by_meaning_but_not_by_keyword() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let q = "refinancing my house";
    let keyword = names(&exec(
        &nexus,
        &format!(r#"SEARCH CONCEPT "{q}" MODE "keyword""#),
    ));
    assert!(
        !keyword.contains(&"Mortgage renewal".to_owned()),
        "{keyword:?}"
    );
    let semantic = exec(
        &nexus,
        &format!(r#"SEARCH CONCEPT "{q}" MODE "semantic" LIMIT 3"#),
    );
    assert!(semantic.get("warnings").is_none(), "{semantic:#}");
    assert_eq!(names(&semantic)[0], "Mortgage renewal");
    // MODE omitted is hybrid when the nexus searches by meaning.
    let default = names(&exec(&nexus, &format!(r#"SEARCH CONCEPT "{q}" LIMIT 3"#)));
    assert_eq!(default[0], "Mortgage renewal");
}

#[test]
fn meaning_crosses_languages() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let r = exec(
        &nexus,
        r#"SEARCH CONCEPT "blood pressure medicine" MODE "semantic" LIMIT 3"#,
    );
    assert_eq!(names(&r)[0], "降压药");
    let r = exec(&nexus, r#"SEARCH CONCEPT "深色模式" MODE "hybrid" LIMIT 3"#);
    assert_eq!(names(&r)[0], "Dark mode");
}

#[test]
fn hybrid_puts_an_exact_token_first() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let r = exec(
        &nexus,
        r#"SEARCH CONCEPT "SKU-4471-B" MODE "hybrid" LIMIT 5"#,
    );
    assert_eq!(names(&r)[0], "SKU-4471-B");
    assert_eq!(r["result"][0]["metadata"]["_score"], json!(1.0));
}

#[test]
fn threshold_drops_weak_hits_for_an_honest_miss() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let q = "quantum chromodynamics lecture notes";
    for mode in ["semantic", "hybrid"] {
        let loose = names(&exec(
            &nexus,
            &format!(r#"SEARCH CONCEPT "{q}" MODE "{mode}" LIMIT 10"#),
        ));
        let strict = exec(
            &nexus,
            &format!(r#"SEARCH CONCEPT "{q}" MODE "{mode}" THRESHOLD 0.5"#),
        );
        assert_eq!(
            names(&strict),
            Vec::<String>::new(),
            "{mode}: {strict:#} (loose: {loose:?})"
        );
    }
    // A strong match passes the same threshold.
    let r = exec(
        &nexus,
        r#"SEARCH CONCEPT "refinancing my house" MODE "semantic" THRESHOLD 0.3"#,
    );
    assert_eq!(
        names(&r).first().map(String::as_str),
        Some("Mortgage renewal"),
        "{r:#}"
    );
}

#[test]
fn with_type_narrows_search_by_meaning() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let r = exec(
        &nexus,
        r#"SEARCH CONCEPT "food to buy" WITH TYPE "Note" MODE "semantic""#,
    );
    assert_eq!(names(&r), vec!["Grocery list".to_owned()]);
    let r = exec(
        &nexus,
        r#"SEARCH CONCEPT "blood pressure medicine" WITH TYPE "Note" MODE "semantic""#,
    );
    assert!(!names(&r).contains(&"降压药".to_owned()), "{r:#}");
}

#[test]
fn writes_are_searchable_at_once_and_a_deleted_concept_never_returns() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let r = exec(
        &nexus,
        r#"UPSERT { CONCEPT ?x { {type: "Memory", name: "Dentist appointment"} SET ATTRIBUTES { description: "Next check-up on May 3." } } }"#,
    );
    assert!(r.get("error").is_none(), "{r:#}");
    let r = exec(
        &nexus,
        r#"SEARCH CONCEPT "teeth cleaning visit" MODE "semantic" LIMIT 2"#,
    );
    assert_eq!(names(&r)[0], "Dentist appointment");
    let r = exec(
        &nexus,
        r#"DELETE CONCEPT ?m DETACH WHERE { ?m {type: "Memory", name: "Mortgage renewal"} }"#,
    );
    assert!(r.get("error").is_none(), "{r:#}");
    for mode in ["semantic", "hybrid"] {
        let r = exec(
            &nexus,
            &format!(r#"SEARCH CONCEPT "refinancing my house" MODE "{mode}" LIMIT 10"#),
        );
        assert!(
            !names(&r).contains(&"Mortgage renewal".to_owned()),
            "{mode}: {r:#}"
        );
    }
    assert_eq!(nexus.vector_backlog().expect("backlog"), 0);
    let report = nexus.check_store().expect("check");
    assert!(report.ok, "{report:#?}");
}

#[test]
fn a_changed_description_moves_the_concept_in_meaning() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let q = r#"SEARCH CONCEPT "favourite hiking trail" MODE "semantic" LIMIT 1"#;
    assert_ne!(
        names(&exec(&nexus, q)).first().map(String::as_str),
        Some("Passport")
    );
    let r = exec(
        &nexus,
        r#"UPSERT { CONCEPT ?p { {type: "Memory", name: "Passport"} SET ATTRIBUTES { description: "Their favourite mountain hiking route, walked every autumn." } } }"#,
    );
    assert!(r.get("error").is_none(), "{r:#}");
    assert_eq!(names(&exec(&nexus, q)), vec!["Passport".to_owned()]);
}

#[test]
fn propositions_are_searched_by_keyword_with_a_warning() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let r = exec(
        &nexus,
        r#"SEARCH PROPOSITION "belongs_to_domain" MODE "semantic" LIMIT 1"#,
    );
    assert!(r.get("error").is_none(), "{r:#}");
    let w = r["warnings"][0].as_str().unwrap_or_default();
    assert!(w.contains("keyword") && w.contains("propositions"), "{r:#}");
}

#[test]
fn the_primer_says_the_modes_and_the_model() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let primer = exec(&nexus, "DESCRIBE PRIMER");
    let p = &primer["result"];
    assert_eq!(p["search_modes"], json!(["keyword", "semantic", "hybrid"]));
    assert_eq!(p["capabilities"]["semantic_search"], json!(true));
    assert_eq!(p["capabilities"]["embedding"]["dimension"], json!(384));
}

/// The inspector's "related by meaning": a paraphrase of the concept comes
/// first, the concept itself never, scores in [0, 1] descending; bad and
/// unknown ids are refused.
#[test]
fn related_by_meaning_puts_a_paraphrase_first_and_leaves_the_concept_out() {
    let Some((_dir, nexus)) = memories() else {
        return;
    };
    let r = exec(
        &nexus,
        r#"UPSERT { CONCEPT ?h { {type: "Memory", name: "Home loan refinancing"}
            SET ATTRIBUTES { description: "Refinance the mortgage with another bank." } } }"#,
    );
    assert!(r.get("error").is_none(), "{r:#}");
    let id = exec(
        &nexus,
        r#"FIND(?m) WHERE { ?m {type: "Memory", name: "Mortgage renewal"} }"#,
    )["result"][0]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let related = nexus.related_by_meaning(&id, Some(3)).expect("related");
    assert!(related.available);
    assert_eq!(related.backlog, 0);
    let names: Vec<&str> = related.related.iter().map(|r| r.name.as_str()).collect();
    assert!(names.len() <= 3 && !names.is_empty(), "{names:?}");
    assert_eq!(names[0], "Home loan refinancing", "{related:#?}");
    assert!(related.related.iter().all(|r| r.id != id));
    let scores: Vec<f64> = related.related.iter().map(|r| r.score).collect();
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(nexus.related_by_meaning("P:1", None).is_err());
    assert!(nexus.related_by_meaning("C:999999", None).is_err());
}
