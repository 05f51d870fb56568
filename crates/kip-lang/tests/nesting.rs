//! The nesting limit (`kip_lang::MAX_DEPTH`): every nestable construct, nested
//! 100,000 deep, is a positioned `KIP_1001` "nested deeper than 256 levels";
//! nested exactly to the limit, it parses, formats and binds. Everything runs
//! on a thread with a 2 MiB stack (the default of spawned threads and of the
//! test harness), so a pass that recursed past the limit would really
//! overflow and abort this test binary.

use kip_lang::{ErrorCode, KipError, MAX_DEPTH, bind, format_source, parse, parse_where_items};
use serde_json::{Map, Value as Json, json};

/// Runs `f` on a thread with a 2 MiB stack.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the thread did not panic")
}

/// A text nesting `unit` `n` times: `head`, `n` units, `inner`, `n`
/// closers, `foot`.
struct Construct {
    name: &'static str,
    head: &'static str,
    unit: &'static str,
    inner: &'static str,
    close: &'static str,
    foot: &'static str,
    /// The most units that stay within the limit.
    limit: usize,
    /// Which unit's bracket is the first one past the limit, and where in
    /// the unit that bracket is.
    first_too_deep: (usize, usize),
}

impl Construct {
    fn text(&self, n: usize) -> String {
        let mut text =
            String::with_capacity(self.head.len() + n * (self.unit.len() + self.close.len()) + 64);
        text.push_str(self.head);
        for _ in 0..n {
            text.push_str(self.unit);
        }
        text.push_str(self.inner);
        for _ in 0..n {
            text.push_str(self.close);
        }
        text.push_str(self.foot);
        text
    }

    /// The offset of the first bracket past the limit.
    fn too_deep_at(&self) -> usize {
        let (unit, index) = self.first_too_deep;
        self.head.len() + self.unit.len() * (unit - 1) + index
    }
}

const WHERE_HEAD: &str = "FIND(?x)\nWHERE {\n  ?x {type: \"A\"}\n  ";

