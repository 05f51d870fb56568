//! Experiment behind SEARCH's language centring: recall@10 on
//! tests/data/recall with plain cosines and with per-language mean-centred
//! vectors, at strengths 0, 0.5 and 1. `V=passage-mean` centres queries on
//! the passages' means (what the engine does); `V=none` centres passages
//! only; unset, queries are centred on the queries' own means (an upper
//! bound that peeks at the query set). Per-query cosines go to stderr.
use kip_embed::{Embedder, TextKind, dot};

fn rows(p: &str) -> Vec<Vec<String>> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}
fn zh(s: &str) -> bool {
    s.chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count()
        * 3
        > s.chars().count()
}
fn norm(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter_mut().for_each(|x| *x /= n);
}
fn main() {
    let Some(Ok(m)) = Embedder::discover() else {
        return;
    };
    let d = "../../tests/data/recall/";
    let mut mem = rows(&format!("{d}memories_en.tsv"));
    mem.extend(rows(&format!("{d}memories_zh.tsv")));
    let qs = rows(&format!("{d}queries.tsv"));
    let texts: Vec<String> = mem.iter().map(|r| format!("{}. {}", r[1], r[2])).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let pv = m.embed(&refs, TextKind::Passage);
    let qrefs: Vec<&str> = qs.iter().map(|r| r[3].as_str()).collect();
    let qv = m.embed(&qrefs, TextKind::Query);
    let mean = |vs: &[Vec<f32>], pick: &dyn Fn(usize) -> bool| {
        let mut acc = vec![0.0f32; 384];
        let mut n = 0.0;
        for (i, v) in vs.iter().enumerate() {
            if pick(i) {
                acc.iter_mut().zip(v).for_each(|(a, b)| *a += b);
                n += 1.0;
            }
        }
        acc.iter_mut().for_each(|a| *a /= n);
        acc
    };
    let pzh = mean(&pv, &|i| zh(&texts[i]));
    let pen = mean(&pv, &|i| !zh(&texts[i]));
    let qzh = mean(&qv, &|i| zh(&qs[i][3]));
    let qen = mean(&qv, &|i| !zh(&qs[i][3]));
    let variant = std::env::var("V").unwrap_or_default();
    let (qzh, qen) = match variant.as_str() {
        "passage-mean" => (pzh.clone(), pen.clone()),
        "none" => (vec![0.0; 384], vec![0.0; 384]),
        _ => (qzh, qen),
    };
    for alpha in [0.0f32, 0.5, 1.0] {
        let c = |v: &[f32], mu: &[f32]| {
            let mut w: Vec<f32> = v.iter().zip(mu).map(|(a, b)| a - alpha * b).collect();
            norm(&mut w);
            w
        };
        let ps: Vec<Vec<f32>> = pv
            .iter()
            .enumerate()
            .map(|(i, v)| c(v, if zh(&texts[i]) { &pzh } else { &pen }))
            .collect();
        let mut per: std::collections::BTreeMap<String, (f32, f32)> = Default::default();
        for (i, q) in qs.iter().enumerate() {
            let qc = c(&qv[i], if zh(&q[3]) { &qzh } else { &qen });
            let mut order: Vec<usize> = (0..ps.len()).collect();
            order.sort_by(|&a, &b| dot(&qc, &ps[b]).total_cmp(&dot(&qc, &ps[a])));
            let rel: Vec<&str> = q[2].split(',').collect();
            let hit = order[..10]
                .iter()
                .filter(|&&j| rel.contains(&mem[j][0].as_str()))
                .count();
            if alpha == 1.0 {
                let best_rel = order
                    .iter()
                    .filter(|&&j| rel.contains(&mem[j][0].as_str()))
                    .map(|&j| dot(&qc, &ps[j]))
                    .fold(f32::MIN, f32::max);
                let best_irr = order
                    .iter()
                    .filter(|&&j| !rel.contains(&mem[j][0].as_str()))
                    .map(|&j| dot(&qc, &ps[j]))
                    .fold(f32::MIN, f32::max);
                let raw_rel = order
                    .iter()
                    .filter(|&&j| rel.contains(&mem[j][0].as_str()))
                    .map(|&j| dot(&qv[i], &pv[j]))
                    .fold(f32::MIN, f32::max);
                eprintln!(
                    "{} {} rel {best_rel:.3} irr {best_irr:.3} raw_rel {raw_rel:.3}",
                    q[0], q[1]
                );
            }
            let e = per.entry(q[1].clone()).or_default();
            e.0 += hit as f32 / rel.len() as f32;
            e.1 += 1.0;
        }
        let line: Vec<String> = per
            .iter()
            .map(|(k, (s, n))| format!("{k} {:.3}", s / n))
            .collect();
        println!("alpha {alpha}: recall@10 {}", line.join(", "));
    }
}
