//! FILTER: evaluating a boolean expression over one solution row.
//!
//! The row is seen through a resolver that gives the JSON value of a dot
//! path (`null` when the variable is unbound or the path does not exist).
//! Semantics (BRIEF §3): comparisons with `null` are false; `!` of a false
//! comparison is true; string functions on a non-string are false;
//! `IS_NULL` is the way to test for absence.

use std::collections::HashMap;

use kip_lang::ast::{Call, CompareOp, DotPath, Expr, Func};
use kip_lang::{ErrorCode, KipError};
use regex::Regex;
use serde_json::Value as Json;

use crate::value;

/// Compiled regular expressions of one command, by pattern.
#[derive(Default, Debug)]
pub struct RegexCache {
    compiled: HashMap<String, Regex>,
}

impl RegexCache {
    fn get(&mut self, pattern: &str) -> Result<&Regex, KipError> {
        if !self.compiled.contains_key(pattern) {
            let re = regex::RegexBuilder::new(pattern)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| {
                    KipError::new(
                        ErrorCode::InvalidSyntax,
                        format!("invalid regular expression {pattern:?}: {e}"),
                    )
                    .with_hint("REGEX takes a Rust/RE2-style pattern, e.g. REGEX(?x.name, \"^Asp\"); lookaround and backreferences are not supported.")
                })?;
            self.compiled.insert(pattern.to_owned(), re);
        }
        self.compiled
            .get(pattern)
            .ok_or_else(|| KipError::new(ErrorCode::InternalError, "regex cache"))
    }
}

/// Evaluates `expr` to a JSON value; `resolve` reads dot paths.
///
/// Recursive: an expression is at most [`kip_lang::MAX_DEPTH`] deep (the
/// parser refuses deeper ones), and each kind is evaluated by its own small
/// function so that a level of recursion costs a small frame even in a
/// debug build (one function holding every arm's temporaries took 6 KiB a
/// level, too much for 256 levels on a 2 MiB thread).
pub fn eval(
    expr: &Expr,
    resolve: &mut dyn FnMut(&DotPath) -> Result<Json, KipError>,
    regexes: &mut RegexCache,
) -> Result<Json, KipError> {
    match expr {
        Expr::Or(l, r) => logic(true, l, r, resolve, regexes),
        Expr::And(l, r) => logic(false, l, r, resolve, regexes),
        Expr::Not(e) => negation(e, resolve, regexes),
        Expr::Compare(op, l, r) => comparison(*op, l, r, resolve, regexes),
        Expr::Call(call) => self::call(call, resolve, regexes),
        Expr::Path(path) => resolve(path),
        Expr::Value(v, _) => Ok(v.to_json().unwrap_or(Json::Null)),
    }
}

/// `l || r` (`or`) or `l && r`, short-circuiting.
fn logic(
    or: bool,
    l: &Expr,
    r: &Expr,
    resolve: &mut dyn FnMut(&DotPath) -> Result<Json, KipError>,
    regexes: &mut RegexCache,
) -> Result<Json, KipError> {
    let left = value::truthy(&eval(l, resolve, regexes)?);
    if left == or {
        return Ok(Json::Bool(left));
    }
    Ok(Json::Bool(value::truthy(&eval(r, resolve, regexes)?)))
}

fn negation(
    e: &Expr,
    resolve: &mut dyn FnMut(&DotPath) -> Result<Json, KipError>,
    regexes: &mut RegexCache,
) -> Result<Json, KipError> {
    Ok(Json::Bool(!value::truthy(&eval(e, resolve, regexes)?)))
}

fn comparison(
    op: CompareOp,
    l: &Expr,
    r: &Expr,
    resolve: &mut dyn FnMut(&DotPath) -> Result<Json, KipError>,
    regexes: &mut RegexCache,
) -> Result<Json, KipError> {
    let a = eval(l, resolve, regexes)?;
    let b = eval(r, resolve, regexes)?;
    Ok(Json::Bool(compare(op, &a, &b)))
}

/// Whether `expr` holds for a row.
pub fn holds(
    expr: &Expr,
    resolve: &mut dyn FnMut(&DotPath) -> Result<Json, KipError>,
    regexes: &mut RegexCache,
) -> Result<bool, KipError> {
    Ok(value::truthy(&eval(expr, resolve, regexes)?))
}

fn compare(op: CompareOp, a: &Json, b: &Json) -> bool {
    use std::cmp::Ordering::*;
    match op {
        CompareOp::Eq => value::equals(a, b),
        CompareOp::Ne => !a.is_null() && !b.is_null() && !value::equals(a, b),
        CompareOp::Lt => value::partial_cmp(a, b) == Some(Less),
        CompareOp::Le => matches!(value::partial_cmp(a, b), Some(Less | Equal)),
        CompareOp::Gt => value::partial_cmp(a, b) == Some(Greater),
        CompareOp::Ge => matches!(value::partial_cmp(a, b), Some(Greater | Equal)),
    }
}

fn call(
    call: &Call,
    resolve: &mut dyn FnMut(&DotPath) -> Result<Json, KipError>,
    regexes: &mut RegexCache,
) -> Result<Json, KipError> {
    let mut args = Vec::with_capacity(call.args.len());
    for a in &call.args {
        args.push(eval(a, resolve, regexes)?);
    }
    let first = args.first().unwrap_or(&Json::Null);
    let second = args.get(1).unwrap_or(&Json::Null);
    let strings = || match (first, second) {
        (Json::String(s), Json::String(t)) => Some((s.as_str(), t.as_str())),
        _ => None,
    };
    Ok(Json::Bool(match call.func {
        Func::Contains => match (first, second) {
            (Json::Array(items), needle) => items.iter().any(|i| value::equals(i, needle)),
            _ => strings().is_some_and(|(s, t)| s.contains(t)),
        },
        Func::StartsWith => strings().is_some_and(|(s, t)| s.starts_with(t)),
        Func::EndsWith => strings().is_some_and(|(s, t)| s.ends_with(t)),
        Func::Regex => match strings() {
            Some((s, pattern)) => regexes.get(pattern)?.is_match(s),
            None => false,
        },
        Func::In => match second {
            Json::Array(items) => items.iter().any(|i| value::equals(first, i)),
            _ => false,
        },
        Func::IsNull => first.is_null(),
        Func::IsNotNull => !first.is_null(),
    }))
}
