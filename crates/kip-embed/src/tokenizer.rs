//! XLM-RoBERTa's SentencePiece-unigram tokenizer: per-codepoint
//! normalisation, runs of spaces collapsed, the `▁` metaspace, then the
//! Viterbi segmentation of highest total piece score (an unknown single
//! character scores 10 below the worst piece). It gives the same pieces as
//! the reference tokenizer of the model image's package.

use crate::format::Vocab;

const METASPACE: char = '\u{2581}';

impl Vocab {
    /// The content pieces of `text` (no `<s>` / `</s>`).
    pub(crate) fn tokenize(&self, text: &str) -> Vec<u32> {
        let mut chars: Vec<char> = Vec::with_capacity(text.len() + 1);
        for ch in text.chars() {
            match self.normalize.get(&u32::from(ch)) {
                Some(repl) => chars.extend(repl.iter().filter_map(|&cp| char::from_u32(cp))),
                None => chars.push(ch),
            }
        }
        chars.dedup_by(|b, a| *a == ' ' && *b == ' ');
        if chars.first() != Some(&' ') {
            chars.insert(0, ' ');
        }
        let normalized: String = chars
            .iter()
            .map(|&c| if c == ' ' { METASPACE } else { c })
            .collect();
        // Byte offset of every character start, plus the end.
        let mut starts: Vec<usize> = normalized.char_indices().map(|(i, _)| i).collect();
        starts.push(normalized.len());
        self.viterbi(normalized.as_bytes(), &starts)
    }

    fn viterbi(&self, bytes: &[u8], starts: &[usize]) -> Vec<u32> {
        let n = starts.len() - 1;
        let unk_score = self.scores.iter().copied().fold(f32::INFINITY, f32::min) - 10.0;
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        // (piece id or None for unknown, start character) of the best path.
        let mut back: Vec<(Option<u32>, usize)> = vec![(None, 0); n + 1];
        best[0] = 0.0;
        for i in 0..n {
            if best[i] == f32::NEG_INFINITY {
                continue;
            }
            for e in i + 1..=n {
                let span = &bytes[starts[i]..starts[e]];
                if span.len() > self.max_piece_bytes {
                    break;
                }
                if let Some(&id) = self.pieces.get(span)
                    && id != self.unk
                {
                    let score = best[i] + self.scores[id as usize];
                    if score > best[e] {
                        best[e] = score;
                        back[e] = (Some(id), i);
                    }
                }
            }
            let score = best[i] + unk_score;
            if score > best[i + 1] {
                best[i + 1] = score;
                back[i + 1] = (None, i);
            }
        }
        let mut out = Vec::new();
        let mut at = n;
        while at > 0 {
            let (id, from) = back[at];
            out.push(id.unwrap_or(self.unk));
            at = from;
        }
        out.reverse();
        out
    }
}
