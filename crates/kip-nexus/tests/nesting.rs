//! The nesting limit through `execute_kip`: every nestable construct nested
//! 100,000 deep answers a positioned `KIP_1001` "nested deeper than 256
//! levels"; nested exactly to the limit, it runs — read, written, stored,
//! read back, explained (the pattern diagram) and dry-run. Every request
//! runs on a thread with a 2 MiB stack (what spawned threads and async
//! workers get), so a pass of the engine that recursed past the limit would
//! overflow and abort this test binary.

use kip_nexus::{Context, ExecuteKip, Nexus};
use serde_json::{Map, Value as Json, json};

const MAX: usize = kip_lang::MAX_DEPTH;

/// Runs `f` on a thread with a 2 MiB stack.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the thread did not panic")
}

/// A nexus with a schema-free type `Thing`, a predicate `p`, the things `a`
/// and `b` and the proposition `(a, "p", b)`.
fn nexus() -> (tempfile::TempDir, std::sync::Arc<Nexus>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let nexus = Nexus::open(dir.path()).expect("nexus opens");
    let setup = r#"
        UPSERT {
          CONCEPT ?t { {type: "$ConceptType", name: "Thing"} SET ATTRIBUTES {description: "Anything."} }
          CONCEPT ?p { {type: "$PropositionType", name: "p"} SET ATTRIBUTES {description: "Any link."} }
        }
        UPSERT {
          CONCEPT ?b { {type: "Thing", name: "b"} }
          CONCEPT ?a { {type: "Thing", name: "a"} SET PROPOSITIONS { ("p", ?b) } }
        }
    "#;
    let r = nexus.execute(&ExecuteKip::command(setup), &Context::default());
    assert!(r.get("error").is_none(), "{r:#}");
    (dir, std::sync::Arc::new(nexus))
}

/// Executes `request` on a 2 MiB thread.
fn execute(nexus: &std::sync::Arc<Nexus>, request: ExecuteKip) -> Json {
    let nexus = nexus.clone();
    small_stack(move || nexus.execute(&request, &Context::default()))
}

struct Construct {
    name: &'static str,
    head: &'static str,
    unit: &'static str,
    inner: &'static str,
    close: &'static str,
    foot: &'static str,
    /// The most units that stay within the limit.
    limit: usize,
    /// Which unit holds the first bracket past the limit, and where in it.
    first_too_deep: (usize, usize),
}

impl Construct {
    fn text(&self, n: usize) -> String {
        format!(
            "{}{}{}{}{}",
            self.head,
            self.unit.repeat(n),
            self.inner,
            self.close.repeat(n),
            self.foot
        )
    }

    fn too_deep_at(&self) -> usize {
        let (unit, index) = self.first_too_deep;
        self.head.len() + self.unit.len() * (unit - 1) + index
    }
}

const WHERE_HEAD: &str = "FIND(?x.name)\nWHERE {\n  ?x {type: \"Thing\"}\n  ";
const UPSERT_HEAD: &str =
    "UPSERT {\n  CONCEPT ?d {\n    {type: \"Thing\", name: \"deep\"}\n    SET ATTRIBUTES {deep: ";

