//! The one-line text of the tree's small pieces (keys, terms, paths,
//! expressions) and of values, inline or expanded to fit a width.

use std::fmt::Write as _;

use super::INDENT;
use crate::ast::*;
use crate::lexeme::is_identifier;

pub(super) fn key_list(keys: &[Arg<String>]) -> String {
    let keys: Vec<String> = keys.iter().map(text).collect();
    format!("{{{}}}", keys.join(", "))
}

pub(super) fn string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
}

pub(super) fn text(arg: &Arg<String>) -> String {
    match arg {
        Arg::Lit(s, _) => string(s),
        Arg::Param(p) => format!(":{}", p.name),
    }
}

pub(super) fn count(arg: &Arg<u64>) -> String {
    match arg {
        Arg::Lit(n, _) => n.to_string(),
        Arg::Param(p) => format!(":{}", p.name),
    }
}

pub(super) fn key(k: &str) -> String {
    if is_identifier(k) {
        k.to_owned()
    } else {
        string(k)
    }
}

pub(super) fn concept_matcher(m: &ConceptMatcher) -> String {
    match m {
        ConceptMatcher::Id(id) => format!("{{id: {}}}", text(id)),
        ConceptMatcher::TypeName { ty, name } => {
            format!("{{type: {}, name: {}}}", text(ty), text(name))
        }
        ConceptMatcher::Type(ty) => format!("{{type: {}}}", text(ty)),
        ConceptMatcher::Name(name) => format!("{{name: {}}}", text(name)),
    }
}

pub(super) fn proposition_matcher(m: &PropositionMatcher) -> String {
    match m {
        PropositionMatcher::Id(id) => format!("(id: {})", text(id)),
        PropositionMatcher::Triple(t) => format!(
            "({}, {}, {})",
            term(&t.subject),
            predicate(&t.predicate),
            term(&t.object)
        ),
    }
}

pub(super) fn term(t: &Term) -> String {
    match t {
        Term::Var(v) => format!("?{}", v.name),
        Term::Concept(m, _) => concept_matcher(m),
        Term::Proposition(m, _) => proposition_matcher(m),
    }
}

pub(super) fn predicate(p: &PredicateExpr) -> String {
    match p {
        PredicateExpr::Var(v) => format!("?{}", v.name),
        PredicateExpr::Names { names, hops, .. } => {
            let names: Vec<String> = names.iter().map(text).collect();
            let mut s = names.join(" | ");
            if let Some(h) = hops {
                match h.max {
                    Some(max) if max == h.min => {
                        let _ = write!(s, "{{{}}}", h.min);
                    }
                    Some(max) => {
                        let _ = write!(s, "{{{},{max}}}", h.min);
                    }
                    None => {
                        let _ = write!(s, "{{{},}}", h.min);
                    }
                }
            }
            s
        }
    }
}

pub(super) fn dot_path(p: &DotPath) -> String {
    let mut s = format!("?{}", p.var.name);
    let (head, rest): (&str, &[String]) = match &p.field {
        Field::Whole => return s,
        Field::Id => ("id", &[]),
        Field::Type => ("type", &[]),
        Field::Name => ("name", &[]),
        Field::Subject => ("subject", &[]),
        Field::Predicate => ("predicate", &[]),
        Field::Object => ("object", &[]),
        Field::Attributes(path) => ("attributes", path),
        Field::Metadata(path) => ("metadata", path),
    };
    s.push('.');
    s.push_str(head);
    for segment in rest {
        s.push('.');
        s.push_str(segment);
    }
    s
}

pub(super) fn projection(p: &Projection) -> String {
    match p {
        Projection::Path(path) => dot_path(path),
        Projection::Aggregate(a) => format!(
            "{}({}{})",
            a.func.keyword(),
            if a.distinct { "DISTINCT " } else { "" },
            dot_path(&a.arg)
        ),
    }
}

/// Binding strength of an expression: 1 `||`, 2 `&&`, 3 `!`, 4 comparison, 5 operand.
pub(super) fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Or(..) => 1,
        Expr::And(..) => 2,
        Expr::Not(_) => 3,
        Expr::Compare(..) => 4,
        Expr::Call(_) | Expr::Path(_) | Expr::Value(..) => 5,
    }
}

