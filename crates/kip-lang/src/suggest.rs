//! "Did you mean": the candidates closest to a misspelt name.

/// The candidates similar to `word`, best first: an exact match ignoring
/// case, then those within a small edit distance (relative to the length),
/// at most three.
pub fn similar<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let lower = word.to_lowercase();
    let mut scored: Vec<(usize, &str)> = Vec::new();
    for candidate in candidates {
        if candidate == word {
            continue;
        }
        let c_lower = candidate.to_lowercase();
        let distance = if c_lower == lower {
            0
        } else if lower.chars().count() >= 3
            && (c_lower.starts_with(&lower) || lower.starts_with(&c_lower))
        {
            // A truncated or over-long name (`belongs_to` for `belongs_to_domain`).
            1
        } else {
            strsim::damerau_levenshtein(&lower, &c_lower) + 1
        };
        let budget = (word.chars().count().max(candidate.chars().count()) / 3).max(1) + 1;
        if distance <= budget && !scored.iter().any(|&(_, c)| c == candidate) {
            scored.push((distance, candidate));
        }
    }
    scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(3)
        .map(|(_, c)| c.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::similar;

    #[test]
    fn suggests_transpositions_case_and_typos() {
        assert_eq!(similar("FIDN", ["FIND", "FILTER", "UPSERT"]), ["FIND"]);
        assert_eq!(similar("find", ["FIND", "FILTER"]), ["FIND"]);
        assert_eq!(similar("Drugs", ["Drug", "Symptom"]), ["Drug"]);
        assert!(similar("Zebra", ["Drug", "Symptom"]).is_empty());
        assert_eq!(
            similar("belongs_to", ["belongs_to_domain", "treats"]),
            ["belongs_to_domain"]
        );
    }
}
