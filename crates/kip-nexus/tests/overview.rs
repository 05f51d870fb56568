//! The schema map (issue 31 §9): types with their counts, links counted by
//! (subject type, predicate, object type), the best-connected concepts —
//! and nothing of the schema's own definitions.

use kip_nexus::{Context, ExecuteKip, Nexus};

const MEMORY: &str = r#"
UPSERT {
    CONCEPT ?k { {type: "$PropositionType", name: "knows"} SET ATTRIBUTES { description: "Knows.", subject_types: ["Person"], object_types: ["Person"] } }
    CONCEPT ?l { {type: "$PropositionType", name: "likes"} SET ATTRIBUTES { description: "Likes.", subject_types: ["Person"], object_types: ["Event"] } }
    CONCEPT ?about { {type: "$PropositionType", name: "noted"} SET ATTRIBUTES { description: "A note on a link.", subject_types: ["*"], object_types: ["*"] } }
    CONCEPT ?home { {type: "Domain", name: "Home"} SET ATTRIBUTES { description: "The family." } }
    CONCEPT ?bob { {type: "Person", name: "Bob"} SET PROPOSITIONS { ("belongs_to_domain", ?home) } }
    CONCEPT ?ann { {type: "Person", name: "Ann"} SET PROPOSITIONS { ("belongs_to_domain", ?home), ("knows", ?bob) } }
    CONCEPT ?zed { {type: "Person", name: "Zed"} SET PROPOSITIONS { ("belongs_to_domain", ?home), ("knows", ?ann), ("knows", ?bob) } }
    CONCEPT ?party { {type: "Event", name: "Party"} SET PROPOSITIONS { ("belongs_to_domain", ?home) } }
}
UPSERT {
    CONCEPT ?ann { {type: "Person", name: "Ann"} SET PROPOSITIONS { ("likes", {type: "Event", name: "Party"}) } }
    CONCEPT ?bob { {type: "Person", name: "Bob"} SET PROPOSITIONS { ("likes", {type: "Event", name: "Party"}) } }
}
"#;

fn run(nexus: &Nexus, text: &str) {
    let r = nexus.execute(&ExecuteKip::command(text), &Context::default());
    assert!(r.get("error").is_none(), "{r:#}");
}

#[test]
fn the_schema_map_counts_types_links_by_type_pair_and_hubs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    let before = nexus.schema_map(10).expect("map");
    run(&nexus, MEMORY);
    // A link about a link is counted apart.
    run(
        &nexus,
        r#"UPSERT { PROPOSITION ?n { ({type: "Person", name: "Zed"}, "noted", ({type: "Person", name: "Ann"}, "knows", {type: "Person", name: "Bob"})) } }"#,
    );
    let map = nexus.schema_map(3).expect("map");
    let count = |name: &str| map.types.iter().find(|t| t.name == name).map(|t| t.count);
    let was = |name: &str| {
        before
            .types
            .iter()
            .find(|t| t.name == name)
            .map_or(0, |t| t.count)
    };
    assert_eq!(count("Person"), Some(3 + was("Person")), "{:#?}", map.types);
    assert_eq!(count("Event"), Some(1));
    assert_eq!(count("Domain"), Some(1 + was("Domain")));
    // The definitions are the schema, not the memory's types.
    assert!(!map.types.iter().any(|t| t.name.starts_with('$')));
    assert!(
        map.types
            .iter()
            .all(|t| t.definition.as_deref().is_some_and(|d| d.starts_with("C:")))
    );
    assert_eq!(map.concepts, map.types.iter().map(|t| t.count).sum::<u64>());
    let edge = |s: &str, p: &str, o: &str| {
        (map.edges.iter())
            .find(|e| e.subject_type == s && e.predicate == p && e.object_type == o)
            .map(|e| e.count)
    };
    assert_eq!(edge("Person", "knows", "Person"), Some(3));
    assert_eq!(edge("Person", "likes", "Event"), Some(2));
    assert!(edge("Person", "belongs_to_domain", "Domain").is_some_and(|n| n >= 3));
    assert_eq!(map.higher_order, 1);
    // Most first; links among definitions are not counted.
    assert!(map.edges.windows(2).all(|w| w[0].count >= w[1].count));
    assert!(!map.edges.iter().any(|e| e.subject_type.starts_with('$')));
    // Hubs: Ann and Bob (two `knows` and a `likes` each; a tie goes to the
    // older), then Zed (his note is on a link, counted apart); domain
    // membership does not make the domain a hub.
    assert_eq!(map.hubs.len(), 3);
    let hubs: Vec<(&str, u64)> = map
        .hubs
        .iter()
        .map(|h| (h.name.as_str(), h.degree))
        .collect();
    assert_eq!(hubs, [("Bob", 3), ("Ann", 3), ("Zed", 2)]);
    assert!(!hubs.iter().any(|(n, _)| *n == "Home"), "{hubs:?}");
    assert!(
        map.hubs
            .iter()
            .all(|h| h.id.starts_with("C:") && !h.type_name.is_empty())
    );
}