fn constructs() -> Vec<Construct> {
    vec![
        Construct {
            name: "NOT blocks",
            head: WHERE_HEAD,
            unit: "NOT { ",
            inner: "?x {name: \"b\"} ",
            close: "} ",
            foot: "\n}",
            limit: MAX - 2,
            first_too_deep: (MAX, 4),
        },
        Construct {
            name: "OPTIONAL blocks",
            head: WHERE_HEAD,
            unit: "OPTIONAL { ",
            inner: "(?x, \"p\", ?y) ",
            close: "} ",
            foot: "\n}",
            limit: MAX - 2,
            first_too_deep: (MAX, 9),
        },
        Construct {
            name: "UNION blocks",
            head: WHERE_HEAD,
            unit: "UNION { ",
            inner: "?x {name: \"b\"} ",
            close: "} ",
            foot: "\n}",
            limit: MAX - 2,
            first_too_deep: (MAX, 6),
        },
        Construct {
            name: "parentheses in FILTER",
            head: "FIND(?x.name)\nWHERE {\n  ?x {type: \"Thing\"}\n  FILTER(",
            unit: "(",
            inner: "?x.name == \"b\"",
            close: ")",
            foot: ")\n}",
            limit: MAX - 2,
            first_too_deep: (MAX - 1, 0),
        },
        Construct {
            name: "negated parentheses in FILTER",
            head: "FIND(?x.name)\nWHERE {\n  ?x {type: \"Thing\"}\n  FILTER(",
            unit: "!(",
            inner: "?x.name == \"b\"",
            close: ")",
            foot: ")\n}",
            // The tree is the limit here: 254 `!` over a comparison.
            limit: MAX - 2,
            first_too_deep: (MAX - 1, 1),
        },
        Construct {
            name: "arrays",
            head: UPSERT_HEAD,
            unit: "[",
            inner: "1",
            close: "]",
            foot: "}\n  }\n}",
            limit: MAX - 3,
            first_too_deep: (MAX - 2, 0),
        },
        Construct {
            name: "objects",
            head: UPSERT_HEAD,
            unit: "{a: ",
            inner: "1",
            close: "}",
            foot: "}\n  }\n}",
            limit: MAX - 3,
            first_too_deep: (MAX - 2, 0),
        },
        Construct {
            name: "nested propositions",
            head: "FIND(?q)\nWHERE {\n  ?q ",
            unit: "(?s, \"p\", ",
            inner: "?o",
            close: ")",
            foot: "\n}",
            limit: MAX - 1,
            first_too_deep: (MAX, 0),
        },
        Construct {
            name: "inline concepts",
            head: "FIND(?q)\nWHERE {\n  ?q ",
            unit: "({type: \"Thing\"}, \"p\", ",
            inner: "{name: \"b\"}",
            close: ")",
            foot: "\n}",
            limit: MAX - 2,
            first_too_deep: (MAX - 1, 1),
        },
    ]
}

#[test]
fn every_construct_nested_100_000_deep_answers_a_positioned_kip_1001() {
    let (_d, nexus) = nexus();
    for c in constructs() {
        let text = c.text(100_000);
        let r = execute(&nexus, ExecuteKip::command(text.clone()));
        let e = &r["error"];
        assert_eq!(e["code"], "KIP_1001", "{}: {e}", c.name);
        assert!(
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("nested deeper than 256 levels")),
            "{}: {e}",
            c.name
        );
        let at = c.too_deep_at();
        let line = text[..at].matches('\n').count() + 1;
        let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
        assert_eq!(
            (e["data"]["line"].as_u64(), e["data"]["column"].as_u64()),
            (Some(line as u64), Some(column as u64)),
            "{}",
            c.name
        );
        // As a dry run, with explain, and in a batch: the same answer.
        let mut request = ExecuteKip::command(text.clone()).dry_run();
        request.explain = Some(true);
        let r = execute(&nexus, request);
        assert_eq!(r["error"]["code"], "KIP_1001", "{}", c.name);
        let batch = ExecuteKip {
            commands: Some(vec![
                kip_nexus::BatchItem::Text("DESCRIBE PRIMER".into()),
                kip_nexus::BatchItem::Text(text),
            ]),
            ..ExecuteKip::default()
        };
        let r = execute(&nexus, batch);
        assert!(r.to_string().contains("KIP_1001"), "{}: batch", c.name);
    }
}

#[test]
fn every_construct_nested_to_the_limit_runs_explains_and_dry_runs() {
    let (_d, nexus) = nexus();
    for c in constructs() {
        let text = c.text(c.limit);
        for (mode, request) in [
            ("dry run", ExecuteKip::command(text.clone()).dry_run()),
            ("explained", {
                let mut r = ExecuteKip::command(text.clone());
                r.explain = Some(true);
                r
            }),
            ("run", ExecuteKip::command(text.clone())),
        ] {
            let r = execute(&nexus, request);
            assert!(r.get("error").is_none(), "{} ({mode}): {r:#}", c.name);
        }
        // One more level is one too many.
        let r = execute(&nexus, ExecuteKip::command(c.text(c.limit + 1)));
        assert_eq!(r["error"]["code"], "KIP_1001", "{}", c.name);
    }
    // The deepest values were stored and read back whole.
    let r = execute(
        &nexus,
        ExecuteKip::command(
            "FIND(?d.attributes.deep) WHERE { ?d {type: \"Thing\", name: \"deep\"} }",
        ),
    );
    let deep = r["result"][0].clone();
    assert_eq!(kip_lang::json_depth(&deep), MAX - 3, "{r}");
}

fn deep_array(depth: usize) -> Json {
    let mut v = json!("leaf");
    for _ in 0..depth {
        v = Json::Array(vec![v]);
    }
    v
}

