//! Tokenization for SEARCH: one function used both to index text and to read
//! queries, so that both sides always agree.
//!
//! Text is lower-cased and split into words at every character that is not
//! a letter or digit (Unicode-aware). Runs of scripts written without
//! spaces — Han, Hiragana, Katakana, Hangul — are cut into overlapping
//! character bigrams instead (a lone character stays a unigram), the usual way to make Chinese,
//! Japanese and Korean searchable without a dictionary: `阿司匹林` gives
//! `阿司`, `司匹`, `匹林`, and a query for `阿司匹林` or `司匹` matches it.

/// Whether `c` belongs to a script written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF     // Hiragana, Katakana
        | 0x3400..=0x4DBF   // CJK Extension A
        | 0x4E00..=0x9FFF   // CJK Unified Ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0x1100..=0x11FF   // Hangul Jamo
        | 0xF900..=0xFAFF   // CJK Compatibility Ideographs
        | 0x20000..=0x2FA1F // CJK Extensions B–F and supplements
    )
}

/// The search terms of `text`, in order, with repeats.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut run: Vec<char> = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if is_cjk(c) {
            if !word.is_empty() {
                terms.push(std::mem::take(&mut word));
            }
            run.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut run, &mut terms);
            word.extend(c.to_lowercase());
        } else {
            flush_cjk(&mut run, &mut terms);
            if !word.is_empty() {
                terms.push(std::mem::take(&mut word));
            }
        }
    }
    flush_cjk(&mut run, &mut terms);
    if !word.is_empty() {
        terms.push(word);
    }
    terms
}

fn flush_cjk(run: &mut Vec<char>, terms: &mut Vec<String>) {
    match run.len() {
        0 => {}
        1 => terms.push(run[0].to_string()),
        _ => terms.extend(run.windows(2).map(|w| w.iter().collect())),
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::tokenize;

    #[test]
    fn english_words_are_lower_cased() {
        assert_eq!(
            tokenize("Aspirin treats Headache."),
            ["aspirin", "treats", "headache"]
        );
    }

    #[test]
    fn chinese_is_cut_into_bigrams() {
        assert_eq!(tokenize("阿司匹林"), ["阿司", "司匹", "匹林"]);
        assert_eq!(tokenize("头"), ["头"]);
    }

    #[test]
    fn japanese_and_korean_too() {
        assert_eq!(tokenize("カフェイン"), ["カフ", "フェ", "ェイ", "イン"]);
        assert_eq!(tokenize("두통"), ["두통"]);
    }

    #[test]
    fn mixed_scripts_split_at_the_boundary() {
        assert_eq!(tokenize("B族维生素"), ["b", "族维", "维生", "生素"]);
    }
}
