//! What a read returned (issue 31 §7): the ids of the elements in a read's
//! result, bounded, so a folded read entry says what the agent saw without
//! the trace growing with the size of results.
//!
//! An element is "returned" when the result holds an object whose `id` is a
//! concept or link id (`C:…`, `P:…`): what FIND gives for a bare `?x`,
//! SEARCH's hits, DESCRIBE's schema concepts. Ids inside `attributes` and
//! `metadata`, and a link's `subject` / `object` strings, are not counted:
//! the agent was given the link, not its ends. A read keeps the first
//! [`MAX_READ_IDS`] distinct ids in result order and counts the rest;
//! a folded entry keeps the union of its reads' ids, bounded the same way,
//! each with how many of the fold's reads returned it.

use serde_json::{Map, Value as Json, json};

/// The most distinct ids one read, and one folded entry, keeps.
pub const MAX_READ_IDS: usize = 50;

/// The ids a read (or a fold of reads) returned: each with how many reads
/// returned it, in first-seen order, and how many returned ids were past
/// the bound.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Returned {
    pub ids: Vec<(String, u64)>,
    pub more: u64,
}

impl Returned {
    /// The ids in one read's `result`.
    pub fn of(result: &Json) -> Returned {
        let mut out = Returned::default();
        out.walk(result);
        out
    }

    fn walk(&mut self, v: &Json) {
        match v {
            Json::Array(items) => items.iter().for_each(|i| self.walk(i)),
            Json::Object(map) => {
                if let Some(id) = map.get("id").and_then(Json::as_str)
                    && is_element_id(id)
                {
                    self.add(id, 1);
                }
                for (k, v) in map {
                    if !matches!(k.as_str(), "attributes" | "metadata")
                        && (v.is_object() || v.is_array())
                    {
                        self.walk(v);
                    }
                }
            }
            _ => {}
        }
    }

    /// Counts `id` `n` times (once per read that returned it).
    fn add(&mut self, id: &str, n: u64) {
        if let Some(slot) = self.ids.iter_mut().find(|(i, _)| i == id) {
            // One read that returns an element twice returned it once.
            slot.1 = slot.1.max(n);
        } else if self.ids.len() < MAX_READ_IDS {
            self.ids.push((id.to_owned(), n));
        } else {
            self.more += 1;
        }
    }

    /// Adds another read's ids to a fold.
    pub fn merge(&mut self, other: &Returned) {
        for (id, n) in &other.ids {
            if let Some(slot) = self.ids.iter_mut().find(|(i, _)| i == id) {
                slot.1 += n;
            } else if self.ids.len() < MAX_READ_IDS {
                self.ids.push((id.clone(), *n));
            } else {
                self.more += n;
            }
        }
        self.more += other.more;
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.more == 0
    }

    /// The entry's `data.returned`: `{id: reads}`.
    pub fn to_json(&self) -> Json {
        let map: Map<String, Json> = self
            .ids
            .iter()
            .map(|(i, n)| (i.clone(), json!(n)))
            .collect();
        Json::Object(map)
    }
}

fn is_element_id(s: &str) -> bool {
    s.strip_prefix("C:")
        .or_else(|| s.strip_prefix("P:"))
        .is_some_and(|d| !d.is_empty() && d.len() <= 20 && d.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{MAX_READ_IDS, Returned};

    #[test]
    fn ids_of_result_objects_are_kept_but_not_those_in_attributes_or_link_ends() {
        let result = json!([
            {"id": "C:1", "name": "a", "attributes": {"x": {"id": "C:9"}}},
            {"id": "P:2", "subject": "C:3", "object": "C:4", "metadata": {"id": "C:8"}},
            [{"id": "C:1"}, {"id": "not an id"}, {"id": "C:"}],
            {"rows": {"x": {"id": "C:5"}}}
        ]);
        let r = Returned::of(&result);
        let ids: Vec<&str> = r.ids.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(ids, ["C:1", "P:2", "C:5"]);
        assert!(r.ids.iter().all(|(_, n)| *n == 1));
        assert_eq!(r.more, 0);
    }

    #[test]
    fn a_read_keeps_the_first_ids_and_counts_the_rest_and_a_fold_merges_with_counts() {
        let many: Vec<_> = (1..=MAX_READ_IDS + 7)
            .map(|i| json!({"id": format!("C:{i}")}))
            .collect();
        let big = Returned::of(&json!(many));
        assert_eq!(big.ids.len(), MAX_READ_IDS);
        assert_eq!(big.more, 7);
        let mut fold = Returned::of(&json!([{"id": "C:1"}, {"id": "C:999"}]));
        fold.merge(&big);
        assert_eq!(fold.ids.len(), MAX_READ_IDS);
        assert_eq!(fold.ids[0], ("C:1".to_owned(), 2));
        assert_eq!(fold.ids[1], ("C:999".to_owned(), 1));
        // C:2 … C:49 fitted, C:50 did not, nor the 7 past `big`'s bound.
        assert_eq!(fold.more, 1 + 7);
    }
}