/// Prints `e`, in parentheses if it binds less tightly than `min`.
pub(super) fn expr(e: &Expr, min: u8) -> String {
    let s = match e {
        // `||` and `&&` fold to the left, so a right operand of the same
        // strength needs parentheses to keep its shape.
        Expr::Or(l, r) => format!("{} || {}", expr(l, 1), expr(r, 2)),
        Expr::And(l, r) => format!("{} && {}", expr(l, 2), expr(r, 3)),
        Expr::Not(inner) => format!("!{}", expr(inner, 3)),
        Expr::Compare(op, l, r) => format!("{} {} {}", expr(l, 5), op.symbol(), expr(r, 5)),
        Expr::Call(c) => {
            let args: Vec<String> = c.args.iter().map(|a| expr(a, 0)).collect();
            format!("{}({})", c.func.keyword(), args.join(", "))
        }
        Expr::Path(p) => dot_path(p),
        Expr::Value(v, _) => value_text(v, usize::MAX, 0),
    };
    if precedence(e) < min {
        format!("({s})")
    } else {
        s
    }
}

/// A value: on one line if it fits in `width`, else expanded, with nested
/// lines indented `depth + 1` levels relative to the first line's indentation.
pub(super) fn value_text(v: &Value, width: usize, depth: usize) -> String {
    let inline = value_inline(v);
    if inline.len() <= width {
        return inline;
    }
    let pad = INDENT.repeat(depth + 1);
    let close = INDENT.repeat(depth);
    let inner_width = width.saturating_sub(INDENT.len());
    match v {
        Value::Object(obj) if !obj.members.is_empty() => {
            let mut s = String::from("{\n");
            let n = obj.members.len();
            for (i, (k, val)) in obj.members.iter().enumerate() {
                let k = key(k);
                let val = value_text(val, inner_width.saturating_sub(k.len() + 3), depth + 1);
                let sep = if i + 1 < n { "," } else { "" };
                let _ = writeln!(s, "{pad}{k}: {val}{sep}");
            }
            s.push_str(&close);
            s.push('}');
            s
        }
        Value::Array(items) if !items.is_empty() => {
            let mut s = String::from("[\n");
            let n = items.len();
            for (i, val) in items.iter().enumerate() {
                let val = value_text(val, inner_width.saturating_sub(1), depth + 1);
                let sep = if i + 1 < n { "," } else { "" };
                let _ = writeln!(s, "{pad}{val}{sep}");
            }
            s.push_str(&close);
            s.push(']');
            s
        }
        _ => inline,
    }
}

/// The object of an UPDATE's SET: on one line if it fits in `width`, else
/// one member per line (plain values expanded as [`value_text`] does).
pub(super) fn update_object_text(object: &UpdateObject, width: usize) -> String {
    let members: Vec<String> = object
        .members
        .iter()
        .map(|(k, v)| format!("{}: {}", key(k), update_value_inline(v)))
        .collect();
    let inline = if members.is_empty() {
        "{}".to_owned()
    } else {
        format!("{{{}}}", members.join(", "))
    };
    if inline.len() <= width || object.members.is_empty() {
        return inline;
    }
    let inner_width = width.saturating_sub(INDENT.len());
    let mut s = String::from("{\n");
    let n = object.members.len();
    for (i, (k, v)) in object.members.iter().enumerate() {
        let k = key(k);
        let v = match v {
            UpdateValue::Value(value, _) => {
                value_text(value, inner_width.saturating_sub(k.len() + 3), 1)
            }
            other => update_value_inline(other),
        };
        let sep = if i + 1 < n { "," } else { "" };
        let _ = writeln!(s, "{INDENT}{k}: {v}{sep}");
    }
    s.push('}');
    s
}

pub(super) fn update_value_inline(v: &UpdateValue) -> String {
    match v {
        UpdateValue::Value(value, _) => value_inline(value),
        UpdateValue::Path(p) => dot_path(p),
        UpdateValue::Call(c) => {
            let args: Vec<String> = c.args.iter().map(update_value_inline).collect();
            format!("{}({})", c.func.keyword(), args.join(", "))
        }
    }
}

pub(super) fn value_inline(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(value_inline).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(obj) => {
            if obj.members.is_empty() {
                return "{}".into();
            }
            let members: Vec<String> = obj
                .members
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k), value_inline(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        Value::Param(p) => format!(":{}", p.name),
    }
}
