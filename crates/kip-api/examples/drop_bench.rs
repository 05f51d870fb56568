//! Not committed: times a desktop drop of a folder, the old way (one
//! import_file per file) against the new one (import_files, pipelined).
use std::path::PathBuf;
fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().expect("old|new");
    let db = PathBuf::from(args.next().expect("db"));
    let folder = PathBuf::from(args.next().expect("folder"));
    let api = kip_api::Api::open(&db, "drop-bench").expect("open");
    let files = kip_api::capsule_files(&[folder]).expect("files");
    let options = kip_capsule::ImportOptions::default();
    let started = std::time::Instant::now();
    let mut failed = 0;
    if mode == "old" {
        for f in &files {
            let r = api.import_file(f, &options).expect("import");
            if !r.is_imported() {
                failed += 1;
            }
        }
    } else {
        api.import_files(&files, &options, |r| {
            if !r.is_imported() {
                failed += 1;
            }
        })
        .expect("import");
    }
    eprintln!(
        "{mode}: {} files, {failed} failed, {:.2} s",
        files.len(),
        started.elapsed().as_secs_f64()
    );
    assert_eq!(failed, 0);
}
