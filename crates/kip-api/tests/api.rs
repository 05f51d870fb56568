//! The API's operations against a real nexus (the medical example capsules):
//! execute and read-only refusal, editor diagnostics with exact ranges,
//! neighbourhood counts and paging, change notifications, and dispatch by
//! operation name.

use std::path::PathBuf;
use std::sync::Arc;

use kip_api::{
    Api, ChangesRequest, Direction, ElementRef, ErrorCode, ExecuteRequest, KipCode,
    NeighbourhoodRequest, Operation, ValidateRequest,
};
use kip_nexus::Nexus;
use serde_json::{Value as Json, json};

fn fixture() -> (tempfile::TempDir, Api) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples");
    let api = Api::new(Arc::new(nexus), "test-host");
    for name in ["10_medical_schema.kip", "11_medical_data.kip"] {
        let text = std::fs::read_to_string(examples.join(name)).expect("example capsule");
        let r = api.execute(ExecuteRequest::command(text));
        assert!(r.get("error").is_none(), "{name}: {r:#}");
    }
    (dir, api)
}

#[track_caller]
fn ok(api: &Api, command: &str) -> Json {
    let r = api.execute(ExecuteRequest::command(command));
    assert!(r.get("error").is_none(), "{command}\n{r:#}");
    r["result"].clone()
}

// ------------------------------------------------------------------ execute

#[test]
fn execute_returns_the_kip_response_and_read_only_refuses_kml() {
    let (_dir, api) = fixture();
    let names = ok(
        &api,
        r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
    );
    assert_eq!(names, json!(["Aspirin"]));

    let upsert = r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Nausea"} } }"#;
    let refused = api.execute_readonly(ExecuteRequest::command(upsert));
    assert_eq!(refused["error"]["code"], "KIP_3004");
    assert_eq!(refused["error"]["data"]["line"], 1);

    let ro = api.clone().read_only(true);
    let refused = ro.execute(ExecuteRequest::command(upsert));
    assert_eq!(refused["error"]["code"], "KIP_3004");
    let found = ok(
        &api,
        r#"FIND(COUNT(?s)) WHERE { ?s {type: "Symptom", name: "Nausea"} }"#,
    );
    assert_eq!(found, json!(0), "a refused write changes nothing");

    // A KIP error is a normal response, also through `call`.
    let r = api
        .call(Operation::Execute, json!({"command": "FIDN(?x)"}))
        .expect("reaches the engine");
    assert_eq!(r["error"]["code"], "KIP_1001");
}

#[test]
fn execute_requests_round_trip_their_json_and_refuse_typos() {
    let samples = [
        json!({"command": "DESCRIBE PRIMER"}),
        json!({"command": "FIND(?x) WHERE { ?x {type: :t} }", "parameters": {"t": "Drug"}, "dry_run": true}),
        json!({"commands": ["DESCRIBE PRIMER", {"command": "SEARCH CONCEPT :q", "parameters": {"q": "a"}}], "parameters": {"q": "b"}}),
    ];
    for sample in samples {
        let ours: ExecuteRequest = serde_json::from_value(sample.clone()).expect("ours parses");
        assert_eq!(serde_json::to_value(&ours).ok(), Some(sample));
    }
    // Unknown fields are refused, so a typo is never silently ignored.
    let typo = json!({"comand": "DESCRIBE PRIMER"});
    assert!(serde_json::from_value::<ExecuteRequest>(typo).is_err());
}

// ------------------------------------------------------------------ validate

fn validate(api: &Api, text: &str, parameters: Option<Json>) -> kip_api::ValidateResponse {
    api.validate(&ValidateRequest {
        text: text.to_owned(),
        parameters: parameters.and_then(|p| p.as_object().cloned()),
    })
}

/// The console draws the WHERE block while the user types: `validate`
/// returns its diagram even when the schema check fails (an undefined
/// type), and none for a text that is not one FIND or DELETE.
#[test]
fn validate_returns_the_pattern_diagram_of_a_find() {
    let (_dir, api) = fixture();
    let r = validate(
        &api,
        r#"FIND(?d.name) WHERE { ?d {type: "Drg"} (?d, "treats", ?s) }"#,
        None,
    );
    assert!(!r.ok, "Drg is not a type");
    let p = r.pattern.expect("a diagram despite the error");
    assert_eq!(p["nodes"][0]["type"], "Drg");
    assert_eq!(p["edges"][0]["predicate"], "treats");
    assert!(validate(&api, "DESCRIBE PRIMER", None).pattern.is_none());
    assert!(validate(&api, "FIND(?d WHERE", None).pattern.is_none());
}