fn constructs() -> Vec<Construct> {
    // Brackets open before the first unit: `WHERE {` is one level, FILTER's
    // `(` another, `UPSERT {`, `CONCEPT … {` and `SET ATTRIBUTES {` three.
    vec![
        Construct {
            name: "NOT blocks",
            head: WHERE_HEAD,
            unit: "NOT { ",
            inner: "?x {name: \"b\"} ",
            close: "} ",
            foot: "\n}",
            limit: MAX_DEPTH - 2,
            first_too_deep: (MAX_DEPTH, 4),
        },
        Construct {
            name: "OPTIONAL blocks",
            head: WHERE_HEAD,
            unit: "OPTIONAL { ",
            inner: "?x {name: \"b\"} ",
            close: "} ",
            foot: "\n}",
            limit: MAX_DEPTH - 2,
            first_too_deep: (MAX_DEPTH, 9),
        },
        Construct {
            name: "UNION blocks",
            head: WHERE_HEAD,
            unit: "UNION { ",
            inner: "?x {name: \"b\"} ",
            close: "} ",
            foot: "\n}",
            limit: MAX_DEPTH - 2,
            first_too_deep: (MAX_DEPTH, 6),
        },
        Construct {
            name: "parentheses in FILTER",
            head: "FIND(?x)\nWHERE {\n  ?x {type: \"A\"}\n  FILTER(",
            unit: "(",
            inner: "?x.name == \"b\"",
            close: ")",
            foot: ")\n}",
            limit: MAX_DEPTH - 2,
            first_too_deep: (MAX_DEPTH - 1, 0),
        },
        Construct {
            name: "function calls in FILTER",
            head: "FIND(?x)\nWHERE {\n  ?x {type: \"A\"}\n  FILTER(",
            unit: "IS_NULL(",
            inner: "?x.name",
            close: ")",
            foot: ")\n}",
            limit: MAX_DEPTH - 2,
            first_too_deep: (MAX_DEPTH - 1, 7),
        },
        Construct {
            name: "arrays",
            head: "UPSERT {\n  CONCEPT ?d {\n    {type: \"A\", name: \"b\"}\n    SET ATTRIBUTES {deep: ",
            unit: "[",
            inner: "1",
            close: "]",
            foot: "}\n  }\n}",
            limit: MAX_DEPTH - 3,
            first_too_deep: (MAX_DEPTH - 2, 0),
        },
        Construct {
            name: "objects",
            head: "UPSERT {\n  CONCEPT ?d {\n    {type: \"A\", name: \"b\"}\n    SET ATTRIBUTES {deep: ",
            unit: "{a: ",
            inner: "1",
            close: "}",
            foot: "}\n  }\n}",
            limit: MAX_DEPTH - 3,
            first_too_deep: (MAX_DEPTH - 2, 0),
        },
        Construct {
            name: "values in FILTER",
            head: "FIND(?x)\nWHERE {\n  ?x {type: \"A\"}\n  FILTER(IN(?x.name, [",
            unit: "[",
            inner: "1",
            close: "]",
            foot: "]))\n}",
            limit: MAX_DEPTH - 4,
            first_too_deep: (MAX_DEPTH - 3, 0),
        },
        Construct {
            name: "nested propositions",
            head: "FIND(?p)\nWHERE {\n  ?p ",
            unit: "(?a, \"p\", ",
            inner: "?b",
            close: ")",
            foot: "\n}",
            limit: MAX_DEPTH - 1,
            first_too_deep: (MAX_DEPTH, 0),
        },
        Construct {
            name: "inline concepts",
            head: "FIND(?p)\nWHERE {\n  ?p ",
            unit: "({type: \"A\"}, \"p\", ",
            inner: "{name: \"b\"}",
            close: ")",
            foot: "\n}",
            limit: MAX_DEPTH - 2,
            first_too_deep: (MAX_DEPTH - 1, 1),
        },
        Construct {
            name: "nested proposition targets in UPSERT",
            head: "UPSERT {\n  CONCEPT ?d {\n    {type: \"A\", name: \"b\"}\n    SET PROPOSITIONS {\n      (\"p\", ",
            unit: "({type: \"A\", name: \"b\"}, \"p\", ",
            inner: "{type: \"A\", name: \"c\"}",
            close: ")",
            foot: ")\n    }\n  }\n}",
            limit: MAX_DEPTH - 5,
            first_too_deep: (MAX_DEPTH - 4, 1),
        },
        Construct {
            name: "update expressions",
            head: "UPDATE ?x\nSET ATTRIBUTES {n: ",
            unit: "ADD(",
            inner: "?x.attributes.n",
            close: ", 1)",
            foot: "}\nWHERE {\n  ?x {type: \"A\"}\n}",
            limit: MAX_DEPTH - 1,
            first_too_deep: (MAX_DEPTH, 3),
        },
    ]
}

/// The one error of a text nested too deep.
fn too_deep(text: String) -> KipError {
    small_stack(move || match parse(&text) {
        Ok(_) => panic!("a text nested too deep parsed"),
        Err(errors) => {
            assert_eq!(errors.0.len(), 1, "{:#?}", errors.0);
            errors.0.into_iter().next().expect("one error")
        }
    })
}

/// Line and column (1-based, the texts are ASCII) of `offset` in `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

fn assert_too_deep(e: &KipError, text: &str, offset: usize, what: &str) {
    assert_eq!(e.code, ErrorCode::InvalidSyntax, "{what}: {e:?}");
    assert!(
        e.message.contains("nested deeper than 256 levels"),
        "{what}: {}",
        e.message
    );
    assert_eq!(e.offset(), Some(offset), "{what}: {e:?}");
    let (line, column) = position(text, offset);
    assert_eq!(
        (e.data["line"].as_u64(), e.data["column"].as_u64()),
        (Some(line as u64), Some(column as u64)),
        "{what}"
    );
    assert_eq!(e.data["max_depth"], MAX_DEPTH, "{what}");
    assert!(!e.hint.is_empty());
}

#[test]
fn every_construct_nested_100_000_deep_is_a_positioned_syntax_error() {
    for c in constructs() {
        let text = c.text(100_000);
        let e = too_deep(text.clone());
        assert_too_deep(&e, &text, c.too_deep_at(), c.name);
    }
}

