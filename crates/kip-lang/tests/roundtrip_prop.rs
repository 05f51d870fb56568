//! Property test of the formatter on random *valid* KIP texts.
//!
//! A grammar-shaped generator builds a text as a list of tokens (random FIND
//! queries with nested WHERE items and random FILTER expression trees, random
//! UPSERTs, DELETEs, DESCRIBEs and SEARCHes), respecting the rules that make
//! a text valid (variables bound, handles defined before use, identifiers,
//! unique keys, hop ranges…). Between tokens it puts random whitespace, line
//! endings and `//` comments. Every generated text must:
//! - parse;
//! - keep its tree through formatting: `parse(format(x)) == parse(x)`;
//! - format idempotently: `format(format(x)) == format(x)`;
//! - keep its comments: the multiset of comment texts is unchanged.

use std::collections::BTreeSet;

use kip_lang::{format_source, parse, scan_comments};
use proptest::prelude::*;
use proptest::sample::select;

/// A text as tokens; separators are added afterwards.
type Toks = Vec<String>;

fn tok(s: &str) -> Toks {
    vec![s.to_owned()]
}

fn cat(parts: impl IntoIterator<Item = Toks>) -> Toks {
    parts.into_iter().flatten().collect()
}

/// `a, b, c` with an optional trailing comma.
fn comma_list(items: Vec<Toks>, trailing: bool) -> Toks {
    let n = items.len();
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        out.extend(item);
        if i + 1 < n || (trailing && n > 0) {
            out.push(",".into());
        }
    }
    out
}

// ------------------------------------------------------------------ lexemes

fn identifier() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9_]{0,6}",
        "[A-Z_][A-Za-z0-9_]{0,6}",
        select(vec!["FIND", "WHERE", "true", "null", "LIMIT", "_", "x1"]).prop_map(String::from),
    ]
}

/// A character of a string literal's value: anything, with a bias towards
/// the characters that need escaping or that look like KIP.
fn string_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => any::<char>(),
        3 => select(vec![
            '"', '\\', '/', '\n', '\r', '\t', '\u{8}', '\u{c}', '\0', '\u{1f}', '\u{7f}',
            '\u{2028}', '\u{feff}', ':', '?', '{', '}', '(', ')', ',',
        ]),
        2 => select(vec!['阿', '司', '匹', '林', 'ア', 'ス', 'ピ', 'リ', 'ン', '😀', '👍', '\u{1f3fd}', '\u{200d}']),
        3 => proptest::char::range('a', 'z'),
    ]
}

/// Writes `value` as a KIP string literal, choosing per character between
/// writing it as is (where allowed) and each escape that means it.
fn literal(value: &str, choices: &[u8]) -> String {
    let mut out = String::from("\"");
    for (i, c) in value.chars().enumerate() {
        let choice = choices.get(i).copied().unwrap_or(0);
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        let must_escape = matches!(c, '"' | '\\' | '\n' | '\r');
        match (choice % 3, short) {
            (0, _) if !must_escape => out.push(c),
            (1, Some(s)) => out.push_str(s),
            _ if must_escape && choice % 2 == 0 => out.push_str(short.unwrap_or_default()),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    if choice % 2 == 0 {
                        out.push_str(&format!("\\u{unit:04x}"));
                    } else {
                        out.push_str(&format!("\\u{unit:04X}"));
                    }
                }
            }
        }
    }
    out.push('"');
    out
}

fn string_lit() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(string_char(), 0..8),
        prop::collection::vec(any::<u8>(), 8),
    )
        .prop_map(|(chars, choices)| literal(&chars.into_iter().collect::<String>(), &choices))
}

/// A string literal holding a valid identifier (a predicate name), possibly escaped.
fn ident_lit() -> impl Strategy<Value = String> {
    (identifier(), prop::collection::vec(any::<u8>(), 8)).prop_map(|(s, c)| literal(&s, &c))
}

/// A string literal holding a valid concept type name.
fn type_lit() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        identifier(),
        prop::collection::vec(any::<u8>(), 8),
    )
        .prop_map(|(meta, s, c)| literal(&if meta { format!("${s}") } else { s }, &c))
}

fn param() -> impl Strategy<Value = String> {
    identifier().prop_map(|s| format!(":{s}"))
}

/// A string literal or a placeholder.
fn text(lit: BoxedStrategy<String>) -> BoxedStrategy<Toks> {
    prop_oneof![4 => lit, 1 => param()]
        .prop_map(|s| vec![s])
        .boxed()
}

