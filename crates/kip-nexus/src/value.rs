//! Comparing and ordering JSON values the way FILTER and ORDER BY need.
//!
//! FILTER comparisons follow BRIEF §3: a comparison with `null` (a missing
//! path) is false, and values of different JSON kinds are never ordered
//! against each other (`<` between a string and a number is false). Numbers
//! compare numerically whatever their representation (`2 == 2.0`).
//!
//! ORDER BY needs a total order instead: `null` < booleans < numbers <
//! strings < arrays < objects, each ordered within its kind.
//!
//! Comparisons recurse into arrays and objects: values are at most
//! `kip_lang::MAX_DEPTH` deep (the parser and parameter binding refuse
//! deeper ones, and the store's codec holds the same limit).

use std::cmp::Ordering;

use serde_json::Value;

/// A number as `f64` (every JSON number of KIP is one).
fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// The ordering of two values of the same comparable kind, `None` otherwise
/// (different kinds, or either is null, an array or an object).
pub fn partial_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => num(a)?.partial_cmp(&num(b)?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// FILTER's `==`: JSON equality with numbers compared numerically; `null`
/// equals nothing, not even `null` (a missing path matches no value).
pub fn equals(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Number(_), Value::Number(_)) => num(a) == num(b),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equals(p, q))
        }
        _ => a == b,
    }
}

fn kind_rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

/// The total order of ORDER BY.
pub fn total_cmp(a: &Value, b: &Value) -> Ordering {
    let by_kind = kind_rank(a).cmp(&kind_rank(b));
    if by_kind != Ordering::Equal {
        return by_kind;
    }
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => {
            let (x, y) = (num(a).unwrap_or(0.0), num(b).unwrap_or(0.0));
            x.total_cmp(&y)
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = total_cmp(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(_), Value::Object(_)) => a.to_string().cmp(&b.to_string()),
        _ => Ordering::Equal,
    }
}

/// Whether a FILTER result counts as true: only `true` does.
pub fn truthy(v: &Value) -> bool {
    matches!(v, Value::Bool(true))
}

/// Adds two JSON numbers, keeping integers integral while they fit.
pub fn add(a: &Value, b: &Value) -> Option<Value> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64())
        && let Some(sum) = x.checked_add(y)
    {
        return Some(Value::from(sum));
    }
    Some(Value::from(num(a)? + num(b)?))
}

/// Multiplies two JSON numbers, keeping integers integral while they fit.
pub fn mul(a: &Value, b: &Value) -> Option<Value> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64())
        && let Some(product) = x.checked_mul(y)
    {
        return Some(Value::from(product));
    }
    let product = num(a)? * num(b)?;
    // A product that is not a finite number has no JSON form.
    product.is_finite().then(|| Value::from(product))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn null_compares_false_and_kinds_do_not_mix() {
        assert!(!equals(&Value::Null, &Value::Null));
        assert_eq!(partial_cmp(&json!(1), &json!("1")), None);
        assert!(equals(&json!(2), &json!(2.0)));
        assert_eq!(partial_cmp(&json!("a"), &json!("b")), Some(Ordering::Less));
    }

    #[test]
    fn total_order_ranks_kinds_then_values() {
        let mut values = vec![
            json!("b"),
            json!(2),
            json!(null),
            json!(true),
            json!(1.5),
            json!("a"),
        ];
        values.sort_by(total_cmp);
        assert_eq!(
            values,
            vec![
                json!(null),
                json!(true),
                json!(1.5),
                json!(2),
                json!("a"),
                json!("b")
            ]
        );
    }

    #[test]
    fn sums_stay_integral_when_they_can() {
        assert_eq!(add(&json!(2), &json!(3)), Some(json!(5)));
        assert_eq!(add(&json!(2), &json!(0.5)), Some(json!(2.5)));
        assert_eq!(mul(&json!(2), &json!(3)), Some(json!(6)));
        assert_eq!(mul(&json!(0.5), &json!(0.9)), Some(json!(0.45)));
    }
}