#[test]
fn validate_reports_every_error_with_ranges_in_bytes_columns_and_utf16() {
    let (_dir, api) = fixture();
    // Line 2 starts with a CJK name (3 bytes, 1 column, 1 UTF-16 unit per
    // character) and an emoji (4 bytes, 1 column, 2 UTF-16 units) before
    // the undefined variable `?y`.
    let text = "FIND(?x)\nWHERE { ?x {name: \"阿司匹林😀\"} FILTER(?y.name == \"a\" && ?z.name == \"b\") }";
    let r = validate(&api, text, None);
    assert!(!r.ok);
    assert_eq!(r.diagnostics.len(), 2, "{r:#?}");
    let d = &r.diagnostics[0];
    assert_eq!(d.code, ErrorCode::Kip(KipCode::ReferenceError));
    let y = text.find("?y").expect("?y");
    assert_eq!(d.from.offset as usize, y);
    assert_eq!(d.from.line, 2);
    let line_start = text.find('\n').expect("newline") + 1;
    assert_eq!(
        d.from.column as usize,
        text[line_start..y].chars().count() + 1
    );
    assert_eq!(d.from.utf16 as usize, text[..y].encode_utf16().count());
    assert_ne!(
        d.from.utf16, d.from.offset,
        "the CJK text makes the units differ"
    );
    assert!(d.to.offset > d.from.offset);
    assert!(!d.hint.is_empty());
    assert_eq!(
        r.diagnostics[1].from.offset as usize,
        text.find("?z").expect("?z")
    );
}

#[test]
fn validate_suggests_the_keyword_and_checks_names_against_the_live_schema() {
    let (_dir, api) = fixture();
    let r = validate(&api, "FIDN(?x) WHERE { ?x {type: \"Drug\"} }", None);
    assert_eq!(
        r.diagnostics[0].code,
        ErrorCode::Kip(KipCode::InvalidSyntax)
    );
    assert_eq!(r.diagnostics[0].suggestions, ["FIND"]);
    assert_eq!(
        (r.diagnostics[0].from.offset, r.diagnostics[0].to.offset),
        (0, 4)
    );

    let r = validate(&api, "FIND(?x) WHERE { ?x {type: \"Drugg\"} }", None);
    assert!(r.schema_checked);
    assert_eq!(r.diagnostics.len(), 1, "{r:#?}");
    assert_eq!(r.diagnostics[0].code, ErrorCode::Kip(KipCode::TypeMismatch));
    assert!(r.diagnostics[0].suggestions.contains(&"Drug".to_owned()));

    let r = validate(&api, "FIND(?x) WHERE { ?x {type: \"Drug\"} }", None);
    assert!(r.ok && r.schema_checked && r.commands == 1);
}

#[test]
fn validate_binds_placeholders_only_when_parameters_are_given() {
    let (_dir, api) = fixture();
    let text = "FIND(?x) WHERE { ?x {type: :t} } LIMIT :n";
    let r = validate(&api, text, None);
    assert!(r.ok && !r.schema_checked);
    let r = validate(&api, text, Some(json!({"t": "Drug"})));
    assert_eq!(r.diagnostics.len(), 1);
    assert_eq!(
        r.diagnostics[0].code,
        ErrorCode::Kip(KipCode::ReferenceError)
    );
    assert_eq!(
        r.diagnostics[0].from.offset as usize,
        text.find(":n").expect(":n")
    );
    let r = validate(&api, text, Some(json!({"t": "Drug", "n": 3})));
    assert!(r.ok && r.schema_checked);
}

#[test]
fn validate_checks_kml_for_syntax_only_and_writes_nothing() {
    let (_dir, api) = fixture();
    let before = api.last_change_seq().expect("seq");
    let r = validate(
        &api,
        r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Nausea"} } }"#,
        None,
    );
    assert!(r.ok && !r.schema_checked);
    assert_eq!(api.last_change_seq().expect("seq"), before);
}