/// A JSON number in one of its many spellings.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:?}")),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        (
            any::<bool>(),
            "0|[1-9][0-9]{0,12}",
            prop::option::of("[0-9]{1,8}"),
            prop::option::of((select(vec!["e", "E"]), select(vec!["", "+", "-"]), 0u32..40)),
        )
            .prop_map(|(neg, int, frac, exp)| {
                let mut s = String::new();
                if neg {
                    s.push('-');
                }
                s.push_str(&int);
                if let Some(frac) = frac {
                    s.push('.');
                    s.push_str(&frac);
                }
                if let Some((e, sign, n)) = exp {
                    s.push_str(&format!("{e}{sign}{n}"));
                }
                s
            }),
    ]
}

/// A value: JSON plus placeholders, unquoted keys and trailing commas.
fn value(depth: u32) -> BoxedStrategy<Toks> {
    let leaf = prop_oneof![
        Just(tok("null")),
        Just(tok("true")),
        Just(tok("false")),
        number().prop_map(|n| vec![n]),
        string_lit().prop_map(|s| vec![s]),
        param().prop_map(|s| vec![s]),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![
        3 => leaf,
        1 => object(depth - 1),
        1 => (prop::collection::vec(value(depth - 1), 0..4), any::<bool>())
            .prop_map(|(items, trailing)| cat([tok("["), comma_list(items, trailing), tok("]")])),
    ]
    .boxed()
}

/// An object with unique keys, some bare and some quoted.
fn object(depth: u32) -> BoxedStrategy<Toks> {
    let key = prop_oneof![
        identifier().prop_map(|k| (k, true)),
        prop::collection::vec(string_char(), 0..5)
            .prop_map(|cs| (cs.into_iter().collect::<String>(), false)),
    ];
    (
        prop::collection::vec((key, value(depth), any::<u8>()), 0..4),
        any::<bool>(),
    )
        .prop_map(|(members, trailing)| {
            let mut seen = BTreeSet::new();
            let mut items = Vec::new();
            for (i, ((key, bare), value, choice)) in members.into_iter().enumerate() {
                // A suffix makes every key unique; `seen` guards the rest.
                let key = format!("{key}{i}");
                if !seen.insert(key.clone()) {
                    continue;
                }
                let key = if bare {
                    key
                } else {
                    literal(&key, &[choice; 16])
                };
                items.push(cat([vec![key, ":".into()], value]));
            }
            cat([tok("{"), comma_list(items, trailing), tok("}")])
        })
        .boxed()
}

// ------------------------------------------------------------------ KQL

/// The place a concept pattern appears in.
#[derive(Clone, Copy, Debug)]
enum Place {
    Query,
    Write,
}

/// A concept pattern `{…}` in one of the forms allowed at `place`.
fn concept_pattern(place: Place) -> BoxedStrategy<Toks> {
    let id = text(string_lit().boxed());
    let ty = text(type_lit().boxed());
    let name = text(string_lit().boxed());
    let forms: BoxedStrategy<Vec<(&'static str, Toks)>> = match place {
        Place::Query => prop_oneof![
            id.clone().prop_map(|v| vec![("id", v)]),
            (ty.clone(), name.clone()).prop_map(|(t, n)| vec![("type", t), ("name", n)]),
            ty.prop_map(|t| vec![("type", t)]),
            name.prop_map(|n| vec![("name", n)]),
        ]
        .boxed(),
        Place::Write => prop_oneof![
            id.prop_map(|v| vec![("id", v)]),
            (ty, name).prop_map(|(t, n)| vec![("type", t), ("name", n)]),
        ]
        .boxed(),
    };
    (forms, any::<bool>(), any::<bool>(), any::<bool>())
        .prop_map(|(mut fields, reverse, quote, trailing)| {
            if reverse {
                fields.reverse();
            }
            let items = fields
                .into_iter()
                .map(|(k, v)| {
                    let key = if quote {
                        format!("\"{k}\"")
                    } else {
                        k.to_owned()
                    };
                    cat([vec![key, ":".into()], v])
                })
                .collect();
            cat([tok("{"), comma_list(items, trailing), tok("}")])
        })
        .boxed()
}

fn var(vars: &[String]) -> BoxedStrategy<String> {
    select(vars.to_vec()).prop_map(|v| format!("?{v}")).boxed()
}

/// `{m,n}`, `{m,}` or `{m}` with `m <= n`.
fn hops() -> impl Strategy<Value = Toks> {
    (0u32..5, 0u32..5, 0u8..3).prop_map(|(a, b, form)| {
        let (min, max) = (a.min(b), a.max(b));
        match form {
            0 => cat([
                tok("{"),
                vec![min.to_string(), ",".into(), max.to_string()],
                tok("}"),
            ]),
            1 => cat([tok("{"), vec![min.to_string(), ",".into()], tok("}")]),
            _ => cat([tok("{"), vec![min.to_string()], tok("}")]),
        }
    })
}

/// The predicate of a query pattern: a variable, or alternatives with hops.
fn query_predicate(vars: &[String]) -> BoxedStrategy<Toks> {
    prop_oneof![
        1 => var(vars).prop_map(|v| vec![v]),
        4 => (
            prop::collection::vec(text(ident_lit().boxed()), 1..4),
            prop::option::of(hops()),
        )
            .prop_map(|(names, hops)| {
                let mut out = Vec::new();
                for (i, name) in names.into_iter().enumerate() {
                    if i > 0 {
                        out.push("|".into());
                    }
                    out.extend(name);
                }
                out.extend(hops.unwrap_or_default());
                out
            }),
    ]
    .boxed()
}

/// A subject or object of a query pattern.
fn query_term(vars: &[String], depth: u32) -> BoxedStrategy<Toks> {
    let leaf = prop_oneof![
        2 => var(vars).prop_map(|v| vec![v]),
        1 => concept_pattern(Place::Query),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    prop_oneof![3 => leaf, 1 => query_proposition(vars, depth - 1)].boxed()
}

/// `(id: …)` or `(s, p, o)` in a query.
fn query_proposition(vars: &[String], depth: u32) -> BoxedStrategy<Toks> {
    prop_oneof![
        1 => text(string_lit().boxed())
            .prop_map(|id| cat([tok("("), tok("id"), tok(":"), id, tok(")")])),
        4 => (
            query_term(vars, depth),
            query_predicate(vars),
            query_term(vars, depth),
        )
            .prop_map(|(s, p, o)| cat([tok("("), s, tok(","), p, tok(","), o, tok(")")])),
    ]
    .boxed()
}

/// A dot path on one of `vars`.
fn dot_path(vars: &[String]) -> BoxedStrategy<String> {
    let field = prop_oneof![
        Just(String::new()),
        select(vec![
            ".id",
            ".type",
            ".name",
            ".subject",
            ".predicate",
            ".object"
        ])
        .prop_map(String::from),
        (
            select(vec![".attributes", ".metadata"]),
            prop::collection::vec(identifier(), 0..3)
        )
            .prop_map(|(head, rest)| {
                let mut s = head.to_owned();
                for seg in rest {
                    s.push('.');
                    s.push_str(&seg);
                }
                s
            }),
    ];
    (var(vars), field)
        .prop_map(|(v, f)| format!("{v}{f}"))
        .boxed()
}

/// A FIND or ORDER BY expression: a dot path or an aggregate.
fn projection(vars: &[String]) -> BoxedStrategy<Toks> {
    prop_oneof![
        2 => dot_path(vars).prop_map(|p| vec![p]),
        1 => (
            select(vec!["COUNT", "SUM", "AVG", "MIN", "MAX"]),
            any::<bool>(),
            dot_path(vars)
        )
            .prop_map(|(f, distinct, p)| {
                let mut out = vec![f.to_owned(), "(".into()];
                if distinct {
                    out.push("DISTINCT".into());
                }
                out.push(p);
                out.push(")".into());
                out
            }),
    ]
    .boxed()
}

/// An operand that is not a parenthesised expression.
fn simple_operand(vars: &[String]) -> BoxedStrategy<Toks> {
    let arg = prop_oneof![
        2 => dot_path(vars).prop_map(|p| vec![p]),
        1 => value(1),
    ]
    .boxed();
    let array = prop_oneof![
        3 => (prop::collection::vec(value(1), 0..4), any::<bool>())
            .prop_map(|(items, t)| cat([tok("["), comma_list(items, t), tok("]")])),
        1 => param().prop_map(|p| vec![p]),
    ];
    let call = prop_oneof![
        (
            select(vec!["CONTAINS", "STARTS_WITH", "ENDS_WITH", "REGEX"]),
            arg.clone(),
            arg.clone(),
            any::<bool>()
        )
            .prop_map(|(f, a, b, t)| cat([
                tok(f),
                tok("("),
                comma_list(vec![a, b], t),
                tok(")")
            ])),
        (arg.clone(), array, any::<bool>()).prop_map(|(a, b, t)| cat([
            tok("IN"),
            tok("("),
            comma_list(vec![a, b], t),
            tok(")")
        ])),
        (
            select(vec!["IS_NULL", "IS_NOT_NULL"]),
            dot_path(vars),
            any::<bool>()
        )
            .prop_map(|(f, a, t)| cat([
                tok(f),
                tok("("),
                comma_list(vec![vec![a]], t),
                tok(")")
            ])),
    ];
    prop_oneof![
        3 => dot_path(vars).prop_map(|p| vec![p]),
        2 => value(1),
        2 => call,
    ]
    .boxed()
}

/// A FILTER expression, shaped like the grammar: `||` of `&&` of `!`* of a
/// comparison of operands, with parenthesised sub-expressions as operands.
fn expr(vars: &[String], depth: u32) -> BoxedStrategy<Toks> {
    let operand = if depth == 0 {
        simple_operand(vars)
    } else {
        prop_oneof![
            3 => simple_operand(vars),
            1 => expr(vars, depth - 1).prop_map(|e| cat([tok("("), e, tok(")")])),
        ]
        .boxed()
    };
    let comparison = (
        operand.clone(),
        prop::option::of((select(vec!["==", "!=", "<", "<=", ">", ">="]), operand)),
    )
        .prop_map(|(l, rest)| match rest {
            Some((op, r)) => cat([l, tok(op), r]),
            None => l,
        });
    let unary = (0usize..3, comparison)
        .prop_map(|(nots, c)| cat([vec!["!".to_owned(); nots], c]))
        .boxed();
    let conjunction = prop::collection::vec(unary, 1..3).prop_map(|items| join(items, "&&"));
    prop::collection::vec(conjunction, 1..3)
        .prop_map(|items| join(items, "||"))
        .boxed()
}

fn join(items: Vec<Toks>, op: &str) -> Toks {
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(op.to_owned());
        }
        out.extend(item);
    }
    out
}

