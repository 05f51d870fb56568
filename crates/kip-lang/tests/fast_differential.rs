//! The fast path for common KML shapes (`src/fast.rs`) against pest, the
//! reference: on every KIP text of the repository and on random KML texts,
//! `parse` (fast path first) and `parse_reference` (pest alone) give the
//! same tree, spans included, or the same errors; and wherever the fast
//! path answers, pest's tree is the same, spans included.
//!
//! Spans compare equal under `==` (see `ast::Span`), so trees are compared
//! through their `Debug` text, which prints every span.

use std::path::{Path, PathBuf};

use kip_lang::{parse, parse_fast_only, parse_pest_only, parse_reference};
use proptest::prelude::*;

#[path = "../../../fuzz/src/differential.rs"]
mod differential;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` whose name passes `keep`, skipping build output.
fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !matches!(
                name.as_ref(),
                "target" | "node_modules" | ".git" | "dist" | "build"
            ) && !name.starts_with("target")
            {
                walk(&path, keep, out);
            }
        } else if keep(&path) {
            out.push(path);
        }
    }
}

/// The KIP texts of the repository: every `.kip` file, every file of the
/// fuzz corpora and crash artifacts, the test data of this crate.
fn corpus() -> Vec<PathBuf> {
    let root = repo();
    let mut files = Vec::new();
    walk(
        &root,
        &|p| p.extension().is_some_and(|e| e == "kip"),
        &mut files,
    );
    for dir in [
        "fuzz/corpus",
        "fuzz/corpus-pending-nesting-limit",
        "fuzz/artifacts",
    ] {
        walk(&root.join(dir), &|_| true, &mut files);
    }
    walk(
        &root.join("crates/kip-lang/tests/data"),
        &|_| true,
        &mut files,
    );
    files.sort();
    files.dedup();
    files
}

#[test]
fn every_repository_text_parses_the_same_both_ways() {
    let files = corpus();
    assert!(files.len() > 300, "only {} files found", files.len());
    let mut fast = 0;
    let mut failures = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).expect("read a corpus file");
        let Ok(source) = std::str::from_utf8(&bytes) else {
            continue;
        };
        if let Err(e) = std::panic::catch_unwind(|| differential::check(source)) {
            let message = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            failures.push(format!("{}: {message}", path.display()));
        }
        if parse_fast_only(source).is_some() {
            fast += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The fast path must actually serve the capsules (not give up on all).
    assert!(
        fast >= 20,
        "the fast path took only {fast} of {} texts",
        files.len()
    );
    eprintln!("{} texts, {fast} through the fast path", files.len());
}

#[test]
fn the_example_capsules_take_the_fast_path() {
    for name in ["11_medical_data.kip", "10_medical_schema.kip"] {
        let path = repo().join("capsules/examples").join(name);
        let source = std::fs::read_to_string(&path).expect("read a capsule");
        assert!(parse_fast_only(&source).is_some(), "{name}");
    }
}

// ------------------------------------------------------------ random texts

/// A small deterministic generator of random KML texts, driven by a seed
/// that proptest chooses (and shrinks).
struct Gen {
    state: u64,
    out: String,
    /// The handles defined so far.
    handles: Vec<String>,
}

impl Gen {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }

    /// Trivia between tokens: none, spaces, tabs, line breaks of every
    /// kind, BOMs, comments (with unicode and quotes in them).
    fn ws(&mut self) {
        let n = self.below(4);
        for _ in 0..n {
            let piece = self.pick(&[
                " ",
                "  ",
                "\t",
                "\n",
                "\r\n",
                "\r",
                "\u{FEFF}",
                "// a comment\n",
                "// \"quoted\" 注释 { ( [\n",
                "//\r",
                " // trailing\r\n",
            ]);
            self.out.push_str(piece);
        }
    }

    /// Trivia that must separate two words.
    fn sep(&mut self) {
        let before = self.out.len();
        self.ws();
        if self.out.len() == before {
            self.out.push(' ');
        }
    }

    fn tok(&mut self, t: &str) {
        self.ws();
        self.out.push_str(t);
    }

    fn ident(&mut self) -> String {
        let first = self.pick(&["a", "B", "_", "drug", "Symptom", "x_1", "treats", "Z9"]);
        let mut s = first.to_owned();
        for _ in 0..self.below(3) {
            s.push_str(self.pick(&["a", "0", "_", "Q", "z"]));
        }
        s
    }

    /// A string literal's body, with unicode and every escape.
    fn string_body(&mut self) -> String {
        let mut s = String::new();
        for _ in 0..self.below(5) {
            s.push_str(self.pick(&[
                "a",
                " ",
                "阿司匹林",
                "é",
                "\u{1F600}",
                "\\n",
                "\\\"",
                "\\\\",
                "\\/",
                "\\b",
                "\\f",
                "\\r",
                "\\t",
                "\\u00e9",
                "\\ud83d\\ude00",
                "//",
                "{",
                ")",
                "'",
                "\t",
            ]));
        }
        s
    }

    fn string(&mut self) {
        let body = self.string_body();
        self.tok(&format!("\"{body}\""));
    }

    fn number(&mut self) {
        let n = self.pick(&[
            "0",
            "-0",
            "1",
            "42",
            "-7",
            "3.25",
            "1e3",
            "-2.5E-4",
            "6.02e+23",
            "0.5",
            "123456789012345678901234567890",
        ]);
        self.tok(n);
    }

    fn key(&mut self, used: &mut Vec<String>) {
        loop {
            let k = if self.chance(20) {
                format!("${}", self.ident())
            } else {
                self.ident()
            };
            if used.contains(&k) {
                continue;
            }
            used.push(k.clone());
            if self.chance(30) {
                self.tok(&format!("\"{k}\""));
            } else {
                self.tok(&k);
            }
            return;
        }
    }

    fn value(&mut self, depth: u32) {
        match self.below(if depth > 3 { 5 } else { 7 }) {
            0 => self.string(),
            1 => self.number(),
            2 => self.tok("true"),
            3 => self.tok("false"),
            4 => self.tok("null"),
            5 => self.object(depth + 1),
            _ => {
                self.tok("[");
                let n = self.below(4);
                for i in 0..n {
                    if i > 0 {
                        self.tok(",");
                    }
                    self.value(depth + 1);
                }
                if n > 0 && self.chance(20) {
                    self.tok(",");
                }
                self.tok("]");
            }
        }
    }

    fn object(&mut self, depth: u32) {
        self.tok("{");
        let n = self.below(4);
        let mut used = Vec::new();
        for i in 0..n {
            if i > 0 {
                self.tok(",");
            }
            self.key(&mut used);
            self.tok(":");
            self.value(depth);
        }
        if n > 0 && self.chance(20) {
            self.tok(",");
        }
        self.tok("}");
    }

    fn concept_pattern(&mut self) {
        self.tok("{");
        match self.below(3) {
            0 => {
                self.tok("id");
                self.tok(":");
                self.string();
            }
            1 => {
                self.tok("type");
                self.tok(":");
                let t = self.ident();
                let t = if self.chance(20) { format!("${t}") } else { t };
                self.tok(&format!("\"{t}\""));
                self.tok(",");
                let name = if self.chance(50) { "name" } else { "\"name\"" };
                self.tok(name);
                self.tok(":");
                self.string();
            }
            _ => {
                self.tok("name");
                self.tok(":");
                self.string();
                self.tok(",");
                self.tok("type");
                self.tok(":");
                let t = self.ident();
                self.tok(&format!("\"{t}\""));
            }
        }
        if self.chance(15) {
            self.tok(",");
        }
        self.tok("}");
    }

    fn term(&mut self, depth: u32) {
        match self.below(if depth > 2 { 2 } else { 3 }) {
            0 if !self.handles.is_empty() => {
                let i = self.below(self.handles.len() as u64) as usize;
                let h = self.handles[i].clone();
                self.tok(&format!("?{h}"));
            }
            2 => self.proposition_pattern(depth + 1),
            _ => self.concept_pattern(),
        }
    }

    fn proposition_pattern(&mut self, depth: u32) {
        self.tok("(");
        if self.chance(30) {
            self.tok("id");
            self.tok(":");
            self.string();
        } else {
            self.term(depth);
            self.tok(",");
            let p = self.ident();
            self.tok(&format!("\"{p}\""));
            self.tok(",");
            self.term(depth);
        }
        self.tok(")");
    }

    fn metadata(&mut self) {
        if self.chance(30) {
            self.ws();
            self.tok("WITH");
            self.sep();
            self.out.push_str("METADATA");
            self.object(0);
        }
    }

    fn handle(&mut self) {
        if self.chance(50) {
            let h = self.ident();
            self.tok(&format!("?{h}"));
            self.handles.push(h);
        }
    }

    fn expect_version(&mut self) {
        if self.chance(15) {
            self.tok("EXPECT");
            self.sep();
            self.out.push_str("VERSION");
            self.sep();
            let n = self.below(20).to_string();
            self.out.push_str(&n);
        }
    }

    fn concept_block(&mut self) {
        self.tok("CONCEPT");
        self.handle();
        self.tok("{");
        self.concept_pattern();
        self.expect_version();
        let (mut attrs, mut props) = (false, false);
        for _ in 0..self.below(3) {
            if !attrs && self.chance(50) {
                attrs = true;
                self.tok("SET");
                self.sep();
                self.out.push_str("ATTRIBUTES");
                self.object(0);
            } else if !props {
                props = true;
                self.tok("SET");
                self.sep();
                self.out.push_str("PROPOSITIONS");
                self.tok("{");
                for _ in 0..self.below(4) {
                    self.tok("(");
                    let p = self.ident();
                    self.tok(&format!("\"{p}\""));
                    self.tok(",");
                    self.term(0);
                    self.tok(")");
                    self.metadata();
                    if self.chance(50) {
                        self.tok(",");
                    }
                }
                self.tok("}");
            }
        }
        self.tok("}");
        self.metadata();
    }

    fn proposition_block(&mut self) {
        self.tok("PROPOSITION");
        self.handle();
        self.tok("{");
        self.proposition_pattern(0);
        self.expect_version();
        if self.chance(50) {
            self.tok("SET");
            self.sep();
            self.out.push_str("ATTRIBUTES");
            self.object(0);
        }
        self.tok("}");
        self.metadata();
    }

    fn script(seed: u64) -> String {
        let mut g = Gen {
            state: seed | 1,
            out: String::new(),
            handles: Vec::new(),
        };
        for _ in 0..1 + g.below(3) {
            g.tok("UPSERT");
            g.tok("{");
            for _ in 0..g.below(4) {
                if g.chance(70) {
                    g.concept_block();
                } else {
                    g.proposition_block();
                }
            }
            g.tok("}");
            g.metadata();
            g.ws();
        }
        g.out
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random texts of the shapes the fast path knows: it takes them, and
    /// pest builds the same tree with the same spans.
    #[test]
    fn random_kml_parses_the_same_both_ways(seed in any::<u64>()) {
        let source = Gen::script(seed);
        differential::check(&source);
        // Generated handles may be used before they are defined or twice,
        // which validation reports; the fast path itself must still answer
        // unless the text breaks a rule of lowering.
        if let Ok(pest) = parse_pest_only(&source) {
            let fast = parse_fast_only(&source);
            prop_assert!(fast.is_some(), "the fast path gave up on:\n{source}");
            prop_assert_eq!(format!("{:?}", fast.expect("checked above")), format!("{pest:?}"));
        }
    }

    /// The same texts, damaged: cut short, a byte range removed, a token
    /// inserted. Whatever the fast path does, `parse` answers exactly as
    /// pest alone does, errors and positions included.
    #[test]
    fn damaged_kml_parses_the_same_both_ways(
        seed in any::<u64>(),
        cut in any::<prop::sample::Index>(),
        len in 0usize..6,
        insert in prop::sample::select(vec![
            "", "}", "{", "(", ")", ",", ":", "\"", "\\", "?", "?1x", "$", "1e999", "SET",
            "WITH", "METADATA", "//", "\n", "|", "{1,2}", ":p", "\"\\ud800\"", "01", "-",
            "type", "id", "ATTRIBUTES", "PROPOSITIONS", "FIND", "é",
        ]),
    ) {
        let source = Gen::script(seed);
        let mut at = cut.index(source.len() + 1);
        while !source.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = (at + len).min(source.len());
        while !source.is_char_boundary(end) {
            end -= 1;
        }
        let damaged = format!("{}{insert}{}", &source[..at], &source[end..]);
        differential::check(&damaged);
        let truncated = &source[..at];
        differential::check(truncated);
    }
}

#[test]
fn deep_values_give_up_to_pest_and_keep_its_error() {
    for depth in [255, 256, 257, 300] {
        let value = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        let source = format!(
            "UPSERT {{ CONCEPT {{ {{type: \"T\", name: \"n\"}} SET ATTRIBUTES {{ a: {value} }} }} }}"
        );
        differential::check(&source);
        let ok = parse(&source).is_ok();
        // The UPSERT body, the block, and the object open three levels.
        assert_eq!(ok, depth + 3 <= kip_lang::MAX_DEPTH, "depth {depth}");
        assert_eq!(parse_fast_only(&source).is_some(), ok, "depth {depth}");
    }
    let reference = parse_reference("UPSERT {").expect_err("unclosed");
    assert_eq!(
        format!("{:?}", parse("UPSERT {").expect_err("unclosed")),
        format!("{reference:?}")
    );
}