#[test]
fn every_construct_nested_to_the_limit_parses_formats_and_binds() {
    for c in constructs() {
        let text = c.text(c.limit);
        let name = c.name;
        small_stack(move || {
            let commands = parse(&text).unwrap_or_else(|e| panic!("{name}: {e:#?}"));
            let formatted = format_source(&text).unwrap_or_else(|e| panic!("{name}: {e:#?}"));
            let again = parse(&formatted).unwrap_or_else(|e| panic!("{name}: {e:#?}"));
            assert_eq!(commands, again, "{name}: formatting changed the tree");
            let printed = commands[0].to_string();
            assert_eq!(parse(&printed).map_err(|e| e.0), Ok(again), "{name}");
            bind(&text, commands, &Map::new()).unwrap_or_else(|e| panic!("{name}: {e:#?}"));
        });
        // One more level is one too many.
        let text = c.text(c.limit + 1);
        let e = too_deep(text.clone());
        assert!(
            e.message.contains("nested deeper than"),
            "{}: {e:?}",
            c.name
        );
    }
}

#[test]
fn a_million_characters_of_nesting_are_refused_without_recursing() {
    for (name, unit) in [
        ("[", "["),
        ("(", "("),
        ("{", "{"),
        ("NOT", "NOT {"),
        ("proposition", "(?a, \"p\", "),
    ] {
        let text = format!(
            "FIND(?x) WHERE {{ {} }}",
            unit.repeat(1_000_000 / unit.len())
        );
        let e = too_deep(text.clone());
        assert!(
            e.message.contains("nested deeper than 256"),
            "{name}: {e:?}"
        );
        assert!(
            e.data["line"] == 1 && e.data["column"].as_u64().is_some(),
            "{name}"
        );
    }
    let text = format!(
        "FIND(?x) WHERE {{ ?x {{type: \"A\"}} FILTER({}?x) }}",
        "!".repeat(1_000_000)
    );
    assert!(too_deep(text).message.contains("nested deeper than 256"));
}

#[test]
fn the_where_items_entry_point_checks_the_depth_too() {
    let text = format!("{}?x {{type: \"A\"}}", "NOT { ".repeat(100_000));
    let source = text.clone();
    let e = small_stack(move || parse_where_items(&source).expect_err("too deep"));
    assert_eq!(e.0.len(), 1);
    assert_too_deep(&e.0[0], &text, 6 * MAX_DEPTH + 4, "where items");
}

#[test]
fn brackets_inside_strings_and_comments_do_not_count() {
    let deep = "[({".repeat(100_000);
    let text = format!("FIND(?x)\nWHERE {{\n  // {deep}\n  ?x {{name: \"{deep}\"}}\n}}");
    small_stack(move || parse(&text).map(|_| ()).map_err(|e| e.0))
        .expect("strings and comments are not nesting");
}

// ------------------------------------------------------------ expressions

/// A FILTER whose expression is `body`, on line 4.
fn filter(body: &str) -> (String, usize) {
    let head = "FIND(?x)\nWHERE {\n  ?x {type: \"A\"}\n  FILTER(";
    (format!("{head}{body})\n}}"), head.len())
}

#[test]
fn operator_chains_100_000_long_are_positioned_syntax_errors() {
    let cmp = "?x.name == \"b\"";
    for (op, name) in [(" || ", "`||` chain"), (" && ", "`&&` chain")] {
        let operands = vec![cmp; 100_000];
        let (text, head) = filter(&operands.join(op));
        // The first comparison is two levels deep (the comparison and its
        // operands); each further operand adds one: the 256th is one too many.
        let at = head + (MAX_DEPTH - 1) * (cmp.len() + op.len());
        let e = too_deep(text.clone());
        assert_too_deep(&e, &text, at, name);

        let (text, _) = filter(&vec![cmp; MAX_DEPTH - 1].join(op));
        small_stack(move || {
            let commands = parse(&text).expect("a chain at the limit parses");
            let printed = commands[0].to_string();
            assert_eq!(parse(&printed).map_err(|e| e.0), Ok(commands));
        });
        let (text, _) = filter(&vec![cmp; MAX_DEPTH].join(op));
        assert!(too_deep(text).message.contains("nested deeper"));
    }
}