fn filter(vars: &[String]) -> BoxedStrategy<Toks> {
    expr(vars, 2)
        .prop_map(|e| cat([tok("FILTER"), tok("("), e, tok(")")]))
        .boxed()
}

/// Clauses that bind each of `vars` (so FILTER, FIND and ORDER BY may use them).
fn binders(vars: &[String]) -> BoxedStrategy<Vec<Toks>> {
    let strategies: Vec<BoxedStrategy<Toks>> = vars
        .iter()
        .map(|v| {
            let v = format!("?{v}");
            let v2 = v.clone();
            prop_oneof![
                concept_pattern(Place::Query).prop_map(move |p| cat([vec![v.clone()], p])),
                (query_term(&["o".into()], 0), ident_lit()).prop_map(move |(o, p)| cat([
                    tok("("),
                    vec![v2.clone()],
                    tok(","),
                    vec![p],
                    tok(","),
                    o,
                    tok(")")
                ])),
            ]
            .boxed()
        })
        .collect();
    strategies.boxed()
}

/// One WHERE item that uses only `vars` (all of which are bound around it).
fn where_item(vars: &[String], depth: u32) -> BoxedStrategy<Toks> {
    let clause = prop_oneof![
        (prop::option::of(var(vars)), concept_pattern(Place::Query))
            .prop_map(|(v, p)| cat([v.into_iter().collect(), p])),
        (prop::option::of(var(vars)), query_proposition(vars, 1))
            .prop_map(|(v, p)| cat([v.into_iter().collect(), p])),
        filter(vars),
    ];
    if depth == 0 {
        return clause.boxed();
    }
    let nested = prop_oneof![
        // NOT and OPTIONAL see the variables around them.
        (
            select(vec!["NOT", "OPTIONAL"]),
            prop::collection::vec(where_item(vars, depth - 1), 0..3)
        )
            .prop_map(|(kw, items)| cat([tok(kw), tok("{"), items.concat(), tok("}")])),
        // UNION sees nothing from outside: it binds what its FILTERs use.
        union_block(depth - 1),
    ];
    prop_oneof![3 => clause, 1 => nested].boxed()
}

