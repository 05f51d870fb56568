//! Memory health (issue 31 §2): each count finds what it should, and
//! only that.

use kip_nexus::{Context, ExecuteKip, Nexus};

const MEMORY: &str = r#"
UPSERT {
    CONCEPT ?e { {type: "$ConceptType", name: "Experience"} SET ATTRIBUTES { description: "An attempt." } }
    CONCEPT ?c { {type: "$PropositionType", name: "consolidated_to"} SET ATTRIBUTES { description: "Folded into.", subject_types: ["*"], object_types: ["*"] } }
    CONCEPT ?k { {type: "$PropositionType", name: "knows"} SET ATTRIBUTES { description: "Knows.", subject_types: ["Person"], object_types: ["Person"] } }
    CONCEPT ?home { {type: "Domain", name: "Home"} SET ATTRIBUTES { description: "The family." } }
    CONCEPT ?bob { {type: "Person", name: "Bob"} SET PROPOSITIONS { ("belongs_to_domain", ?home) } }
    CONCEPT ?ann { {type: "Person", name: "Ann"} SET PROPOSITIONS { ("belongs_to_domain", ?home), ("knows", ?bob) } }
    CONCEPT ?zed { {type: "Person", name: "Zed"} SET PROPOSITIONS { ("belongs_to_domain", ?home) } }
    CONCEPT ?old { {type: "Event", name: "Old chat"} SET PROPOSITIONS { ("consolidated_to", ?ann) } }
        WITH METADATA { expires_at: "2000-01-01T00:00:00Z", memory_strength: 0.1 }
    CONCEPT ?new { {type: "Event", name: "New chat"} SET PROPOSITIONS { ("consolidated_to", ?bob) } }
        WITH METADATA { expires_at: "2999-01-01T00:00:00Z", confidence: 0.3 }
    CONCEPT ?try { {type: "Experience", name: "First try"} }
}
"#;

#[test]
fn the_health_report_counts_what_needs_a_curator() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    let r = nexus.execute(&ExecuteKip::command(MEMORY), &Context::default());
    assert!(r.get("error").is_none(), "{r:#}");
    let h = nexus.health().expect("health");
    let names = |sample: &[String]| -> Vec<String> {
        sample
            .iter()
            .map(|id| {
                let r = nexus.execute(
                    &ExecuteKip::command(format!("FIND(?x.name) WHERE {{ ?x {{id: \"{id}\"}} }}")),
                    &Context::default(),
                );
                r["result"][0].as_str().unwrap_or(id).to_owned()
            })
            .collect()
    };
    // Zed is in a domain but linked to nothing else; the unconsolidated
    // Experience is linked to nothing at all. Genesis's own concepts (the
    // personas, the domains) are not orphans of the user's memory… unless
    // they are: count them as they are.
    let orphans = names(&h.orphans.sample);
    assert!(orphans.contains(&"Zed".to_owned()), "{orphans:?}");
    assert!(orphans.contains(&"First try".to_owned()), "{orphans:?}");
    assert!(
        !orphans
            .iter()
            .any(|n| n == "Ann" || n == "Bob" || n == "Old chat"),
        "{orphans:?}"
    );
    // The block's metadata applies to its links too: the expired episode's
    // link expires and fades with it.
    let expired = names(&h.expired.sample);
    assert_eq!(expired.len(), 2, "{expired:?}");
    assert!(
        expired.contains(&"Old chat".to_owned()) && expired.iter().any(|n| n.starts_with("P:"))
    );
    assert_eq!(h.fading.count, 2, "{:?}", h.fading);
    assert_eq!(h.low_confidence.count, 2, "{:?}", h.low_confidence);
    assert_eq!(names(&h.unconsolidated.sample), ["First try"]);
    assert_eq!(h.by_type.get("Person"), Some(&5), "{:?}", h.by_type);
    assert_eq!(h.by_domain.get("Home"), Some(&3), "{:?}", h.by_domain);
    assert_eq!(h.by_predicate.get("consolidated_to"), Some(&2));
    assert!(!h.by_type.contains_key("$ConceptType"));
}
