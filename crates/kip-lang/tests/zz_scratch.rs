#[test]
fn scratch() {
    let Ok(paths) = std::env::var("KIP_SCRATCH") else { return };
    for path in paths.split_whitespace() {
        let part = std::fs::read_to_string(path).unwrap();
        println!("################ {path}");
        match kip_lang::parse(&part) {
            Ok(cmds) => {
                let f = kip_lang::format_source(&part).unwrap();
                if std::env::var("SHOW").is_ok() { println!("---- FORMATTED:\n{f}"); }
                match kip_lang::parse(&f) {
                    Ok(c2) => { if c2 != cmds { println!("!!!! AST DIFFERS\n{f}"); } }
                    Err(e) => println!("!!!! REPARSE FAILED {e:?}\n{f}"),
                }
                if let Ok(f2) = kip_lang::format_source(&f) { if f2 != f { println!("!!!! NOT IDEMPOTENT:\n{f}\n----\n{f2}"); } }
                let a: Vec<_> = kip_lang::scan_comments(&part).into_iter().map(|c| c.text).collect();
                let b: Vec<_> = kip_lang::scan_comments(&f).into_iter().map(|c| c.text).collect();
                if a != b { println!("!!!! COMMENTS DIFFER {a:?}\n{b:?}"); }
            }
            Err(e) => {
                for err in e.0 { println!("ERR {}", serde_json::to_string(&err).unwrap()); }
            }
        }
    }
}
