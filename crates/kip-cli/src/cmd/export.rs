//! `kip export`: the nexus as a capsule or a bundle, through
//! [`kip_api::Api::export`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kip_capsule::{ExportFormat, ExportOptions};

use crate::stdio::{out, print_error};

/// The format of `kip export`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// A `.kip` capsule of UPSERT commands.
    Kip,
    /// A YAML knowledge bundle.
    Yaml,
}

/// Writes the export to `to` or standard output; an unknown type or
/// domain prints the error (exit 1).
pub fn run(
    db: Option<PathBuf>,
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
    match crate::db::open_api(db, "kip-cli")?.export(&options) {
        Ok(text) => {
            match to {
                Some(path) => std::fs::write(path, text)
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
                None => out(&text),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}