fn union_block(depth: u32) -> BoxedStrategy<Toks> {
    let inner: Vec<String> = vec!["u".into(), "w".into()];
    (
        binders(&inner),
        prop::collection::vec(where_item(&inner, depth), 0..3),
    )
        .prop_map(|(b, items)| cat([tok("UNION"), tok("{"), b.concat(), items.concat(), tok("}")]))
        .boxed()
}

/// `{ … }` that binds all of `vars`, with random other items mixed in.
fn where_group(vars: &[String]) -> BoxedStrategy<Toks> {
    (
        binders(vars),
        prop::collection::vec(where_item(vars, 2), 0..4),
    )
        .prop_flat_map(|(b, items)| {
            let mut all = b;
            all.extend(items);
            Just(all).prop_shuffle()
        })
        .prop_map(|items| cat([tok("{"), items.concat(), tok("}")]))
        .boxed()
}

fn count() -> impl Strategy<Value = Toks> {
    prop_oneof![
        3 => any::<u64>().prop_map(|n| vec![(n % 1000).to_string()]),
        1 => any::<u64>().prop_map(|n| vec![n.to_string()]),
        1 => param().prop_map(|p| vec![p]),
    ]
}

fn find_query() -> BoxedStrategy<Toks> {
    prop::collection::btree_set(select(vec!["a", "b", "c", "d"]), 1..4)
        .prop_flat_map(|set| {
            let vars: Vec<String> = set.into_iter().map(String::from).collect();
            (
                prop::collection::vec(projection(&vars), 1..4),
                any::<bool>(),
                where_group(&vars),
                prop::collection::vec((projection(&vars), select(vec!["", "ASC", "DESC"])), 0..3),
                prop::option::of(count()),
                prop::option::of(text(string_lit().boxed())),
            )
        })
        .prop_map(|(find, trailing, group, order, limit, cursor)| {
            let mut out = cat([tok("FIND"), tok("("), comma_list(find, trailing), tok(")")]);
            out.push("WHERE".into());
            out.extend(group);
            if !order.is_empty() {
                out.extend(["ORDER".to_owned(), "BY".to_owned()]);
                let keys = order
                    .into_iter()
                    .map(|(p, dir)| cat([p, if dir.is_empty() { vec![] } else { tok(dir) }]))
                    .collect();
                out.extend(comma_list(keys, false));
            }
            if let Some(limit) = limit {
                out.extend(cat([tok("LIMIT"), limit]));
            }
            if let Some(cursor) = cursor {
                out.extend(cat([tok("CURSOR"), cursor]));
            }
            out
        })
        .boxed()
}