/// The console decides from `validate` alone whether a text writes (and so
/// must be previewed) and which parameters to ask for. The write here
/// follows a query on the same line, which the console's old text test
/// missed; the CJK name makes bytes and UTF-16 units differ.
#[test]
fn validate_outlines_each_command_with_its_kind_range_and_placeholders() {
    use kip_api::CommandKind::{Meta, Query, Write};
    let (_dir, api) = fixture();
    let find = r#"FIND(?d.name) WHERE { ?d {name: "阿司匹林"} } LIMIT :k"#;
    let upsert = r#"UPSERT { CONCEPT ?x { {type: "Symptom", name: :n} SET ATTRIBUTES { note: ":not_one" } } }"#;
    let text = format!("{find} {upsert}\n// :nor_this\nDESCRIBE PRIMER");
    let r = validate(&api, &text, None);
    assert!(r.ok, "{r:#?}");
    let kinds: Vec<_> = r.outline.iter().map(|c| (c.kind, c.writes)).collect();
    assert_eq!(kinds, [(Query, false), (Write, true), (Meta, false)]);
    let source = |from: &kip_api::TextPosition, to: &kip_api::TextPosition| {
        text[from.offset as usize..to.offset as usize].to_owned()
    };
    let commands: Vec<_> = r.outline.iter().map(|c| source(&c.from, &c.to)).collect();
    assert_eq!(commands, [find, upsert, "DESCRIBE PRIMER"]);
    let at = text.find("UPSERT").expect("UPSERT");
    assert_eq!(
        r.outline[1].from.utf16 as usize,
        text[..at].encode_utf16().count()
    );
    assert_ne!(r.outline[1].from.utf16, r.outline[1].from.offset);
    assert_eq!((r.outline[1].from.line, r.outline[1].from.column), (1, 52));
    let placeholders: Vec<Vec<(String, String)>> = r
        .outline
        .iter()
        .map(|c| {
            c.placeholders
                .iter()
                .map(|p| (p.name.clone(), source(&p.from, &p.to)))
                .collect()
        })
        .collect();
    let one = |n: &str| vec![(n.to_owned(), format!(":{n}"))];
    assert_eq!(placeholders, [one("k"), one("n"), vec![]]);
    let n = &r.outline[1].placeholders[0];
    assert_eq!(
        n.from.utf16 as usize,
        text[..text.find(":n").expect(":n")].encode_utf16().count()
    );

    // The outline does not depend on the other checks passing.
    let with = validate(&api, &text, Some(json!({"k": "three", "n": "x"})));
    assert!(!with.ok, "LIMIT needs a count");
    assert_eq!(with.outline, r.outline);
    // A text that does not parse cannot run, so there is nothing to outline.
    let broken = validate(&api, &format!("{find} UPSERT {{"), None);
    assert!(!broken.ok && broken.outline.is_empty());

    // The wire shape both hosts (HTTP and the desktop shell) serve.
    let wire = api
        .call_named("validate", json!({"text": "FIND(?d) WHERE { ?d {type: \"Drug\"} } DELETE CONCEPT ?d DETACH WHERE { ?d {name: :n} }"}))
        .expect("validate");
    assert_eq!(wire["outline"][0]["kind"], "query");
    assert_eq!(wire["outline"][1]["kind"], "write");
    assert_eq!(wire["outline"][1]["writes"], true);
    assert_eq!(wire["outline"][1]["placeholders"][0]["name"], "n");
    assert!(wire["outline"][1]["placeholders"][0]["from"]["utf16"].is_u64());
}

// ------------------------------------------------------------------ neighbourhood

/// One drug with `n` outgoing `treats` links to generated symptoms.
fn hub(api: &Api, n: usize) {
    let mut text = String::from("UPSERT {\n");
    for i in 0..n {
        text.push_str(&format!(
            "  CONCEPT ?s{i} {{ {{type: \"Symptom\", name: \"S{i:04}\"}} }}\n"
        ));
    }
    text.push_str("  CONCEPT ?hub { {type: \"Drug\", name: \"Hub\"} SET ATTRIBUTES { description: \"A hub.\" } SET PROPOSITIONS {\n");
    for i in 0..n {
        text.push_str(&format!("    (\"treats\", ?s{i})\n"));
    }
    text.push_str("  } }\n}");
    ok(api, &text);
}

