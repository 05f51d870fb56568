//! `kip`: the KIP Explorer command line.
//!
//! This file holds the arguments (clap) and the dispatch to one module per
//! subcommand ([`cmd`]); `kip serve` and `kip mcp` hand an API to [`serve`]
//! and [`mcp`]. Every subcommand is a thin adapter over the library crates;
//! none holds KIP logic. Exit codes: 0 success, 1 when the result carries a
//! KIP error (or a `--check` finds unformatted text), 2 on usage or I/O
//! problems.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

mod alloc;
mod bench;
mod cmd;
mod db;
mod mcp;
mod runtime;
mod serve;
mod stdio;

// `serve.rs` prints its one line through `crate::out`.
use stdio::out;

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
    /// Who the cognitive trace names as acting (default: cli, http, the MCP client's name, …).
    #[arg(long, global = true, value_name = "NAME")]
    originator: Option<String>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Execute KIP against the nexus and print the KIP response.
    Exec(cmd::exec::Args),
    /// The cognitive trace: who changed the nexus, when and why; review and revert.
    Trace {
        #[command(subcommand)]
        action: cmd::trace::Action,
    },
    /// Build the generated benchmark graph (once per --db) and measure the import, the store's size, its opening and the BRIEF §6 workloads; --scale: at several sizes.
    Bench(cmd::bench::Args),
    /// Import `.kip` capsules and `.yaml`/`.yml` bundles (files or folders), each file whole or not at all; one JSON report per file.
    Import {
        /// Files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Apply as the nexus's owner: the protected scope (the meta-types, $self's and $system's id and core_directives) may change, e.g. an official Genesis refresh or a persona file. Traced with the tag OwnerAuthority, revertible like any write; no agent-facing face (MCP, HTTP) can do this.
        #[arg(long)]
        owner: bool,
    },
    /// Create a nexus at --db (Genesis applied; an existing one is kept) and install a profile: `--profile memory`, KIP v1.0-RC11's cognitive memory profile (Preference, Insight, Commitment, SleepTask, Experience, ExperienceStep, Skill and their predicates).
    Init {
        /// A profile to install (as any client's import; again changes nothing).
        #[arg(long, value_parser = ["memory"])]
        profile: Option<String>,
    },
    /// The memory's health as JSON: counts per type, predicate and domain; orphans, expired, fading, weakly supported, unconsolidated episodes and unreviewed agent writes, each with its first elements.
    Health,
    /// Duplicate candidates (concept pairs of one type that may be one), as JSON Lines best first with their reasons; `kip duplicates dismiss ID ID` remembers a pair is not the same.
    Duplicates(cmd::queues::Args),
    /// Decay triage: `kip triage [expired|fading|untouched] [--below X] [--days N] [--limit N]` lists memories as JSON; `kip triage pin|renew|archive|delete ID… [--all-of LIST] [--dry-run]` acts on them as one traced, revertible write.
    Triage(cmd::triage::Args),
    /// Contradictions (a subject with two live objects of a functional predicate; an attribute value one source wrote over another's) as a JSON array, each side with its provenance; `kip contradictions resolve --keep ID --retire ID` keeps one and marks the other superseded.
    Contradictions(cmd::contradictions::Args),
    /// What changed between two times (ISO 8601 or trace entries T:n), rebuilt from the trace: JSON `added`, `changed`, `removed`, each element with `before` and `after`.
    Diff(cmd::queues::DiffArgs),
    /// Search concepts by name and by meaning (SEARCH CONCEPT … MODE): `kip search "blood pressure medicine" --mode semantic`.
    Search(cmd::search::Args),
    /// Print get_knowledge_schema: the JSON Schema of a YAML bundle for this nexus, and an example; with --map, the memory's shape instead: types with their counts, links counted by (subject type, predicate, object type), and the best-connected concepts.
    Schema {
        /// The schema map (JSON) instead of the bundle schema.
        #[arg(long)]
        map: bool,
        /// With --map: how many best-connected concepts (at most 500).
        #[arg(long, value_name = "N", requires = "map")]
        hubs: Option<u32>,
    },
    /// What would the agent recall for TEXT? The SEARCH an agent would run, each result with its score's parts (keyword, semantic, fused) and its one-hop context, as JSON; `--pin ID` / `--demote ID` act on a result as a traced, revertible write.
    Recall(cmd::recall::Args),
    /// Compute logic properties (metrics, operators) of a concept type for some of its instances; parameters from --params, else the LLM of KIP_LLM_URL, else a MISSING_INPUT_PARAMS answer listing them.
    Resolve(cmd::resolve::Args),
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
        format: cmd::export::Format,
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
        /// Serve the web UI from this folder instead of the one built into kip (development).
        #[arg(long, value_name = "DIR")]
        ui: Option<PathBuf>,
        /// Watch a capsule folder (created if missing), as the desktop app does: import what it holds, then every capsule written or moved into it; the watch_status operation reports each file.
        #[arg(long, value_name = "DIR")]
        capsules: Option<PathBuf>,
        /// Refuse request bodies larger than this (413, KIP_4002).
        #[arg(long, default_value_t = serve::DEFAULT_MAX_BODY_MIB, value_name = "MIB")]
        max_body_mib: usize,
    },
    /// Serve the nexus to an AI agent as an MCP server over stdio.
    Mcp {
        /// Refuse every write (KML and imports) with KIP_3004.
        #[arg(long)]
        read_only: bool,
    },
    /// Verify the store's invariants (indexes and records, counters, text postings, change-log order); print the JSON report; exit 1 on a violation.
    CheckStore {
        /// Instead of checking, print where the store's bytes go: per database its entries, key and value bytes, and LMDB pages.
        #[arg(long)]
        sizes: bool,
        /// Check in this process instead of a child (the child of the crash shield).
        #[arg(long = "unshielded", hide = true)]
        unshielded: bool,
    },
    /// Write a consistent, compacted copy of the nexus to DEST/data.mdb while other processes keep writing.
    Backup {
        /// A new or empty folder.
        dest: PathBuf,
        /// Copy in this process instead of a child (the child of the crash shield).
        #[arg(long = "unshielded", hide = true)]
        unshielded: bool,
    },
    /// Replace the nexus with a backup (checked first); refused while any process has the nexus open.
    Restore {
        /// A backup folder (holding data.mdb) or the data.mdb file itself.
        src: PathBuf,
        /// Replace an existing nexus (its data file is kept as data.mdb.before-restore).
        #[arg(long)]
        force: bool,
    },
    /// Rewrite the nexus without the free pages LMDB keeps for reuse (checked before it replaces the file); refused while any process has the nexus open.
    Compact,
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
    alloc::configure(matches!(
        cli.command,
        Cmd::Serve { .. } | Cmd::Mcp { .. } | Cmd::Watch { .. }
    ));
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kip: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let db = cli.db;
    db::set_originator(cli.originator);
    match cli.command {
        Cmd::Trace { action } => cmd::trace::run(db, action),
        Cmd::Exec(args) => cmd::exec::run(db, args),
        Cmd::Bench(args) => cmd::bench::run(db, args),
        Cmd::Import { paths, owner } => cmd::import::run(db, &paths, owner),
        Cmd::Init { profile } => cmd::init::run(db, profile),
        Cmd::Duplicates(args) => cmd::queues::run(db, args),
        Cmd::Contradictions(args) => cmd::contradictions::run(db, args),
        Cmd::Health => cmd::queues::health(db),
        Cmd::Schema { map, hubs } => match map {
            true => cmd::schema::map(db, hubs),
            false => cmd::schema::run(db),
        },
        Cmd::Triage(args) => cmd::triage::run(db, args),
        Cmd::Diff(args) => cmd::queues::diff(db, args),
        Cmd::Search(args) => cmd::search::run(db, args),
        Cmd::Recall(args) => cmd::recall::run(db, args),
        Cmd::Resolve(args) => cmd::resolve::run(db, args),
        Cmd::Watch {
            dir,
            debounce_ms,
            once,
        } => cmd::watch::run(
            db,
            &dir,
            std::time::Duration::from_millis(debounce_ms),
            once,
        ),
        Cmd::Export {
            format,
            types,
            domains,
            out,
        } => cmd::export::run(db, format, types, domains, out.as_deref()),
        Cmd::Serve {
            addr,
            read_only,
            access,
            ui,
            capsules,
            max_body_mib,
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
            let options = serve::Options {
                addr,
                read_only,
                access,
                ui,
                capsules,
                max_body: max_body_mib.saturating_mul(1 << 20),
            };
            serve::run(db::open_api(db, "kip-serve")?, options)
        }
        Cmd::Mcp { read_only } => {
            init_logging();
            mcp::run(db::open_api(db, "kip-mcp")?, read_only)
        }
        Cmd::Check { file } => cmd::check::run(file),
        Cmd::CheckStore { sizes: true, .. } => cmd::store::sizes(db),
        Cmd::CheckStore { unshielded, .. } => cmd::store::check(db, unshielded),
        Cmd::Backup { dest, unshielded } => cmd::store::backup(db, &dest, unshielded),
        Cmd::Restore { src, force } => cmd::store::restore(db, &src, force),
        Cmd::Compact => cmd::store::compact(db),
        Cmd::Fmt { file, check, write } => cmd::fmt::run(file, check, write),
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
