//! Duplicate candidates (issue 31 §3): what makes a pair, what does not,
//! and a dismissed pair staying away.

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::Value as Json;

fn exec(nexus: &Nexus, command: &str) -> Json {
    let r = nexus.execute(&ExecuteKip::command(command), &Context::default());
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

const MEMORY: &str = r#"
UPSERT {
    CONCEPT ?drug { {type: "$ConceptType", name: "Drug"} SET ATTRIBUTES { description: "A medicine." } }
    CONCEPT ?treats { {type: "$PropositionType", name: "treats"} SET ATTRIBUTES { description: "Treats.", subject_types: ["Drug"], object_types: ["Symptom"] } }
    CONCEPT ?symptom { {type: "$ConceptType", name: "Symptom"} SET ATTRIBUTES { description: "A symptom." } }
    CONCEPT ?headache { {type: "Symptom", name: "Headache"} }
    CONCEPT ?fever { {type: "Symptom", name: "Fever"} }
    CONCEPT ?a { {type: "Drug", name: "Ibuprofen"} SET PROPOSITIONS { ("treats", ?headache), ("treats", ?fever) } }
    CONCEPT ?b { {type: "Drug", name: "IBUPROFEN "} SET PROPOSITIONS { ("treats", ?headache) } }
    CONCEPT ?c { {type: "Drug", name: "Ｉｂｕｐｒｏｆｅｎ"} }
    CONCEPT ?d { {type: "Drug", name: "Paracetamol"} }
    CONCEPT ?e { {type: "Drug", name: "Paracetamoll"} }
    CONCEPT ?f { {type: "Drug", name: "Acetaminophen"} SET ATTRIBUTES { aliases: ["paracetamol"] } }
    CONCEPT ?g { {type: "Drug", name: "Aspirin"} }
    CONCEPT ?h { {type: "Drug", name: "Aspartame"} }
    CONCEPT ?i { {type: "Drug", name: "Cat"} }
    CONCEPT ?j { {type: "Drug", name: "Car"} }
    CONCEPT ?k { {type: "Symptom", name: "ibuprofen"} }
    CONCEPT ?l { {type: "Drug", name: "Aspirin 100"} }
    CONCEPT ?m { {type: "Drug", name: "Aspirin 1000"} }
    CONCEPT ?n { {type: "Drug", name: "Aspirin 300"} }
}
"#;

fn pairs(nexus: &Nexus, types: &[&str]) -> Vec<(String, String, Vec<String>)> {
    let types: Vec<String> = types.iter().map(|t| (*t).to_owned()).collect();
    nexus
        .duplicates(&types, 0)
        .expect("duplicates")
        .into_iter()
        .map(|d| (d.a.name, d.b.name, d.reasons))
        .collect()
}

#[test]
fn near_names_within_a_type_are_candidates_with_their_reasons_and_a_dismissal_is_remembered() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus");
    exec(&nexus, MEMORY);
    let found = pairs(&nexus, &[]);
    let names: Vec<(&str, &str)> = found
        .iter()
        .map(|(a, b, _)| (a.as_str(), b.as_str()))
        .collect();
    // Case, width and spaces: the three spellings of Ibuprofen pair up;
    // the shared neighbour (Headache) puts the first two pair on top.
    assert_eq!(names[0], ("Ibuprofen", "IBUPROFEN "), "{found:#?}");
    assert!(
        found[0].2.iter().any(|r| r.contains("shared neighbour")),
        "{found:#?}"
    );
    for pair in [
        ("Ibuprofen", "Ｉｂｕｐｒｏｆｅｎ"),
        ("IBUPROFEN ", "Ｉｂｕｐｒｏｆｅｎ"),
    ] {
        assert!(names.contains(&pair), "{pair:?} in {found:#?}");
    }
    // One edit apart, and an alias.
    assert!(
        names.contains(&("Paracetamol", "Paracetamoll")),
        "{found:#?}"
    );
    let alias = found
        .iter()
        .find(|(a, b, _)| a == "Paracetamol" && b == "Acetaminophen")
        .expect("the alias pair");
    assert!(alias.2.iter().any(|r| r.contains("alias")), "{alias:?}");
    // Not candidates: different words, short words one letter apart, the
    // same name in another type, the schema itself.
    for (a, b) in [
        ("Aspirin", "Aspartame"),
        ("Cat", "Car"),
        ("Aspirin 100", "Aspirin 1000"),
        ("Aspirin 100", "Aspirin 300"),
    ] {
        assert!(!names.contains(&(a, b)), "{a} / {b} in {found:#?}");
    }
    assert!(
        found
            .iter()
            .all(|(a, b, _)| a != "ibuprofen" && b != "ibuprofen")
    );
    assert!(pairs(&nexus, &["Symptom"]).is_empty());

    // "Not the same": the pair does not come back, the others stay.
    let first = &nexus.duplicates(&[], 1).expect("duplicates")[0];
    nexus
        .dismiss_duplicate(&first.b.id, &first.a.id)
        .expect("dismissed");
    let after = pairs(&nexus, &[]);
    assert_eq!(after.len(), found.len() - 1);
    assert!(
        !after
            .iter()
            .any(|(a, b, _)| (a.as_str(), b.as_str()) == ("Ibuprofen", "IBUPROFEN "))
    );
    let e = nexus
        .dismiss_duplicate("C:999999", &first.a.id)
        .expect_err("unknown");
    assert_eq!(e.code.as_str(), "KIP_3002");
}