fn hub_request(offset: Option<u64>, limit: Option<u32>) -> NeighbourhoodRequest {
    NeighbourhoodRequest {
        element: ElementRef::Concept {
            ty: "Drug".into(),
            name: "Hub".into(),
        },
        predicate: Some("treats".into()),
        direction: None,
        offset,
        limit,
        as_of: None,
    }
}

#[test]
fn neighbourhood_counts_links_by_predicate_and_pages_without_repeats() {
    let (_dir, api) = fixture();
    hub(&api, 120);
    let first = api.neighbourhood(&hub_request(None, None)).expect("page 1");
    assert_eq!(first.element["name"], "Hub");
    let treats = first
        .outgoing
        .iter()
        .find(|c| c.predicate == "treats")
        .expect("treats");
    assert_eq!(treats.count, 120);
    assert_eq!(
        first.total_outgoing,
        first.outgoing.iter().map(|c| c.count).sum::<u64>()
    );
    let page = first.page.expect("a page");
    assert_eq!(
        (page.total, page.links.len(), page.next_offset),
        (120, 50, Some(50))
    );

    let mut seen = std::collections::BTreeSet::new();
    let mut offset = Some(0);
    while let Some(o) = offset {
        let page = api
            .neighbourhood(&hub_request(Some(o), Some(50)))
            .expect("page")
            .page
            .expect("a page");
        for link in &page.links {
            assert_eq!(link.proposition["predicate"], "treats");
            assert_eq!(link.proposition["subject"], first.element["id"]);
            assert_eq!(link.neighbour["type"], "Symptom");
            assert!(
                seen.insert(link.neighbour["name"].to_string()),
                "repeated {}",
                link.neighbour["name"]
            );
        }
        offset = page.next_offset;
    }
    assert_eq!(seen.len(), 120);

    // The same links seen from a symptom: one incoming `treats`.
    let symptom = first_neighbour_id(&api);
    let r = api
        .neighbourhood(&NeighbourhoodRequest {
            element: ElementRef::Id { id: symptom },
            predicate: Some("treats".into()),
            direction: Some(Direction::Incoming),
            offset: None,
            limit: Some(10),
            as_of: None,
        })
        .expect("incoming");
    assert_eq!(r.total_incoming, 1);
    let page = r.page.expect("a page");
    assert_eq!(page.links[0].neighbour["name"], "Hub");
    assert_eq!(page.next_offset, None);
}

