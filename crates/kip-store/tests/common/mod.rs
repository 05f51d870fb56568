//! Helpers shared by the integration tests.

// Each test file uses a different subset.
#![allow(dead_code)]

use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// Any JSON value, up to three levels deep: every kind of number (negative
/// and huge integers, floats including integral ones), strings with any
/// characters (NUL and CJK included), and objects whose key order matters.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter_map("finite", Number::from_f64)
            .prop_map(Value::Number),
        prop_oneof![Just(1.0), Just(-0.0), Just(0.1), Just(1e300)]
            .prop_filter_map("finite", Number::from_f64)
            .prop_map(Value::Number),
        "\\PC{0,8}".prop_map(Value::String),
        prop_oneof![Just("\0"), Just("阿司匹林"), Just("")]
            .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("\\PC{0,4}", inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}
