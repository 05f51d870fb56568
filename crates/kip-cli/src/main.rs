//! `kip`: the KIP Explorer command line.
//!
//! Every subcommand is a thin adapter over the library crates; none holds KIP
//! logic. Exit codes: 0 success, 1 when the result carries a KIP error (or a
//! `--check` finds unformatted text), 2 on usage or I/O problems.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

mod bench;
mod capsule_cmd;
mod mcp;
mod serve;
use serde_json::json;

#[derive(Debug, Parser)]
#[command(
    name = "kip",
    version,
    about = "KIP Explorer: the Cognitive Nexus on the command line"
)]
struct Cli {
    /// The nexus folder (default: $KIP_DB, else the platform data directory's kip-explorer/nexus).
    #[arg(long, global = true, value_name = "DIR")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Execute KIP against the nexus and print the KIP response.
    Exec {
        /// The command text, or `-` for standard input.
        command: Option<String>,
        /// Parameters for `:name` placeholders, as a JSON object.
        #[arg(long, value_name = "JSON")]
        params: Option<String>,
        /// Validate (KQL/META) or preview in an aborted transaction (KML).
        #[arg(long)]
        dry_run: bool,
        /// Also print how a FIND was evaluated and, if it found nothing, why.
        #[arg(long)]
        explain: bool,
        /// A full execute_kip arguments object from FILE, or `-` for standard input.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "params", "dry_run", "explain"])]
        request: Option<PathBuf>,
    },
    /// Build the generated benchmark graph (once per --db) and measure the BRIEF §6 workloads.
    Bench {
        /// Concepts in the generated graph.
        #[arg(long, default_value_t = 200_000)]
        concepts: u64,
        /// Propositions in the generated graph.
        #[arg(long, default_value_t = 1_000_000)]
        propositions: u64,
        /// Runs of each workload.
        #[arg(long, default_value_t = 200)]
        iterations: usize,
        /// Also write the JSON report to FILE.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Import `.kip` capsules and `.yaml`/`.yml` bundles (files or folders), each file whole or not at all; one JSON report per file.
    Import {
        /// Files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Print get_knowledge_schema: the JSON Schema of a YAML bundle for this nexus, and an example.
    Schema,
    /// Watch a folder: import what it holds, then every capsule written or moved into it; one JSON event per line.
    Watch {
        /// The folder.
        dir: PathBuf,
        /// How long the folder must be quiet before changes are taken up.
        #[arg(long, default_value_t = 500, value_name = "MS")]
        debounce_ms: u64,
        /// Exit once the files already there are taken up (1 if any failed).
        #[arg(long)]
        once: bool,
    },
    /// Write what the nexus holds (less what Genesis created) as a capsule or a bundle that re-imports into the same graph.
    Export {
        /// The output format.
        #[arg(long, value_enum, default_value = "kip")]
        format: capsule_cmd::Format,
        /// Only concepts of this type (repeatable); propositions follow their subject.
        #[arg(long = "type", value_name = "TYPE")]
        types: Vec<String>,
        /// Only concepts of this domain (repeatable).
        #[arg(long = "domain", value_name = "DOMAIN")]
        domains: Vec<String>,
        /// Write to FILE instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Serve the nexus over HTTP: POST /api/kip, POST /kip, /api/<operation>, /api/events (SSE) and the web UI.
    Serve {
        /// Address to listen on; anything but loopback requires a token (--token-file, KIP_SERVE_TOKEN or --token).
        #[arg(long, default_value = "127.0.0.1:4840", value_name = "IP:PORT")]
        addr: std::net::SocketAddr,
        /// Refuse every write (KML and imports) with KIP_3004.
        #[arg(long)]
        read_only: bool,
        #[command(flatten)]
        access: serve::Access,
        /// The web UI's built files (default: ui/dist, when it exists).
        #[arg(long, value_name = "DIR")]
        ui: Option<PathBuf>,
        /// Watch a capsule folder (created if missing), as the desktop app does: import what it holds, then every capsule written or moved into it; the watch_status operation reports each file.
        #[arg(long, value_name = "DIR")]
        capsules: Option<PathBuf>,
    },
    /// Serve the nexus to an AI agent as an MCP server over stdio.
    Mcp {
        /// Refuse every write (KML and imports) with KIP_3004.
        #[arg(long)]
        read_only: bool,
    },
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

/// Writes to stdout; a closed pipe (`kip exec … | head`) ends the program
/// quietly instead of panicking.
fn out(text: &str) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("kip: cannot write to standard output: {e}");
        std::process::exit(2);
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

/// The nexus folder: `--db`, else `$KIP_DB`, else the platform data directory.
fn db_dir(cli_db: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(dir) = cli_db {
        return Ok(dir);
    }
    if let Some(dir) = std::env::var_os("KIP_DB").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let base = dirs::data_dir()
        .ok_or_else(|| anyhow::anyhow!("no data directory on this platform; pass --db DIR"))?;
    Ok(base.join("kip-explorer").join("nexus"))
}

fn open_nexus(db: Option<PathBuf>) -> anyhow::Result<kip_nexus::Nexus> {
    let dir = db_dir(db)?;
    kip_nexus::Nexus::open(&dir)
        .map_err(|e| anyhow::anyhow!("cannot open the nexus at {}: {}", dir.display(), e.message))
}

fn origin() -> kip_nexus::Origin {
    kip_nexus::Origin {
        name: "kip-cli".into(),
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Cmd::Exec {
            command,
            params,
            dry_run,
            explain,
            request,
        } => {
            let request: kip_nexus::ExecuteKip = match request {
                Some(file) => {
                    let text = read_input(Some(&file))?;
                    serde_json::from_str(&text)
                        .map_err(|e| anyhow::anyhow!("invalid execute_kip request: {e}"))?
                }
                None => {
                    let text = match command.as_deref() {
                        None | Some("-") => read_input(None)?,
                        Some(t) => t.to_owned(),
                    };
                    let parameters = match params {
                        Some(p) => match serde_json::from_str::<serde_json::Value>(&p) {
                            Ok(serde_json::Value::Object(map)) => Some(map),
                            Ok(_) => anyhow::bail!("--params must be a JSON object"),
                            Err(e) => anyhow::bail!("--params is not valid JSON: {e}"),
                        },
                        None => None,
                    };
                    kip_nexus::ExecuteKip {
                        command: Some(text),
                        commands: None,
                        parameters,
                        dry_run: dry_run.then_some(true),
                        explain: explain.then_some(true),
                    }
                }
            };
            let nexus = open_nexus(cli.db)?;
            let response = nexus.execute_as(&request, &origin());
            out(&format!("{}\n", serde_json::to_string_pretty(&response)?));
            let failed = response.get("error").is_some()
                || response["result"].as_array().is_some_and(|items| {
                    request.commands.is_some() && items.iter().any(|r| r.get("error").is_some())
                });
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Cmd::Bench {
            concepts,
            propositions,
            iterations,
            json,
        } => {
            let dir = match cli.db {
                Some(d) => d,
                None => std::env::temp_dir().join(format!("kip-bench-{concepts}-{propositions}")),
            };
            eprintln!("bench: nexus at {}", dir.display());
            let report = bench::bench(&dir, concepts, propositions, iterations)?;
            out(&bench::table(&report));
            if let Some(file) = json {
                std::fs::write(&file, serde_json::to_string_pretty(&report)?)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Import { paths } => capsule_cmd::import(&open_nexus(cli.db)?, &paths, &origin()),
        Cmd::Schema => capsule_cmd::schema(&open_nexus(cli.db)?),
        Cmd::Watch {
            dir,
            debounce_ms,
            once,
        } => capsule_cmd::watch(
            open_nexus(cli.db)?,
            &dir,
            std::time::Duration::from_millis(debounce_ms),
            once,
        ),
        Cmd::Export {
            format,
            types,
            domains,
            out,
        } => capsule_cmd::export(&open_nexus(cli.db)?, format, types, domains, out.as_deref()),
        Cmd::Serve {
            addr,
            read_only,
            access,
            ui,
            capsules,
        } => {
            if read_only && capsules.is_some() {
                // A usage error (exit 2), before anything is opened or created.
                Cli::command()
                    .error(
                        clap::error::ErrorKind::ArgumentConflict,
                        "`--capsules` imports the folder's files into the nexus, which `--read-only` forbids; drop one of them",
                    )
                    .exit();
            }
            init_logging();
            let api = kip_api::Api::new(std::sync::Arc::new(open_nexus(cli.db)?), "kip-serve");
            let options = serve::Options {
                addr,
                read_only,
                access,
                ui,
                capsules,
            };
            serve::run(api, options)
        }
        Cmd::Mcp { read_only } => {
            init_logging();
            let api = kip_api::Api::new(std::sync::Arc::new(open_nexus(cli.db)?), "kip-mcp");
            mcp::run(api, read_only)
        }
        Cmd::Check { file } => {
            let source = read_input(file.as_ref())?;
            match kip_lang::parse(&source) {
                Ok(commands) => {
                    out(&format!(
                        "{}\n",
                        json!({"ok": true, "commands": commands.len()})
                    ));
                    Ok(ExitCode::SUCCESS)
                }
                Err(errors) => {
                    let error = errors.into_response_error();
                    out(&format!(
                        "{}\n",
                        serde_json::to_string_pretty(&json!({"error": error}))?
                    ));
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
                    out(&format!(
                        "{}\n",
                        serde_json::to_string_pretty(&json!({"error": error}))?
                    ));
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
                _ => out(&formatted),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Logs to standard error (standard output belongs to the MCP protocol
/// or to the one line `kip serve` prints).
fn init_logging() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(false)
        .init();
}