fn first_neighbour_id(api: &Api) -> String {
    let page = api
        .neighbourhood(&hub_request(None, Some(1)))
        .expect("page")
        .page
        .expect("a page");
    page.links[0].neighbour["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

#[test]
fn neighbourhood_errors_name_what_is_wrong() {
    let (_dir, api) = fixture();
    let by_id = |id: &str| NeighbourhoodRequest {
        element: ElementRef::Id { id: id.into() },
        predicate: None,
        direction: None,
        offset: None,
        limit: None,
        as_of: None,
    };
    assert_eq!(
        api.neighbourhood(&by_id("C:x")).err().map(|e| e.code),
        Some(ErrorCode::BadRequest)
    );
    assert_eq!(
        api.neighbourhood(&by_id("C:999999")).err().map(|e| e.code),
        Some(ErrorCode::Kip(KipCode::NotFound))
    );
    let mut unknown = hub_request(None, None);
    hub(&api, 1);
    unknown.predicate = Some("treat".into());
    let e = api.neighbourhood(&unknown).expect_err("unknown predicate");
    assert_eq!(e.code, ErrorCode::Kip(KipCode::TypeMismatch));
    assert_eq!(e.data["suggestions"][0], "treats");
}

// ------------------------------------------------------------------ changes

#[test]
fn changes_list_committed_writes_marked_with_their_process() {
    let (_dir, api) = fixture();
    let start = api.last_change_seq().expect("seq");
    assert!(start >= 2, "the fixture's imports were logged");
    ok(
        &api,
        r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Nausea"} } }"#,
    );
    // A dry run and a no-op write are not changes.
    api.execute(ExecuteRequest {
        dry_run: Some(true),
        ..ExecuteRequest::command(r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Vertigo"} } }"#)
    });
    ok(
        &api,
        r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Nausea"} } }"#,
    );

    let r = api
        .changes(&ChangesRequest {
            since: start,
            limit: None,
        })
        .expect("changes");
    assert_eq!(r.last_seq, start + 1);
    assert_eq!(r.changes.len(), 1);
    let c = &r.changes[0];
    assert_eq!(
        (c.seq, c.origin.as_str(), c.pid, c.own_process),
        (start + 1, "test-host", std::process::id(), true)
    );
    assert_eq!(c.stats.concepts_created, 1);
    assert!(!r.reset && !r.more);
    // It names who acted and the write's trace entry, which records it.
    assert_eq!(c.originator.as_deref(), Some(api.originator()));
    let entry = api
        .call(
            Operation::TraceEntry,
            json!({"id": c.trace.as_deref().expect("the trace entry")}),
        )
        .expect("entry");
    // (`change_seq` lists the sequence numbers of the entry's commands.)
    assert_eq!(entry["data"]["change_seq"], json!([c.seq]));

    let r = api
        .changes(&ChangesRequest {
            since: 0,
            limit: Some(1),
        })
        .expect("from 0");
    assert_eq!(r.changes.len(), 1);
    assert!(r.more);
    assert_eq!(r.changes[0].seq, 1);

    let r = api
        .changes(&ChangesRequest {
            since: start + 1,
            limit: None,
        })
        .expect("nothing new");
    assert!(r.changes.is_empty() && !r.reset);
    let r = api
        .changes(&ChangesRequest {
            since: start + 100,
            limit: None,
        })
        .expect("future");
    assert!(
        r.reset,
        "a sequence number from the future means the nexus was replaced"
    );
}

// ------------------------------------------------------------------ dispatch

#[test]
fn calls_by_name_check_operation_and_body() {
    let (_dir, api) = fixture();
    let e = api.call_named("explode", json!({})).expect_err("unknown");
    assert_eq!(e.code, ErrorCode::UnknownOperation);
    assert!(e.hint.contains("execute_readonly"));

    let e = api
        .call_named("validate", json!({"txt": "FIND"}))
        .expect_err("bad body");
    assert_eq!(e.code, ErrorCode::BadRequest);
    assert!(e.message.contains("`validate`"), "{}", e.message);

    let info = api
        .call_named("info", Json::Null)
        .expect("info needs no body");
    assert_eq!(info["origin"], "test-host");
    assert_eq!(info["read_only"], false);
    assert!(info["concepts"].as_u64().is_some_and(|n| n > 10));

    let changes = api
        .call_named("changes", Json::Null)
        .expect("since defaults to 0");
    assert!(changes["changes"].as_array().is_some_and(|c| !c.is_empty()));

    let ro = api.clone().read_only(true);
    let e = ro
        .call(
            Operation::Import,
            json!({"file_name": "a.kip", "text": "DESCRIBE PRIMER"}),
        )
        .expect_err("read-only refuses imports");
    assert_eq!(e.code, ErrorCode::Kip(KipCode::ImmutableTarget));
    for op in Operation::ALL {
        assert_eq!(Operation::from_name(op.name()), Some(*op));
    }
}

// ------------------------------------------------------------------ capsules

const GOOD_BUNDLE: &str = "\
- type: Symptom
  name: Nausea
  description: Feeling sick.
- type: treats
  source: { type: Drug, name: Aspirin }
  target: { type: Symptom, name: Nausea }
";

const BROKEN_BUNDLE: &str = "\
- type: Symptom
  name: Dizziness
- type: Symptm
  name: Vertigo
";

#[test]
fn the_knowledge_schema_is_generated_from_the_live_types() {
    let (_dir, api) = fixture();
    let schema = serde_json::to_value(api.knowledge_schema().expect("schema")).expect("json");
    assert_eq!(
        schema["full_bundle_schema"]["$schema"],
        "http://json-schema.org/draft-07/schema#"
    );
    assert!(schema["full_bundle_schema"].to_string().contains("Drug"));
    assert!(
        schema["example_yaml"]
            .as_str()
            .is_some_and(|y| !y.is_empty())
    );
    let via_call = api.call(Operation::Schema, Json::Null).expect("by name");
    assert_eq!(via_call, schema);
}

#[test]
fn imports_apply_a_whole_bundle_or_report_every_error_and_apply_nothing() {
    let (_dir, api) = fixture();
    let request = |text: &str, dry_run: Option<bool>| kip_api::ImportRequest {
        file_name: "bundle.yaml".into(),
        text: text.into(),
        dry_run,
    };
    let count = |api: &Api| {
        ok(
            api,
            r#"FIND(COUNT(?s)) WHERE { ?s {type: "Symptom"} FILTER(?s.name == "Nausea" || ?s.name == "Dizziness") }"#,
        )
    };

    let report = |r: kip_api::ImportReport| serde_json::to_value(r).expect("json");
    let preview = report(
        api.import(&request(GOOD_BUNDLE, Some(true)))
            .expect("a report"),
    );
    assert_eq!(preview["status"], "imported", "{preview:#}");
    assert_eq!(count(&api), json!(0), "a dry run writes nothing");

    let failed = report(api.import(&request(BROKEN_BUNDLE, None)).expect("a report"));
    assert_eq!(failed["status"], "failed");
    let errors = failed["errors"].as_array().expect("errors");
    assert!(!errors.is_empty());
    let text = failed.to_string();
    assert!(
        text.contains("Symptm") && text.contains("Symptom"),
        "{failed:#}"
    );
    assert_eq!(
        count(&api),
        json!(0),
        "nothing of a failed bundle is applied"
    );

    let done = report(api.import(&request(GOOD_BUNDLE, None)).expect("a report"));
    assert_eq!(done["status"], "imported", "{done:#}");
    assert_eq!(count(&api), json!(1));
    let treats = ok(
        &api,
        r#"FIND(?d.name) WHERE { (?d, "treats", {type: "Symptom", name: "Nausea"}) }"#,
    );
    assert_eq!(treats, json!(["Aspirin"]));

    let ro = api.clone().read_only(true);
    assert_eq!(
        ro.import(&request(GOOD_BUNDLE, None)).err().map(|e| e.code),
        Some(ErrorCode::Kip(KipCode::ImmutableTarget))
    );
    assert!(
        ro.import(&request(GOOD_BUNDLE, Some(true))).is_ok(),
        "a read-only host may preview"
    );
}

// ------------------------------------------------------------------ format and watch status

#[test]
fn format_gives_canonical_text_or_the_syntax_error() {
    let (_dir, api) = fixture();
    let r = api
        .call_named(
            "format",
            json!({"text": "FIND(?x)   WHERE {?x {type:\"Drug\"}} // keep"}),
        )
        .expect("formats");
    assert_eq!(
        r["formatted"],
        "FIND(?x)\nWHERE {\n  ?x {type: \"Drug\"}\n} // keep\n"
    );
    assert_eq!(r["changed"], true);
    let again = api
        .call_named("format", json!({"text": r["formatted"]}))
        .expect("formats");
    assert_eq!(again["changed"], false);
    let e = api
        .call_named("format", json!({"text": "FIND(?x WHERE"}))
        .expect_err("does not parse");
    assert_eq!(e.code, ErrorCode::Kip(KipCode::InvalidSyntax));
    assert!(e.data.contains_key("line"));
}

#[test]
fn watch_status_follows_the_watchers_events() {
    let (dir, api) = fixture();
    let unwatched = api.watch_status();
    assert_eq!(unwatched.folder, None);
    assert!(unwatched.note.is_some());

    let folder = dir.path().join("capsules");
    let board = kip_api::WatchBoard::new(&folder);
    let api = api.with_watch(board.clone());
    let good = folder.join("a.yaml");
    let bad = folder.join("b.yaml");
    let import = |file_name: &str, text: &str| {
        api.import(&kip_api::ImportRequest {
            file_name: file_name.to_owned(),
            text: text.to_owned(),
            dry_run: None,
        })
        .expect("imports")
    };
    let imported = import("a.yaml", "- type: Symptom\n  name: Chills\n");
    let failed = import("b.yaml", "- type: Symptm\n  name: Chills\n");
    use kip_capsule::WatchEvent as E;
    for event in [
        E::Queued { file: good.clone() },
        E::Queued { file: bad.clone() },
        E::Importing { file: good.clone() },
        E::Imported {
            file: good.clone(),
            report: imported,
        },
        E::Failed {
            file: bad.clone(),
            report: failed,
        },
        E::Ready { files: 2 },
    ] {
        board.apply(&event);
    }
    let status = api.call_named("watch_status", Json::Null).expect("status");
    assert_eq!(status["folder"], folder.display().to_string());
    assert_eq!(status["ready"], true);
    let files = status["files"].as_array().expect("files");
    assert_eq!(files.len(), 2);
    assert_eq!(
        (files[0]["status"].as_str(), files[1]["status"].as_str()),
        (Some("imported"), Some("failed"))
    );
    assert!(files[1]["errors"][0]["message"].is_string(), "{status:#}");

    board.apply(&E::Removed { file: good });
    board.apply(&E::Error {
        message: "the folder vanished".into(),
    });
    let status = api.watch_status();
    assert_eq!(status.files[0].status, kip_api::FileStatus::Removed);
    assert_eq!(status.note.as_deref(), Some("the folder vanished"));
}

#[test]
fn watch_folder_reports_why_it_cannot_watch() {
    let (dir, api) = fixture();
    // A read-only host imports nothing, so it starts no watcher.
    let folder = dir.path().join("capsules");
    std::fs::create_dir_all(&folder).expect("folder");
    let (read_only, watcher) = api.clone().read_only(true).watch_folder(&folder, |_, _| {});
    assert!(watcher.is_none());
    let status = read_only.watch_status();
    assert!(status.folder.is_some());
    assert!(
        status
            .note
            .as_deref()
            .is_some_and(|n| n.contains("read-only")),
        "{status:?}"
    );
    // A folder that does not exist cannot be watched; the note says so.
    let missing = dir.path().join("nowhere");
    let (watching, watcher) = api.watch_folder(&missing, |_, _| {});
    assert!(watcher.is_none());
    let status = watching.watch_status();
    assert_eq!(status.folder, Some(missing.display().to_string()));
    assert!(
        status
            .note
            .as_deref()
            .is_some_and(|n| n.contains("nowhere")),
        "{status:?}"
    );
}

/// RC9–RC10: UPDATE and MERGE are writes, EXPORT is a read (META); each
/// has a WHERE block, so `validate` draws it.
#[test]
fn validate_outlines_update_and_merge_as_writes_and_export_as_meta_with_diagrams() {
    use kip_api::CommandKind::{Meta, Write};
    let (_dir, api) = fixture();
    let update = r#"UPDATE ?d SET ATTRIBUTES { n: ADD(COALESCE(?d.attributes.n, 0), :step) } WHERE { ?d {type: "Drug"} }"#;
    let merge = r#"MERGE CONCEPT ?a INTO ?b WHERE { ?a {type: "Drug", name: "A"} ?b {type: "Drug", name: "B"} }"#;
    let export = r#"EXPORT ?d WHERE { ?d {type: "Drug"} } LIMIT 5"#;
    let r = validate(&api, &format!("{update}\n{merge}\n{export}"), None);
    assert!(r.ok, "{r:#?}");
    let kinds: Vec<_> = r.outline.iter().map(|c| (c.kind, c.writes)).collect();
    assert_eq!(kinds, [(Write, true), (Write, true), (Meta, false)]);
    assert_eq!(r.outline[0].placeholders[0].name, "step");
    for text in [update, merge, export] {
        let p = validate(&api, text, None).pattern;
        let p = p.unwrap_or_else(|| panic!("a diagram for {text}"));
        assert_eq!(p["nodes"][0]["type"], "Drug", "{text}");
    }
}

#[test]
fn check_store_and_backup_are_operations_and_the_schedule_is_remembered() {
    let (_d, api) = fixture();
    let check = api
        .call_named("check_store", Json::Null)
        .expect("check_store");
    assert_eq!(check["ok"], json!(true), "{check}");
    assert!(check["counts"]["concepts"].as_u64().unwrap_or(0) > 0);

    let dest = tempfile::tempdir().expect("tempdir");
    let dest_path = dest.path().display().to_string();
    // No folder and no schedule: a clear refusal.
    let err = api.call_named("backup", json!({})).expect_err("no dest");
    assert!(err.message.contains("dest"), "{}", err.message);
    // A relative folder is refused.
    assert!(
        api.call_named("backup", json!({"dest": "relative"}))
            .is_err()
    );

    let answer = api
        .call_named("backup", json!({"dest": dest_path, "every_hours": 24}))
        .expect("backup");
    let path = answer["backup"]["path"].as_str().expect("path").to_owned();
    assert!(std::path::Path::new(&path).is_file(), "{answer}");
    assert_eq!(answer["schedule"]["every_hours"], json!(24));
    assert_eq!(answer["schedule"]["last"]["path"], json!(path));
    // The copy is a nexus that passes the check.
    let copy = Nexus::open_existing(std::path::Path::new(&path).parent().expect("folder"))
        .expect("the copy opens");
    assert!(copy.check_store().expect("check").ok);

    // The schedule is in the nexus's host state, and not due yet.
    assert_eq!(
        api.backup_schedule()
            .expect("schedule")
            .map(|s| s.every_hours),
        Some(24)
    );
    assert_eq!(api.run_scheduled_backup().expect("scheduled"), None);
    // A second backup goes into a new subfolder.
    let again = api.call_named("backup", json!({})).expect("backup again");
    assert_ne!(again["backup"]["path"], json!(path));
    // Turning the schedule off.
    let off = api
        .call_named("backup", json!({"now": false, "every_hours": 0}))
        .expect("off");
    assert_eq!(off["schedule"], Json::Null);
    assert_eq!(api.backup_schedule().expect("schedule"), None);

    // A read-only host refuses backups.
    let ro = api.clone().read_only(true);
    let err = ro
        .call_named("backup", json!({"dest": dest_path}))
        .expect_err("read-only");
    assert_eq!(err.code.as_str(), "KIP_3004");
}

// ------------------------------------------------------------------ resolve

#[test]
fn every_resolve_is_folded_into_the_trace_with_its_type_properties_and_outcome() {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Arc::new(Nexus::open(dir.path()).expect("nexus opens"));
    // No LLM, whatever the environment says: parameters come from the request.
    let api = Api::new(nexus.clone(), "test-host")
        .with_originator("curator")
        .with_resolver(kip_logic::Resolver::new(nexus.clone(), None));
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../capsules/examples");
    for name in [
        "10_medical_schema.kip",
        "11_medical_data.kip",
        "12_medical_logic.kip",
    ] {
        let text = std::fs::read_to_string(examples.join(name)).expect("example capsule");
        ok(&api, &text);
    }
    let window =
        json!({"instant": true, "start": 1_577_836_800_000_i64, "end": 1_735_689_600_000_i64});
    let request = |params: Json| {
        json!({
            "ot_id": "Drug",
            "unique_identities": [{"name": "Aspirin"}, {"name": "Ibuprofen"}],
            "properties": ["indications_added"],
            "dynamic_params": params,
        })
    };
    for _ in 0..2 {
        let answer = api
            .resolve_logic_properties_json(request(json!({"indications_added": window})))
            .expect("resolves");
        assert_eq!(
            answer["datas"][0]["indications_added"],
            json!(2),
            "{answer:#}"
        );
    }
    let missing = api
        .resolve_logic_properties_json(request(json!({})))
        .expect_err("no parameters and no LLM");
    assert_eq!(missing["error_code"], "MISSING_INPUT_PARAMS", "{missing:#}");

    nexus.flush_trace();
    let page = nexus
        .trace_list(&kip_nexus::TraceFilter {
            text: Some("RESOLVE".into()),
            ..Default::default()
        })
        .expect("trace lists");
    let entries: Vec<Json> = page
        .entries
        .iter()
        .map(|e| serde_json::to_value(e).expect("entry json"))
        .filter(|e| {
            e["data"]["command"]
                .as_str()
                .is_some_and(|c| c.starts_with("RESOLVE "))
        })
        .collect();
    assert_eq!(entries.len(), 1, "one fold for one text: {entries:#?}");
    let e = &entries[0];
    assert_eq!(e["originator"], "curator");
    assert_eq!(e["type"], "TRACE");
    assert_eq!(e["tag"], json!(["TraceError"]), "the last resolve failed");
    assert_eq!(
        e["data"]["command"],
        "RESOLVE Drug (indications_added) FOR 2 instances"
    );
    assert_eq!(e["data"]["count"], 3);
    assert_eq!(e["data"]["outcome"]["error"], "MISSING_INPUT_PARAMS");
}