// ------------------------------------------------------------------ KML

fn with_metadata() -> BoxedStrategy<Toks> {
    object(1)
        .prop_map(|o| cat([tok("WITH"), tok("METADATA"), o]))
        .boxed()
}

/// A subject, object or SET PROPOSITIONS target in KML: an earlier handle,
/// an inline `{type, name}` / `{id}` or an inline proposition.
fn write_term(handles: &[String], depth: u32) -> BoxedStrategy<Toks> {
    let mut options: Vec<(u32, BoxedStrategy<Toks>)> = vec![(2, concept_pattern(Place::Write))];
    if !handles.is_empty() {
        options.push((3, var(handles).prop_map(|v| vec![v]).boxed()));
    }
    if depth > 0 {
        options.push((1, write_proposition(handles, depth - 1)));
    }
    prop::strategy::Union::new_weighted(options).boxed()
}

fn write_proposition(handles: &[String], depth: u32) -> BoxedStrategy<Toks> {
    prop_oneof![
        1 => text(string_lit().boxed())
            .prop_map(|id| cat([tok("("), tok("id"), tok(":"), id, tok(")")])),
        3 => (
            write_term(handles, depth),
            text(ident_lit().boxed()),
            write_term(handles, depth),
        )
            .prop_map(|(s, p, o)| cat([tok("("), s, tok(","), p, tok(","), o, tok(")")])),
    ]
    .boxed()
}

/// One CONCEPT or PROPOSITION block that may refer to `handles` (defined
/// earlier) and defines `own` if given.
fn upsert_block(handles: Vec<String>, own: Option<String>) -> BoxedStrategy<Toks> {
    let head = move |kw: &str, own: &Option<String>| {
        let mut out = tok(kw);
        if let Some(h) = own {
            out.push(format!("?{h}"));
        }
        out
    };
    let own2 = own.clone();
    let set_attributes = object(2).prop_map(|o| cat([tok("SET"), tok("ATTRIBUTES"), o]));
    let entry = (
        text(ident_lit().boxed()),
        write_term(&handles, 1),
        prop::option::of(with_metadata()),
        any::<bool>(),
    )
        .prop_map(|(p, t, m, comma)| {
            let mut out = cat([tok("("), p, tok(","), t, tok(")"), m.unwrap_or_default()]);
            if comma {
                out.push(",".into());
            }
            out
        });
    let set_propositions = prop::collection::vec(entry, 0..3).prop_map(|entries| {
        cat([
            tok("SET"),
            tok("PROPOSITIONS"),
            tok("{"),
            entries.concat(),
            tok("}"),
        ])
    });
    let expect =
        prop::option::of(count().prop_map(|n| cat([tok("EXPECT"), tok("VERSION"), n]))).boxed();
    let concept = (
        (concept_pattern(Place::Write), expect.clone()),
        prop::option::of(set_attributes.clone()),
        prop::option::of(set_propositions),
        any::<bool>(),
        prop::option::of(with_metadata()),
    )
        .prop_map(move |((pattern, expect), attrs, props, swap, meta)| {
            let (first, second) = if swap { (props, attrs) } else { (attrs, props) };
            cat([
                head("CONCEPT", &own),
                tok("{"),
                pattern,
                expect.unwrap_or_default(),
                first.unwrap_or_default(),
                second.unwrap_or_default(),
                tok("}"),
                meta.unwrap_or_default(),
            ])
        });
    let proposition = (
        (write_proposition(&handles, 1), expect),
        prop::option::of(set_attributes),
        prop::option::of(with_metadata()),
    )
        .prop_map(move |((pattern, expect), attrs, meta)| {
            cat([
                head("PROPOSITION", &own2),
                tok("{"),
                pattern,
                expect.unwrap_or_default(),
                attrs.unwrap_or_default(),
                tok("}"),
                meta.unwrap_or_default(),
            ])
        });
    prop_oneof![3 => concept, 2 => proposition].boxed()
}

