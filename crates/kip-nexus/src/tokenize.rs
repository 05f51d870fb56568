//! Tokenization for SEARCH: one function used both to index text and to read
//! queries, so that both sides always agree.
//!
//! Text is lower-cased and split into words at every character that is not
//! a letter or digit (Unicode-aware). Runs of scripts written without
//! spaces — Han, Hiragana, Katakana, Hangul — are cut into overlapping
//! character bigrams instead (a lone character stays a unigram), the usual way to make Chinese,
//! Japanese and Korean searchable without a dictionary: `阿司匹林` gives
//! `阿司`, `司匹`, `匹林`, and a query for `阿司匹林` or `司匹` matches it.
//!
//! Documents are indexed with [`index_terms`], which adds one term to what
//! [`tokenize`] gives: the last character of each CJK run, alone. Every
//! character of a run is then either the first of one of its bigrams or
//! that last unigram, so a query of one character (`汤` for `麻黄汤`) finds
//! the run by a prefix lookup of the bigrams plus one exact term. A query
//! never contains those extra unigrams, so both sides still agree on every
//! term a query can hold.

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
    terms(text, false)
}

/// The terms a document is indexed with: [`tokenize`]'s, plus the last
/// character of each CJK run of two or more characters.
pub fn index_terms(text: &str) -> Vec<String> {
    terms(text, true)
}

fn terms(text: &str, run_ends: bool) -> Vec<String> {
    let mut terms = Vec::new();
    each_term(text, run_ends, &mut |t| terms.push(t.to_owned()));
    terms
}

/// [`index_terms`] handed one at a time to `f`, without a string each:
/// what the bulk indexing of links calls for every name it meets.
pub fn each_index_term(text: &str, mut f: impl FnMut(&str)) {
    each_term(text, true, &mut f);
}

fn each_term(text: &str, run_ends: bool, f: &mut impl FnMut(&str)) {
    let mut run: Vec<char> = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        // ASCII, most of what is indexed, takes the short way: it is never
        // CJK, and its letters lower-case to one character.
        if c.is_ascii() {
            flush_cjk(&mut run, f, run_ends);
            if c.is_ascii_alphanumeric() {
                word.push(c.to_ascii_lowercase());
            } else {
                flush_word(&mut word, f);
            }
            continue;
        }
        if is_cjk(c) {
            flush_word(&mut word, f);
            run.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut run, f, run_ends);
            word.extend(c.to_lowercase());
        } else {
            flush_cjk(&mut run, f, run_ends);
            flush_word(&mut word, f);
        }
    }
    flush_cjk(&mut run, f, run_ends);
    flush_word(&mut word, f);
}

fn flush_word(word: &mut String, f: &mut impl FnMut(&str)) {
    if !word.is_empty() {
        f(word);
        word.clear();
    }
}

fn flush_cjk(run: &mut Vec<char>, f: &mut impl FnMut(&str), run_ends: bool) {
    let mut buf = [0u8; 8];
    match run.len() {
        0 => {}
        1 => f(run[0].encode_utf8(&mut buf)),
        n => {
            for w in run.windows(2) {
                let a = w[0].encode_utf8(&mut buf).len();
                let b = w[1].encode_utf8(&mut buf[a..]).len();
                // Two `char`s encoded side by side are valid UTF-8.
                f(std::str::from_utf8(&buf[..a + b]).unwrap_or_default());
            }
            if run_ends {
                f(run[n - 1].encode_utf8(&mut buf));
            }
        }
    }
    run.clear();
}

#[cfg(test)]
mod tests {
    use super::{index_terms, tokenize};

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
    fn documents_also_keep_the_last_character_of_each_run() {
        assert_eq!(index_terms("麻黄汤"), ["麻黄", "黄汤", "汤"]);
        assert_eq!(index_terms("头"), ["头"]);
        assert_eq!(
            index_terms("B族维生素 and 汤剂"),
            ["b", "族维", "维生", "生素", "素", "and", "汤剂", "剂"]
        );
        // Queries never hold the extra unigrams.
        assert_eq!(tokenize("麻黄汤"), ["麻黄", "黄汤"]);
    }

    /// The tokenizer as it was before its ASCII short way (and before it
    /// handed terms out one at a time): every character through the
    /// general path.
    fn general(text: &str, run_ends: bool) -> Vec<String> {
        fn flush_cjk(run: &mut Vec<char>, terms: &mut Vec<String>, run_ends: bool) {
            match run.len() {
                0 => {}
                1 => terms.push(run[0].to_string()),
                n => {
                    terms.extend(run.windows(2).map(|w| w.iter().collect()));
                    if run_ends {
                        terms.push(run[n - 1].to_string());
                    }
                }
            }
            run.clear();
        }
        let mut terms = Vec::new();
        let mut run: Vec<char> = Vec::new();
        let mut word = String::new();
        for c in text.chars() {
            if super::is_cjk(c) {
                if !word.is_empty() {
                    terms.push(std::mem::take(&mut word));
                }
                run.push(c);
            } else if c.is_alphanumeric() {
                flush_cjk(&mut run, &mut terms, run_ends);
                word.extend(c.to_lowercase());
            } else {
                flush_cjk(&mut run, &mut terms, run_ends);
                if !word.is_empty() {
                    terms.push(std::mem::take(&mut word));
                }
            }
        }
        flush_cjk(&mut run, &mut terms, run_ends);
        if !word.is_empty() {
            terms.push(word);
        }
        terms
    }

    #[test]
    fn the_ascii_short_way_gives_the_terms_of_the_general_path() {
        let alphabet: Vec<char> = "aZ09 _-.,'\"\t\nÉİßǅΣ阿司匹林カフェ두통①٣\u{301}"
            .chars()
            .collect();
        // A small linear congruential generator: the same texts every run.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize % n
        };
        for _ in 0..5_000 {
            let len = next(24);
            let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
            for run_ends in [false, true] {
                assert_eq!(
                    super::terms(&text, run_ends),
                    general(&text, run_ends),
                    "{text:?}"
                );
                if run_ends {
                    let mut each = Vec::new();
                    super::each_index_term(&text, |t| each.push(t.to_owned()));
                    assert_eq!(each, general(&text, true), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn mixed_scripts_split_at_the_boundary() {
        assert_eq!(tokenize("B族维生素"), ["b", "族维", "维生", "生素"]);
    }
}