#[test]
fn negations_100_000_deep_are_a_positioned_syntax_error() {
    let n = 100_000;
    let (text, head) = filter(&format!("{}?x.name == \"b\"", "!".repeat(n)));
    // The `!` nearest the comparison applies first; the 255th from the right
    // makes the tree 257 deep.
    let at = head + n - (MAX_DEPTH - 1);
    let e = too_deep(text.clone());
    assert_too_deep(&e, &text, at, "`!` chain");

    let (text, _) = filter(&format!("{}?x.name == \"b\"", "!".repeat(MAX_DEPTH - 2)));
    small_stack(move || {
        let commands = parse(&text).expect("negations at the limit parse");
        assert_eq!(format_source(&text).map(|_| ()).map_err(|e| e.0), Ok(()));
        drop(commands);
    });
}

#[test]
fn parentheses_around_operators_count_the_tree_not_the_brackets() {
    // `!!(!!(…))`: one bracket per level, but two tree levels.
    let cmp = "?x.name == \"b\"";
    let n = 200;
    let body = format!("{}{cmp}{}", "!!(".repeat(n), ")".repeat(n));
    let (text, _) = filter(&body);
    assert!(
        too_deep(text)
            .message
            .contains("this expression is nested deeper than 256")
    );
}

// ------------------------------------------------------------ parameters

fn deep_json(depth: usize) -> Json {
    let mut v = json!(1);
    for _ in 0..depth {
        v = Json::Array(vec![v]);
    }
    v
}

/// Takes a deep value apart without recursing (serde_json drops values
/// recursively).
fn dismantle(mut v: Json) {
    loop {
        v = match v {
            Json::Array(mut items) => items.pop().unwrap_or(Json::Null),
            Json::Object(members) => members.into_iter().next().map_or(Json::Null, |(_, v)| v),
            _ => return,
        };
    }
}

/// Binds `:v` in `text` to a value nested `depth` deep.
fn bind_deep(text: &'static str, depth: usize) -> Result<(), Vec<KipError>> {
    small_stack(move || {
        let commands = parse(text).expect("the text parses");
        let mut params = Map::new();
        params.insert("v".into(), deep_json(depth));
        let result = bind(text, commands, &params).map(drop).map_err(|e| e.0);
        dismantle(params.remove("v").unwrap_or(Json::Null));
        result
    })
}

#[test]
fn a_parameter_nested_100_000_deep_is_a_positioned_syntax_error() {
    let text = "UPSERT {\n  CONCEPT ?d {\n    {type: \"A\", name: \"b\"}\n    SET ATTRIBUTES {deep: :v}\n  }\n}";
    let errors = bind_deep(text, 100_000).expect_err("too deep");
    assert_eq!(errors.len(), 1);
    let at = text.find(":v").unwrap_or_default();
    assert_too_deep(&errors[0], text, at, "parameter");
    assert_eq!(errors[0].data["parameter"], "v");

    // The parameter counts with the three brackets around its placeholder.
    assert_eq!(bind_deep(text, MAX_DEPTH - 3), Ok(()));
    let errors = bind_deep(text, MAX_DEPTH - 2).expect_err("one level too deep");
    assert!(
        errors[0]
            .message
            .contains("parameter :v is nested deeper than 256")
    );

    let text = "FIND(?x)\nWHERE {\n  ?x {type: \"A\"}\n  FILTER(IN(?x.name, [:v]))\n}";
    let errors = bind_deep(text, 100_000).expect_err("too deep");
    assert_too_deep(
        &errors[0],
        text,
        text.find(":v").unwrap_or_default(),
        "FILTER parameter",
    );
    assert_eq!(bind_deep(text, MAX_DEPTH - 4), Ok(()));
}

#[test]
fn a_deep_parameter_of_the_wrong_type_is_reported_without_copying_it() {
    let text = "FIND(?x) WHERE { ?x {type: :v} }";
    let errors = bind_deep(text, 100_000).expect_err("not a string");
    assert_eq!(errors[0].code, ErrorCode::InvalidValueType);
}