fn upsert() -> BoxedStrategy<Toks> {
    // Which blocks have a handle; handle `hN` belongs to block N.
    (
        prop::collection::vec(any::<bool>(), 0..4),
        prop::option::of(with_metadata()),
    )
        .prop_flat_map(|(has_handle, meta)| {
            let blocks: Vec<BoxedStrategy<Toks>> = has_handle
                .iter()
                .enumerate()
                .map(|(i, &has)| {
                    let earlier: Vec<String> = (0..i)
                        .filter(|&j| has_handle[j])
                        .map(|j| format!("h{j}"))
                        .collect();
                    upsert_block(earlier, has.then(|| format!("h{i}")))
                })
                .collect();
            (blocks, Just(meta))
        })
        .prop_map(|(blocks, meta)| {
            cat([
                tok("UPSERT"),
                tok("{"),
                blocks.concat(),
                tok("}"),
                meta.unwrap_or_default(),
            ])
        })
        .boxed()
}

fn delete() -> BoxedStrategy<Toks> {
    let target = vec!["t".to_owned()];
    let keys = (
        prop::collection::vec(text(string_lit().boxed()), 0..3),
        any::<bool>(),
    )
        .prop_map(|(keys, t)| cat([tok("{"), comma_list(keys, t), tok("}")]));
    (0u8..4, keys, where_group(&target))
        .prop_map(|(form, keys, group)| {
            let head = match form {
                0 => cat([
                    tok("DELETE"),
                    tok("ATTRIBUTES"),
                    keys,
                    tok("FROM"),
                    tok("?t"),
                ]),
                1 => cat([tok("DELETE"), tok("METADATA"), keys, tok("FROM"), tok("?t")]),
                2 => cat([tok("DELETE"), tok("PROPOSITIONS"), tok("?t")]),
                _ => cat([tok("DELETE"), tok("CONCEPT"), tok("?t"), tok("DETACH")]),
            };
            cat([head, tok("WHERE"), group])
        })
        .boxed()
}

// ------------------------------------------------------------------ META

fn describe() -> BoxedStrategy<Toks> {
    let target = prop_oneof![
        Just(tok("PRIMER")),
        Just(tok("DOMAINS")),
        Just(cat([tok("CONCEPT"), tok("TYPES")])),
        Just(cat([tok("PROPOSITION"), tok("TYPES")])),
        text(type_lit().boxed()).prop_map(|t| cat([tok("CONCEPT"), tok("TYPE"), t])),
        text(ident_lit().boxed()).prop_map(|t| cat([tok("PROPOSITION"), tok("TYPE"), t])),
    ];
    (
        target,
        prop::option::of(count()),
        prop::option::of(text(string_lit().boxed())),
    )
        .prop_map(|(target, limit, cursor)| {
            cat([
                tok("DESCRIBE"),
                target,
                limit.map(|l| cat([tok("LIMIT"), l])).unwrap_or_default(),
                cursor.map(|c| cat([tok("CURSOR"), c])).unwrap_or_default(),
            ])
        })
        .boxed()
}

fn search() -> BoxedStrategy<Toks> {
    (
        select(vec!["CONCEPT", "PROPOSITION"]),
        text(string_lit().boxed()),
        prop::option::of(text(string_lit().boxed())),
        prop::option::of(prop_oneof![
            3 => select(vec!["\"keyword\"", "\"semantic\"", "\"hybrid\""]).prop_map(String::from),
            1 => param(),
        ]),
        prop::option::of(prop_oneof![
            3 => select(vec!["0", "1", "0.5", "0.75", "1.0", "0e0"]).prop_map(String::from),
            1 => param(),
        ]),
        prop::option::of(count()),
    )
        .prop_map(|(target, term, ty, mode, threshold, limit)| {
            cat([
                tok("SEARCH"),
                tok(target),
                term,
                ty.map(|t| cat([tok("WITH"), tok("TYPE"), t]))
                    .unwrap_or_default(),
                mode.map(|m| cat([tok("MODE"), vec![m]]))
                    .unwrap_or_default(),
                threshold
                    .map(|t| cat([tok("THRESHOLD"), vec![t]]))
                    .unwrap_or_default(),
                limit.map(|l| cat([tok("LIMIT"), l])).unwrap_or_default(),
            ])
        })
        .boxed()
}

