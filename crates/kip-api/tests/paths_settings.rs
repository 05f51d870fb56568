//! `paths` (the shortest paths between two elements, bounded) and
//! `settings_get` / `settings_put` (a client's settings kept with the
//! nexus), against a real nexus holding the medical example.

use std::path::PathBuf;
use std::sync::Arc;

use kip_api::{
    Api, ElementRef, ExecuteRequest, PathsRequest, PathsResponse, SettingsGetRequest,
    SettingsPutRequest,
};
use kip_nexus::Nexus;
use serde_json::{Value as Json, json};

fn fixture() -> (tempfile::TempDir, Api) {
    let (dir, api, _) = fixture_and_nexus();
    (dir, api)
}

/// The fixture, with the engine under its API (for what only the engine
/// can set up).
fn fixture_and_nexus() -> (tempfile::TempDir, Api, Arc<Nexus>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Arc::new(Nexus::open(dir.path()).expect("nexus opens"));
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples");
    let api = Api::new(nexus.clone(), "test-host");
    for name in ["10_medical_schema.kip", "11_medical_data.kip"] {
        let text = std::fs::read_to_string(examples.join(name)).expect("example capsule");
        let r = api.execute(ExecuteRequest::command(text));
        assert!(r.get("error").is_none(), "{name}: {r:#}");
    }
    (dir, api, nexus)
}

/// Two drugs that share two treated symptoms and one side effect, and
/// nothing else: D1 → S1 ← D2, D1 → S2 ← D2, D1 → S3 ← D2.
fn diamond(api: &Api) {
    let r = api.execute(ExecuteRequest::command(
        r#"UPSERT {
          CONCEPT ?s1 { {type: "Symptom", name: "PT-S1"} }
          CONCEPT ?s2 { {type: "Symptom", name: "PT-S2"} }
          CONCEPT ?s3 { {type: "Symptom", name: "PT-S3"} }
          CONCEPT ?d1 {
            {type: "Drug", name: "PT-D1"}
            SET PROPOSITIONS { ("treats", ?s1) ("treats", ?s2) ("has_side_effect", ?s3) }
          }
          CONCEPT ?d2 {
            {type: "Drug", name: "PT-D2"}
            SET PROPOSITIONS { ("treats", ?s1) ("treats", ?s2) ("has_side_effect", ?s3) }
          }
        }"#,
    ));
    assert!(r.get("error").is_none(), "{r:#}");
}

fn concept(name: &str, ty: &str) -> ElementRef {
    ElementRef::Concept {
        ty: ty.into(),
        name: name.into(),
    }
}

fn request(from: &str, to: &str) -> PathsRequest {
    PathsRequest {
        from: concept(from, "Drug"),
        to: concept(to, "Drug"),
        max_hops: None,
        predicates: None,
        directed: None,
        limit: None,
    }
}

/// Each path as the names of its nodes and the predicates of its links:
/// `["PT-D1", "treats", "PT-S1", "treats", "PT-D2"]`.
fn named(r: &PathsResponse) -> Vec<Vec<String>> {
    let by_id = |id: &str| -> Json {
        r.elements
            .iter()
            .find(|e| e["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} is among the elements"))
    };
    r.paths
        .iter()
        .map(|p| {
            let mut out = vec![
                by_id(&p.nodes[0])["name"]
                    .as_str()
                    .expect("a name")
                    .to_owned(),
            ];
            for (link, node) in p.links.iter().zip(&p.nodes[1..]) {
                out.push(
                    by_id(link)["predicate"]
                        .as_str()
                        .expect("a predicate")
                        .to_owned(),
                );
                out.push(by_id(node)["name"].as_str().expect("a name").to_owned());
            }
            out
        })
        .collect()
}

