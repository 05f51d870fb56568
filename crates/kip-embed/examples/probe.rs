//! `cargo run --release -p kip-embed --example probe -- QUERY PASSAGE…`:
//! prints the model's cosine similarity of each passage to the query and
//! the time per text (the measurement behind BENCHMARKS.md's model choice).
use kip_embed::{Embedder, TextKind, dot};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(Ok(model)) = Embedder::discover() else {
        eprintln!("no model: run scripts/setup-model.sh");
        std::process::exit(2);
    };
    let Some((query, passages)) = args.split_first() else {
        eprintln!("usage: probe QUERY PASSAGE…");
        std::process::exit(2);
    };
    let q = model.embed_one(query, TextKind::Query);
    println!("q[0..8] = {:?}", &q[..8]);
    let mut times: Vec<f64> = (0..11)
        .map(|_| {
            let start = Instant::now();
            model.embed_one(query, TextKind::Query);
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("query embedding p50 {:.1} ms", times[5]);
    let start = Instant::now();
    let refs: Vec<&str> = passages.iter().map(String::as_str).collect();
    let vs = model.embed(&refs, TextKind::Passage);
    let per = start.elapsed().as_secs_f64() * 1000.0 / refs.len().max(1) as f64;
    for (p, v) in refs.iter().zip(&vs) {
        println!("{:.4}  {p}", dot(&q, v));
    }
    println!("{per:.2} ms per passage");
}