// ------------------------------------------------------------------ RC9–RC10 additions

/// An UPDATE value: a JSON value or an update expression over `?t`.
fn update_value(depth: u32) -> BoxedStrategy<Toks> {
    let path = prop_oneof![
        "[a-z][a-z0-9_]{0,5}".prop_map(|k| vec![format!("?t.attributes.{k}")]),
        "[a-z][a-z0-9_]{0,5}".prop_map(|k| vec![format!("?t.metadata.{k}")]),
    ];
    if depth == 0 {
        return prop_oneof![2 => value(0), 1 => path].boxed();
    }
    let operand = prop_oneof![2 => value(0), 2 => path, 1 => update_value(depth - 1)].boxed();
    let call = (
        select(vec![
            ("ADD", 2usize),
            ("MUL", 2),
            ("CLAMP", 3),
            ("COALESCE", 2),
        ]),
        prop::collection::vec(operand, 3),
        any::<bool>(),
    )
        .prop_map(|((f, n), mut args, trailing)| {
            args.truncate(n);
            cat([tok(f), tok("("), comma_list(args, trailing), tok(")")])
        });
    prop_oneof![2 => value(1), 1 => call].boxed()
}

fn update_object() -> BoxedStrategy<Toks> {
    (
        prop::collection::btree_map("[a-z][a-z0-9_]{0,5}", update_value(2), 0..4),
        any::<bool>(),
    )
        .prop_map(|(members, trailing)| {
            let members = members
                .into_iter()
                .map(|(k, v)| cat([vec![k], tok(":"), v]))
                .collect();
            cat([tok("{"), comma_list(members, trailing), tok("}")])
        })
        .boxed()
}

fn update() -> BoxedStrategy<Toks> {
    let target = vec!["t".to_owned()];
    (
        prop::option::of(update_object()),
        prop::option::of(update_object()),
        any::<bool>(),
        where_group(&target),
        prop::option::of(count()),
    )
        .prop_map(|(attrs, meta, swap, group, limit)| {
            let attrs = attrs.map(|o| cat([tok("SET"), tok("ATTRIBUTES"), o]));
            let meta = meta.map(|o| cat([tok("SET"), tok("METADATA"), o]));
            let (first, second) = match (attrs, meta) {
                (None, None) => (
                    Some(cat([tok("SET"), tok("METADATA"), tok("{"), tok("}")])),
                    None,
                ),
                (a, m) if swap => (m, a),
                (a, m) => (a, m),
            };
            cat([
                tok("UPDATE"),
                tok("?t"),
                first.unwrap_or_default(),
                second.unwrap_or_default(),
                tok("WHERE"),
                group,
                limit.map(|l| cat([tok("LIMIT"), l])).unwrap_or_default(),
            ])
        })
        .boxed()
}

fn merge() -> BoxedStrategy<Toks> {
    let vars = vec!["s".to_owned(), "t".to_owned()];
    where_group(&vars)
        .prop_map(|group| {
            cat([
                tok("MERGE"),
                tok("CONCEPT"),
                tok("?s"),
                tok("INTO"),
                tok("?t"),
                tok("WHERE"),
                group,
            ])
        })
        .boxed()
}

fn export() -> BoxedStrategy<Toks> {
    let target = vec!["t".to_owned()];
    (
        where_group(&target),
        prop::option::of(count()),
        prop::option::of(text(string_lit().boxed())),
    )
        .prop_map(|(group, limit, cursor)| {
            cat([
                tok("EXPORT"),
                tok("?t"),
                tok("WHERE"),
                group,
                limit.map(|l| cat([tok("LIMIT"), l])).unwrap_or_default(),
                cursor.map(|c| cat([tok("CURSOR"), c])).unwrap_or_default(),
            ])
        })
        .boxed()
}

fn command() -> BoxedStrategy<Toks> {
    prop_oneof![
        4 => find_query(),
        3 => upsert(),
        2 => delete(),
        1 => describe(),
        1 => search(),
        2 => update(),
        1 => merge(),
        1 => export(),
    ]
    .boxed()
}