#[test]
fn a_parameter_counts_as_if_written_in_place() {
    let (_d, nexus) = nexus();
    let text = "UPSERT {\n  CONCEPT ?d {\n    {type: \"Thing\", name: \"param\"}\n    SET ATTRIBUTES {deep: :v}\n  }\n}";
    let with = |depth: usize| {
        let mut params = Map::new();
        params.insert("v".into(), deep_array(depth));
        ExecuteKip::command(text).with_parameters(params)
    };
    // Three brackets around the placeholder: 253 levels fit, 254 do not.
    let r = execute(&nexus, with(MAX - 3));
    assert!(r.get("error").is_none(), "{r:#}");
    let r = execute(&nexus, with(MAX - 2));
    let e = &r["error"];
    assert_eq!(e["code"], "KIP_1001", "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains(":v is nested deeper than 256"))
    );
    assert_eq!(
        (e["data"]["line"].as_u64(), e["data"]["column"].as_u64()),
        (Some(4), Some(27))
    );
    // About the deepest a JSON reader lets through (serde_json refuses a
    // 128th level) inside the deepest text that leaves room for it.
    let in_filter = format!(
        "FIND(?x.name) WHERE {{ ?x {{type: \"Thing\"}} {}FILTER(IN(?x.name, :v)){} }}",
        "OPTIONAL { ".repeat(MAX - 131),
        " }".repeat(MAX - 131)
    );
    let mut params = Map::new();
    params.insert("v".into(), deep_array(128));
    let r = execute(
        &nexus,
        ExecuteKip::command(in_filter.clone()).with_parameters(params),
    );
    assert!(r.get("error").is_none(), "{r:#}");
    let mut params = Map::new();
    params.insert("v".into(), deep_array(129));
    let r = execute(
        &nexus,
        ExecuteKip::command(in_filter).with_parameters(params),
    );
    assert_eq!(r["error"]["code"], "KIP_1001", "{r:#}");
}

#[test]
fn the_store_holds_values_exactly_as_deep_as_the_language_allows() {
    // kip-store sits below kip-lang and cannot name its constant: this
    // pins the two equal, so that the one limit is one number.
    assert_eq!(kip_store::codec::value::MAX_DEPTH, kip_lang::MAX_DEPTH);
}

#[test]
fn the_deepest_expression_inside_the_deepest_blocks_runs() {
    // Both limits at once: 253 nested blocks (with WHERE and FILTER, 255
    // brackets) around FILTER trees 256 deep, a `!` chain and an `||` chain.
    let (_d, nexus) = nexus();
    let cmp = "?x.name == \"b\"";
    let texts = [
        ("NOT { ", format!("{}{cmp}", "!".repeat(MAX - 2))),
        ("OPTIONAL { ", vec![cmp; MAX - 1].join(" || ")),
        ("UNION { ", vec![cmp; MAX - 1].join(" && ")),
    ]
    .map(|(block, expr)| {
        format!(
            "FIND(?x.name) WHERE {{ ?x {{type: \"Thing\"}} {}?x {{type: \"Thing\"}} FILTER({expr}){} }}",
            block.repeat(MAX - 3),
            " }".repeat(MAX - 3)
        )
    });
    // And a query that finds nothing, so that explain diagnoses why.
    let nothing = format!(
        "FIND(?x.name) WHERE {{ ?x {{type: \"Thing\"}} FILTER({}) {}?x {{type: \"Thing\"}}{} }}",
        vec!["?x.name == \"zzz\""; MAX - 1].join(" || "),
        "NOT { ".repeat(MAX - 2),
        " }".repeat(MAX - 2)
    );
    for text in texts.into_iter().chain([nothing]) {
        let block = text[..60].to_owned();
        let mut explained = ExecuteKip::command(text.clone());
        explained.explain = Some(true);
        for request in [ExecuteKip::command(text.clone()), explained] {
            let r = execute(&nexus, request);
            assert!(r.get("error").is_none(), "{block}: {r:#}");
        }
    }
}

#[test]
fn the_pattern_diagram_draws_blocks_nested_to_the_limit() {
    for c in constructs() {
        let text = c.text(c.limit);
        let name = c.name;
        small_stack(move || {
            let commands = kip_lang::parse(&text).unwrap_or_else(|e| panic!("{name}: {e:#?}"));
            if let kip_lang::ast::Command::Find(q) = &commands[0] {
                let diagram = kip_nexus::outline(&text, &q.where_);
                let json = serde_json::to_value(&diagram).expect("serializes");
                assert!(
                    json["blocks"].as_array().is_some_and(|b| !b.is_empty()),
                    "{name}"
                );
            }
        });
    }
}
