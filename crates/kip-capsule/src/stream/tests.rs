//! Where a capsule is cut and what each part's text holds.

use std::collections::BTreeSet;

use kip_lang::ErrorCode;

use crate::report::ImportError;

use super::lex::{At, Raw, first_pass};
use super::split::{PartText, SplitError, Splitter};

fn pieces(text: &str, part_bytes: usize) -> Vec<Raw> {
    let (_, suffixes) = first_pass(text.as_bytes(), part_bytes).expect("first pass");
    let cuttable = suffixes.keys().copied().collect();
    let mut splitter = Splitter::new(text.as_bytes(), part_bytes, usize::MAX, cuttable);
    let mut out = Vec::new();
    while let Some(raw) = splitter.next_piece().expect("piece") {
        out.push(raw);
    }
    out
}

const TEXT: &str = "// UPSERT { FIND\nUPSERT {\n  CONCEPT ?a { {type: \"T\", name: \"}{\\\" UPSERT\"} }\n  CONCEPT ?b { {type: \"T\", name: \"b\"} SET PROPOSITIONS { (\"p\", ?a) } }\n}\nWITH METADATA { source: \"s\" }\nFIND(?x) WHERE { ?x {type: \"T\"} }\nUPSERT { CONCEPT { {type: \"T\", name: \"c\"} } }";

#[test]
fn the_pieces_are_the_file_cut_at_command_keywords_and_block_ends() {
    let all = pieces(TEXT, 1);
    let joined: Vec<u8> = all.iter().flat_map(|r| r.bytes.clone()).collect();
    assert_eq!(String::from_utf8(joined).expect("utf8"), TEXT);
    let starts: Vec<String> = all
        .iter()
        .map(|r| String::from_utf8_lossy(&r.bytes).chars().take(12).collect())
        .collect();
    assert_eq!(
        starts,
        [
            "// UPSERT { ",
            "UPSERT {\n  C",
            "\n  CONCEPT ?",
            "\n}\nWITH META",
            "FIND(?x) WHE",
            "UPSERT { CON",
            " }",
        ]
    );
    // Part size 1 makes every command keyword and every block end a
    // cut (the first pass finds the suffix of any body at least a
    // quarter of a part long): the first UPSERT is cut after each of
    // its blocks and re-opened, and so is the second.
    let closes: Vec<Option<usize>> = all.iter().map(|r| r.closes.map(|c| c.0)).collect();
    let reopens: Vec<Option<usize>> = all.iter().map(|r| r.reopens.map(|c| c.0)).collect();
    assert_eq!(closes, [None, Some(0), Some(0), None, None, Some(1), None]);
    assert_eq!(reopens, [None, None, Some(0), Some(0), None, None, Some(1)]);
    assert_eq!(
        all[2].start,
        At {
            line: 3,
            column: 49
        }
    );
}

#[test]
fn only_a_single_command_or_block_above_the_limit_is_refused() {
    let mut text = String::from("UPSERT {\n");
    for i in 0..100 {
        text.push_str(&format!(
            "  CONCEPT {{ {{type: \"T\", name: \"n{i:03}\"}} }}\n"
        ));
    }
    text.push_str("}\n");
    // Blocks of 42 bytes, parts of 100, nothing above 60: every cut
    // comes after the part size, and no block is too large.
    let (_, suffixes) = first_pass(text.as_bytes(), 100).expect("first pass");
    let cuttable = suffixes.keys().copied().collect();
    let mut splitter = Splitter::new(text.as_bytes(), 100, 60, cuttable);
    let mut n = 0;
    while let Some(raw) = splitter.next_piece().expect("no block is too large") {
        assert!(raw.bytes.len() < 100 + 60, "{}", raw.bytes.len());
        n += 1;
    }
    assert!(n > 30, "{n} pieces");
    // A block of 80 bytes is.
    text.insert_str(
        9,
        "  CONCEPT { {type: \"T\", name: \"a long, long, long, long, long, long name\"} }\n",
    );
    let mut splitter = Splitter::new(text.as_bytes(), 100, 60, BTreeSet::new());
    let err = loop {
        match splitter.next_piece() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("the long block was let through"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(err, SplitError::TooLarge(At { line: 2, column: 2 })),
        "{err:?}"
    );
}

#[test]
fn a_part_keeps_every_line_where_it_was_and_closes_with_the_suffix() {
    let (_, suffixes) = first_pass(TEXT.as_bytes(), 1).expect("first pass");
    assert_eq!(suffixes[&0].text, "\nWITH METADATA { source: \"s\" }\n");
    let mut all = pieces(TEXT, 1).into_iter().skip(1);
    let first = PartText::of(all.next().expect("piece"), &suffixes).expect("text");
    let second = PartText::of(all.next().expect("piece"), &suffixes).expect("text");
    assert!(
        first
            .text
            .ends_with("} }\n}\n \nWITH METADATA { source: \"s\" }\n"),
        "{}",
        first.text
    );
    assert!(second.text.starts_with("UPSERT {\n"), "{}", second.text);
    // Line 2 of the second part is line 4 of the file, at its column.
    let e = ImportError {
        line: Some(3),
        column: Some(60),
        ..ImportError::new(ErrorCode::InvalidSyntax, "x")
    };
    let placed = second.place(e);
    assert_eq!((placed.line, placed.column), (Some(4), Some(60)));
    assert_eq!(
        kip_lang::parse_part(&first.text, Some(&mut BTreeSet::new())).map(|c| c.len()),
        Ok(1)
    );
}