fn path(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn paths_are_every_shortest_path_walking_links_both_ways() {
    let (_dir, api) = fixture();
    diamond(&api);
    let r = api.paths(&request("PT-D1", "PT-D2")).expect("paths");
    assert_eq!(r.hops, Some(2));
    assert!(!r.truncated);
    let mut found = named(&r);
    found.sort();
    assert_eq!(
        found,
        vec![
            path(&[
                "PT-D1",
                "has_side_effect",
                "PT-S3",
                "has_side_effect",
                "PT-D2"
            ]),
            path(&["PT-D1", "treats", "PT-S1", "treats", "PT-D2"]),
            path(&["PT-D1", "treats", "PT-S2", "treats", "PT-D2"]),
        ]
    );
    // Every element once: 2 drugs, 3 symptoms, 6 links.
    assert_eq!(r.elements.len(), 11);
    // The same answer through the transports' entry point.
    let by_name = api
        .call_named(
            "paths",
            json!({"from": {"type": "Drug", "name": "PT-D1"}, "to": {"type": "Drug", "name": "PT-D2"}}),
        )
        .expect("call");
    assert_eq!(by_name["hops"], 2);
    assert_eq!(by_name["paths"].as_array().map(Vec::len), Some(3));
}

#[test]
fn directed_paths_follow_links_from_subject_to_object_only() {
    let (_dir, api) = fixture();
    diamond(&api);
    let directed = PathsRequest {
        directed: Some(true),
        ..request("PT-D1", "PT-D2")
    };
    let r = api.paths(&directed).expect("paths");
    assert_eq!(r.hops, None, "no link leads into PT-D2");
    assert!(r.paths.is_empty() && r.elements.is_empty());
    // Towards a symptom, the direction agrees with the links.
    let to_symptom = PathsRequest {
        to: concept("PT-S1", "Symptom"),
        ..directed
    };
    let r = api.paths(&to_symptom).expect("paths");
    assert_eq!(named(&r), vec![path(&["PT-D1", "treats", "PT-S1"])]);
}

#[test]
fn paths_can_be_restricted_to_predicates_and_bounded_by_hops_and_count() {
    let (_dir, api) = fixture();
    diamond(&api);
    let only = PathsRequest {
        predicates: Some(vec!["has_side_effect".into()]),
        ..request("PT-D1", "PT-D2")
    };
    let r = api.paths(&only).expect("paths");
    assert_eq!(
        named(&r),
        vec![path(&[
            "PT-D1",
            "has_side_effect",
            "PT-S3",
            "has_side_effect",
            "PT-D2"
        ])]
    );

    let one_hop = PathsRequest {
        max_hops: Some(1),
        ..request("PT-D1", "PT-D2")
    };
    let r = api.paths(&one_hop).expect("paths");
    assert_eq!(r.hops, None, "the drugs are two links apart");

    let first = PathsRequest {
        limit: Some(2),
        ..request("PT-D1", "PT-D2")
    };
    let r = api.paths(&first).expect("paths");
    assert_eq!(r.paths.len(), 2);
    assert!(r.truncated, "a third path exists");
    for p in &r.paths {
        assert_eq!(p.nodes.len(), 3);
        assert_eq!(p.links.len(), 2);
    }
}

#[test]
fn paths_through_the_example_graph_cross_classes_and_symptoms() {
    let (_dir, api) = fixture();
    // Aspirin and Ibuprofen are both NSAIDs and both treat Headache.
    let r = api.paths(&request("Aspirin", "Ibuprofen")).expect("paths");
    assert_eq!(r.hops, Some(2));
    let found = named(&r);
    assert!(
        found.contains(&path(&[
            "Aspirin",
            "is_class_of",
            "NSAID",
            "is_class_of",
            "Ibuprofen"
        ])),
        "{found:?}"
    );
    assert!(
        found.contains(&path(&[
            "Aspirin",
            "treats",
            "Headache",
            "treats",
            "Ibuprofen"
        ])),
        "{found:?}"
    );
    // An element reaches itself in no hops.
    let r = api.paths(&request("Aspirin", "Aspirin")).expect("paths");
    assert_eq!(r.hops, Some(0));
    assert_eq!(named(&r), vec![path(&["Aspirin"])]);
}

#[test]
fn paths_errors_name_what_is_wrong() {
    let (_dir, api) = fixture();
    let missing = api
        .paths(&request("Aspirin", "Panacea"))
        .expect_err("missing");
    assert_eq!(missing.code.as_str(), "KIP_3002");
    assert!(missing.message.contains("Panacea"), "{}", missing.message);

    let typo = PathsRequest {
        predicates: Some(vec!["treat".into()]),
        ..request("Aspirin", "Ibuprofen")
    };
    let e = api.paths(&typo).expect_err("unknown predicate");
    assert_eq!(e.code.as_str(), "KIP_2001");
    assert!(
        e.to_response().to_string().contains("treats"),
        "suggests `treats`"
    );

    let e = api
        .call_named("paths", json!({"from": {"id": "X:1"}, "to": {"id": "C:1"}}))
        .expect_err("malformed id");
    assert_eq!(e.code.as_str(), "API_BAD_REQUEST");
    assert_eq!(e.to_response()["error"]["data"]["path"], "from.id");
}

// ------------------------------------------------------------------ settings

fn put(api: &Api, key: &str, value: Json) {
    api.settings_put(&SettingsPutRequest {
        key: key.into(),
        value,
    })
    .expect("put");
}

fn get(api: &Api, prefix: Option<&str>) -> serde_json::Map<String, Json> {
    api.settings_get(&SettingsGetRequest {
        prefix: prefix.map(str::to_owned),
    })
    .expect("get")
    .values
}

#[test]
fn settings_are_kept_by_key_read_by_prefix_and_forgotten_with_null() {
    let (dir, api) = fixture();
    let seq = api.last_change_seq().expect("seq");
    put(
        &api,
        "ui.styles",
        json!([{"on": "type", "name": "Drug", "color": "#ff0000"}]),
    );
    put(
        &api,
        "ui.queries",
        json!([{"name": "drugs", "text": "FIND(?d) WHERE { ?d {type: \"Drug\"} }"}]),
    );
    put(&api, "other", json!(1));
    let all = get(&api, None);
    assert_eq!(all.len(), 3);
    assert_eq!(all["ui.styles"][0]["color"], "#ff0000");
    let ui = get(&api, Some("ui."));
    assert_eq!(
        ui.keys().collect::<Vec<_>>(),
        vec!["ui.queries", "ui.styles"]
    );
    assert_eq!(
        api.last_change_seq().expect("seq"),
        seq,
        "settings are not knowledge: the change log does not move"
    );

    put(&api, "other", Json::Null);
    assert!(!get(&api, None).contains_key("other"));

    // Kept in the nexus folder: another API over it (another host) reads them.
    drop(api);
    let nexus = Nexus::open(dir.path()).expect("reopen");
    let again = Api::new(Arc::new(nexus), "kip-serve");
    assert_eq!(
        get(&again, Some("ui.styles"))["ui.styles"][0]["name"],
        "Drug"
    );
}

#[test]
fn settings_see_only_their_own_namespace_and_check_keys() {
    let (_dir, api, nexus) = fixture_and_nexus();
    // The watcher's memory lives in the same table; settings do not see it.
    nexus
        .set_state("capsule/watch/a.kip", &json!({"hash": "x"}))
        .expect("state");
    assert!(get(&api, None).is_empty());
    assert!(get(&api, Some("../capsule")).is_empty());

    for bad in ["", "a b", "ü", &"k".repeat(201)] {
        let e = api
            .settings_put(&SettingsPutRequest {
                key: bad.into(),
                value: json!(1),
            })
            .expect_err(bad);
        assert_eq!(e.code.as_str(), "API_BAD_REQUEST");
        assert_eq!(e.to_response()["error"]["data"]["path"], "key");
    }

    let ro = api.clone().read_only(true);
    let e = ro
        .settings_put(&SettingsPutRequest {
            key: "ui.styles".into(),
            value: json!([]),
        })
        .expect_err("read-only");
    assert_eq!(e.code.as_str(), "KIP_3004");
    assert!(ro.settings_get(&SettingsGetRequest::default()).is_ok());
}
