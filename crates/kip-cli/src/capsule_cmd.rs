//! `kip import`, `kip schema`, `kip watch` and `kip export`: thin adapters
//! over `kip-capsule` (the pipeline, the schema, the watcher and the export
//! all live there).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use kip_capsule::{
    ExportFormat, ExportOptions, ImportOptions, Phase, Progress, WatchEvent, WatchOptions, Watcher,
};
use kip_nexus::{Nexus, Origin};

use crate::out;

/// Files at least this large print their progress on standard error.
const PROGRESS_MIN_BYTES: u64 = 1024 * 1024;

/// The format of `kip export`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// A `.kip` capsule of UPSERT commands.
    Kip,
    /// A YAML knowledge bundle.
    Yaml,
}

/// The capsule files named: files as given, folders walked (hidden and
/// temporary files skipped).
fn files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        if meta.is_dir() {
            let found = kip_capsule::capsule_files(path)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

fn phase(p: Phase) -> &'static str {
    match p {
        Phase::Parsing => "parsing",
        Phase::Validating => "validating",
        Phase::Applying => "applying",
    }
}

/// `kip import PATH…`: one JSON report per file on standard output; exit 1
/// if any file failed.
pub fn import(nexus: &Nexus, paths: &[PathBuf], origin: &Origin) -> anyhow::Result<ExitCode> {
    let mut any_failed = false;
    for file in files(paths)? {
        let large = std::fs::metadata(&file).is_ok_and(|m| m.len() >= PROGRESS_MIN_BYTES);
        let name = file.display().to_string();
        let show = |p: Progress| {
            if large {
                eprintln!(
                    "kip import: {name}: {} {}/{}",
                    phase(p.phase),
                    p.done,
                    p.total
                );
            }
        };
        let options = ImportOptions {
            dry_run: false,
            progress: Some(&show),
        };
        let report = kip_capsule::import_path_with(nexus, &file, origin, &options);
        any_failed |= !report.is_imported();
        for line in report.error_lines() {
            eprintln!("{line}");
        }
        out(&format!("{}\n", serde_json::to_string(&report)?));
    }
    Ok(if any_failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `kip schema`: `get_knowledge_schema` as JSON.
pub fn schema(nexus: &Nexus) -> anyhow::Result<ExitCode> {
    match kip_capsule::knowledge_schema(nexus) {
        Ok(s) => {
            out(&format!("{}\n", serde_json::to_string_pretty(&s)?));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&serde_json::json!({"error": e}))?
            ));
            Ok(ExitCode::from(1))
        }
    }
}

/// `kip watch DIR`: one JSON event per line until interrupted (or, with
/// `once`, until the files already there are taken up; then exit 1 if any
/// failed).
pub fn watch(nexus: Nexus, dir: &Path, debounce: Duration, once: bool) -> anyhow::Result<ExitCode> {
    let options = WatchOptions {
        debounce,
        origin: Origin {
            name: "kip-watch".into(),
        },
        ..WatchOptions::default()
    };
    let (watcher, events) = Watcher::with_channel(Arc::new(nexus), dir, options)?;
    eprintln!("kip watch: watching {}", watcher.dir().display());
    let mut failed = false;
    for event in events {
        if let WatchEvent::Failed { report, .. } = &event {
            failed = true;
            for line in report.error_lines() {
                eprintln!("{line}");
            }
        }
        out(&format!("{}\n", event.to_json()));
        if once && matches!(event, WatchEvent::Ready { .. }) {
            watcher.stop();
            return Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            });
        }
    }
    anyhow::bail!("the watcher stopped unexpectedly")
}

/// `kip export`: the nexus as a capsule or a bundle, to FILE or standard
/// output.
pub fn export(
    nexus: &Nexus,
    format: Format,
    types: Vec<String>,
    domains: Vec<String>,
    to: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let options = ExportOptions {
        format: match format {
            Format::Kip => ExportFormat::Kip,
            Format::Yaml => ExportFormat::Yaml,
        },
        types,
        domains,
    };
    match kip_capsule::export(nexus, &options) {
        Ok(text) => {
            match to {
                Some(path) => std::fs::write(path, text)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
                None => out(&text),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&serde_json::json!({"error": e}))?
            ));
            Ok(ExitCode::from(1))
        }
    }
}
