//! `kip`: the KIP Explorer command line.
//!
//! Every subcommand is a thin adapter over the library crates; none holds KIP
//! logic. Exit codes: 0 success, 1 when the result carries a KIP error (or a
//! `--check` finds unformatted text), 2 on usage or I/O problems.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde_json::json;

#[derive(Debug, Parser)]
#[command(
    name = "kip",
    version,
    about = "KIP Explorer: the Cognitive Nexus on the command line"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Parse and validate KIP text; print {"ok": true, "commands": N} or the KIP error.
    Check {
        /// A file of KIP commands, or `-` (the default) for standard input.
        file: Option<PathBuf>,
    },
    /// Print KIP text in canonical form, keeping comments.
    Fmt {
        /// A file of KIP commands, or `-` (the default) for standard input.
        file: Option<PathBuf>,
        /// Print nothing; exit 1 if the text is not already canonical.
        #[arg(long)]
        check: bool,
        /// Rewrite the file in place instead of printing.
        #[arg(long, conflicts_with = "check")]
        write: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kip: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn read_input(file: Option<&PathBuf>) -> anyhow::Result<String> {
    match file {
        Some(path) if path.as_os_str() != "-" => std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display())),
        _ => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            Ok(text)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Cmd::Check { file } => {
            let source = read_input(file.as_ref())?;
            match kip_lang::parse(&source) {
                Ok(commands) => {
                    println!("{}", json!({"ok": true, "commands": commands.len()}));
                    Ok(ExitCode::SUCCESS)
                }
                Err(errors) => {
                    let error = errors.into_response_error();
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&json!({"error": error}))?
                    );
                    Ok(ExitCode::from(1))
                }
            }
        }
        Cmd::Fmt { file, check, write } => {
            let source = read_input(file.as_ref())?;
            let formatted = match kip_lang::format_source(&source) {
                Ok(f) => f,
                Err(errors) => {
                    let error = errors.into_response_error();
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&json!({"error": error}))?
                    );
                    return Ok(ExitCode::from(1));
                }
            };
            if check {
                if formatted == source {
                    return Ok(ExitCode::SUCCESS);
                }
                eprintln!("kip fmt: the text is not in canonical form");
                return Ok(ExitCode::from(1));
            }
            match (write, file) {
                (true, Some(path)) if path.as_os_str() != "-" => {
                    std::fs::write(&path, formatted)
                        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
                }
                _ => print!("{formatted}"),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
