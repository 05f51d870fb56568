//! Lowering in chunks gives what lowering whole gives.

use super::{Lowering, defines_schema, lower_kip};

fn commands(text: &str) -> Vec<kip_lang::ast::Command> {
    let commands = kip_lang::parse(text).expect("parses");
    kip_lang::bind(text, commands, &serde_json::Map::new()).expect("binds")
}

/// Lowered a few items at a time, a capsule gives the ops it gives
/// whole: handles and default metadata carry across the cuts, and each
/// UPSERT starts afresh.
#[test]
fn lowering_in_chunks_gives_the_ops_of_the_whole() {
    let text = r#"UPSERT {
  CONCEPT ?a { {type: "Drug", name: "A"} SET ATTRIBUTES { x: 1 } }
  CONCEPT ?b { {type: "Symptom", name: "B"} }
  CONCEPT { {type: "Drug", name: "C"} SET PROPOSITIONS { ("treats", ?b) ("treats", {type: "Symptom", name: "D"}) } }
  PROPOSITION ?p { (?a, "treats", ?b) }
  CONCEPT { {type: "Drug", name: "E"} SET PROPOSITIONS { ("cites", ?p) } }
} WITH METADATA { source: "one" }
FIND(?x) WHERE { ?x {type: "Drug"} }
UPSERT {
  CONCEPT ?b { {type: "Symptom", name: "G"} }
  CONCEPT { {type: "Drug", name: "F"} SET PROPOSITIONS { ("treats", ?b) } }
} WITH METADATA { source: "two" }"#;
    let commands = commands(text);
    let whole = lower_kip(&commands);
    assert!(whole.len() > 8);
    for size in [1, 2, 3, 7, 1000] {
        let mut lowering = Lowering::new(&commands);
        let (mut chunked, mut ops) = (Vec::new(), Vec::new());
        while lowering.next(size, &mut ops) {
            assert!(ops.len() <= 3 * size, "{size}: {}", ops.len());
            chunked.append(&mut ops);
        }
        assert!(lowering.done());
        assert_eq!(chunked, whole, "chunks of {size}");
    }
    assert!(!defines_schema(&commands));
}

#[test]
fn a_capsule_that_defines_a_type_or_a_predicate_is_lowered_whole() {
    let defines = r#"UPSERT { CONCEPT { {type: "$ConceptType", name: "Gene"} } CONCEPT { {type: "Gene", name: "g"} } }"#;
    assert!(defines_schema(&commands(defines)));
    let predicate = r#"UPSERT { CONCEPT { {type: "$PropositionType", name: "binds"} } }"#;
    assert!(defines_schema(&commands(predicate)));
}