// ------------------------------------------------------------------ trivia

/// What may stand between two tokens.
fn separator() -> impl Strategy<Value = String> {
    let comment_text = prop::collection::vec(
        prop_oneof![
            any::<char>(),
            select(vec!['"', '/', '\\', '{', '}', ' ', '\t', '中', '😀', ':'])
        ],
        0..12,
    )
    .prop_map(|cs| {
        cs.into_iter()
            .filter(|c| *c != '\n' && *c != '\r')
            .collect::<String>()
    });
    prop_oneof![
        6 => Just(String::new()),
        6 => Just(" ".to_owned()),
        2 => select(vec!["\n", "\r\n", "\r", "\t", "  \n    ", "\n\n", "\u{feff}"]).prop_map(String::from),
        2 => (comment_text, select(vec!["\n", "\r\n", "\r"]), select(vec!["", " ", "\n  "]))
            .prop_map(|(text, eol, after)| format!(" //{text}{eol}{after}")),
    ]
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Joins tokens with the separators, inserting a space where two tokens
/// would otherwise run together.
fn render(tokens: &[String], separators: &[String]) -> String {
    let mut out = String::new();
    for (i, token) in tokens.iter().enumerate() {
        let sep = separators.get(i).map(String::as_str).unwrap_or(" ");
        let needs_space = out.chars().last().is_some_and(is_word_char)
            && token.chars().next().is_some_and(is_word_char);
        if sep.is_empty() && needs_space {
            out.push(' ');
        } else {
            out.push_str(sep);
        }
        out.push_str(token);
    }
    if let Some(last) = separators.get(tokens.len()) {
        out.push_str(last);
    }
    out
}

fn script() -> impl Strategy<Value = String> {
    prop::collection::vec(command(), 1..4)
        .prop_map(|commands| commands.concat())
        .prop_flat_map(|tokens| {
            let n = tokens.len() + 1;
            (Just(tokens), prop::collection::vec(separator(), n))
        })
        .prop_map(|(tokens, separators)| render(&tokens, &separators))
}

fn comment_texts(source: &str) -> Vec<String> {
    let mut texts: Vec<String> = scan_comments(source).into_iter().map(|c| c.text).collect();
    texts.sort();
    texts
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    })]

    #[test]
    fn formatting_a_valid_text_keeps_its_meaning_and_comments(source in script()) {
        let ast = match parse(&source) {
            Ok(ast) => ast,
            Err(e) => panic!("the generated text must parse:\n{source}\n{e:#?}"),
        };
        let formatted = format_source(&source).expect("a valid text formats");
        let reparsed = match parse(&formatted) {
            Ok(ast) => ast,
            Err(e) => panic!("the formatted text must parse:\n{source}\n---\n{formatted}\n{e:#?}"),
        };
        prop_assert_eq!(&ast, &reparsed, "formatting changed the tree:\n{}\n---\n{}", source, formatted);
        let again = format_source(&formatted).expect("the formatted text formats");
        prop_assert_eq!(&formatted, &again, "formatting is not idempotent:\n{}", source);
        prop_assert_eq!(
            comment_texts(&source),
            comment_texts(&formatted),
            "comments changed:\n{}\n---\n{}", source, formatted
        );
    }
}

/// The generator itself must be able to produce every kind of command and
/// the interesting lexical cases, or the property above proves little.
#[test]
fn the_generator_covers_the_grammar() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let mut runner = TestRunner::deterministic();
    let strategy = script();
    let mut seen = BTreeSet::new();
    let probes = [
        "FIND(",
        "UPSERT",
        "DELETE ATTRIBUTES",
        "DELETE METADATA",
        "DELETE PROPOSITIONS",
        "DELETE CONCEPT",
        "DESCRIBE",
        "SEARCH",
        "NOT",
        "OPTIONAL",
        "UNION",
        "FILTER(",
        "ORDER",
        "LIMIT",
        "CURSOR",
        "SET ATTRIBUTES",
        "SET PROPOSITIONS",
        "WITH METADATA",
        "PROPOSITION",
        "IN(",
        "IS_NULL(",
        "REGEX(",
        "COUNT(",
        "DISTINCT",
        "||",
        "&&",
        "!",
        "//",
        "\r\n",
        "\\u",
        "\\n",
        ":",
        "|",
    ];
    for _ in 0..400 {
        let text = strategy
            .new_tree(&mut runner)
            .expect("the strategy generates")
            .current();
        for probe in probes {
            if text.contains(probe) {
                seen.insert(probe);
            }
        }
    }
    let missing: Vec<&str> = probes
        .iter()
        .copied()
        .filter(|p| !seen.contains(p))
        .collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}
