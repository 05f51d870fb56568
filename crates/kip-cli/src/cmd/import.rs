//! `kip import PATH…`: capsules and bundles through
//! [`kip_api::Api::import_files`] (pipelined: the next file is parsed while
//! the current one is applied), each file whole or not at all.

use std::path::PathBuf;
use std::process::ExitCode;

use kip_capsule::{ImportOptions, Phase, Progress};

use crate::stdio::out;

/// Files at least this large print their progress on standard error.
const PROGRESS_MIN_BYTES: u64 = 1024 * 1024;

/// One JSON report per file on standard output, each error as a
/// `file:line:column` line on standard error; exit 1 if any file failed.
pub fn run(db: Option<PathBuf>, paths: &[PathBuf], owner: bool) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    let files = kip_api::capsule_files(paths).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    // Reports arrive in file order; progress names its file (files applied
    // together in one write report their progress before the first of
    // them is done).
    let current = std::cell::Cell::new(0usize);
    let large: Vec<bool> = files
        .iter()
        .map(|f| std::fs::metadata(f).is_ok_and(|m| m.len() >= PROGRESS_MIN_BYTES))
        .collect();
    let show = |p: Progress| {
        let i = p.file.unwrap_or(current.get());
        if !large.get(i).copied().unwrap_or(false) {
            return;
        }
        let file = files[i].display();
        if p.total == 0 && p.total_bytes > 0 {
            // A streamed capsule: parts done, bytes taken in.
            eprintln!(
                "kip import: {file}: {} part {}, {} of {} bytes",
                phase(p.phase),
                p.done,
                p.bytes,
                p.total_bytes
            );
        } else {
            eprintln!(
                "kip import: {file}: {} {}/{}",
                phase(p.phase),
                p.done,
                p.total
            );
        }
    };
    let options = ImportOptions {
        dry_run: false,
        progress: Some(&show),
        originator: None,
        owner,
    };
    let mut any_failed = false;
    let mut failure = None;
    api.import_files(&files, &options, |report| {
        current.set(current.get() + 1);
        any_failed |= !report.is_imported();
        for line in report.error_lines() {
            eprintln!("{line}");
        }
        match serde_json::to_string(&report) {
            Ok(json) => out(&format!("{json}\n")),
            Err(e) => failure = Some(e),
        }
    })?;
    if let Some(e) = failure {
        return Err(e.into());
    }
    Ok(if any_failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn phase(p: Phase) -> &'static str {
    match p {
        Phase::Parsing => "parsing",
        Phase::Validating => "validating",
        Phase::Applying => "applying",
    }
}
