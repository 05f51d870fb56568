//! Micro-benchmark of parsing a link capsule: pest (the reference) against
//! the fast path for common KML shapes (what `kip_lang::parse` takes first).
//!
//!     cargo run --release -p kip-lang --example parse_bench [capsule.kip …]
//!
//! Without arguments it parses a 20,000-link capsule of the shape `kip bench`
//! writes (one `CONCEPT {…} SET PROPOSITIONS { ("p", {type, name}) }` per
//! link, half the names in CJK). Prints the median of 7 runs of each path.

use std::time::Instant;

fn generated(links: u64) -> String {
    const TYPES: [&str; 4] = ["Drug", "Symptom", "Gene", "Protein"];
    const CJK: [&str; 4] = ["药物", "症状", "基因", "蛋白"];
    let name = |t: usize, i: u64| {
        if i.is_multiple_of(2) {
            format!("{} {i}", TYPES[t])
        } else {
            format!("{}{i}号", CJK[t])
        }
    };
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut below = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut s = String::from("UPSERT {\n");
    for _ in 0..links {
        let (st, ot) = (below(4) as usize, below(4) as usize);
        let (a, b) = (below(50_000), below(50_000));
        s.push_str(&format!(
            "CONCEPT {{ {{type: \"{}\", name: \"{}\"}} SET PROPOSITIONS {{ (\"related_to\", {{type: \"{}\", name: \"{}\"}}) }} }}\n",
            TYPES[st],
            name(st, a),
            TYPES[ot],
            name(ot, b)
        ));
    }
    s.push('}');
    s
}

fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let texts: Vec<(String, String)> = if args.is_empty() {
        vec![("generated 20,000 links".into(), generated(20_000))]
    } else {
        args.iter()
            .map(|p| (p.clone(), std::fs::read_to_string(p).expect("read capsule")))
            .collect()
    };
    for (label, text) in &texts {
        let fast = kip_lang::parse(text).expect("parses");
        let pest = kip_lang::parse_reference(text).expect("parses");
        assert_eq!(format!("{fast:?}"), format!("{pest:?}"));
        assert!(
            kip_lang::parse_fast_only(text).is_some(),
            "not a fast shape"
        );
        let pest_ms = median_ms(7, || {
            std::hint::black_box(kip_lang::parse_reference(text).expect("parses"));
        });
        let fast_ms = median_ms(7, || {
            std::hint::black_box(kip_lang::parse(text).expect("parses"));
        });
        let fast_only_ms = median_ms(7, || {
            std::hint::black_box(kip_lang::parse_fast_only(text).expect("fast shape"));
        });
        println!(
            "{label}: {} bytes; pest + lowering + checks {pest_ms:.1} ms; fast path + checks {fast_ms:.1} ms ({:.1}×); fast path alone {fast_only_ms:.1} ms",
            text.len(),
            pest_ms / fast_ms
        );
    }
}
