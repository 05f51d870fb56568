//! `kip trace`: the cognitive trace on the command line (BRIEF §7). Lists
//! and exports print JSON Lines with the seed's field names; everything goes
//! through [`kip_api::Api`]'s trace operations.

use std::path::PathBuf;
use std::process::ExitCode;

use kip_api::{Api, Operation};
use serde_json::{Value as Json, json};

use crate::stdio::{out, print_error, read_input};

/// What `kip trace` does.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// List entries, newest first, as JSON Lines.
    List(Filters),
    /// One entry, pretty-printed.
    Show { id: String },
    /// Record a THINK or SAY entry (as --originator, default cli).
    Add {
        /// THINK or SAY.
        #[arg(long = "type", value_name = "TYPE")]
        kind: String,
        /// The entry's message (BRIEF §5's form).
        #[arg(
            long = "message",
            short = 'm',
            value_name = "M",
            conflicts_with = "text",
            required_unless_present = "text"
        )]
        message: Option<String>,
        /// The message, given without `--message` (the older form).
        #[arg(value_name = "MESSAGE")]
        text: Option<String>,
        /// A tag (repeatable), e.g. DecisionRationale.
        #[arg(long)]
        tag: Vec<String>,
        /// A flag (repeatable), e.g. Uncertain.
        #[arg(long)]
        flag: Vec<String>,
    },
    /// Revert the write an entry describes, as one new traced write.
    Revert {
        id: String,
        /// Revert even if later writes touched the same elements.
        #[arg(long)]
        force: bool,
        /// Revert as the nexus's owner: needed for a write that changed the protected scope (an owner's import, a Genesis upgrade).
        #[arg(long)]
        owner: bool,
    },
    /// Set or clear an entry's flags (the review state: Reviewed, Rejected, …).
    Flag {
        id: String,
        /// Flags to set (`kip trace flag T:12 Reviewed`), as `--set` does.
        flags: Vec<String>,
        /// A flag to set (repeatable).
        #[arg(long)]
        set: Vec<String>,
        /// A flag to clear (repeatable).
        #[arg(long)]
        clear: Vec<String>,
    },
    /// Every entry matching the filters, oldest first, as JSON Lines.
    Export {
        #[command(flatten)]
        filters: Filters,
        /// Write the JSON Lines to this file instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Recall heat: per element, how many agent reads returned it and by whom (JSON Lines, hottest first; a last line with the totals).
    Heat {
        /// ISO 8601: reads at or after.
        #[arg(long)]
        since: Option<String>,
        /// ISO 8601: reads at or before.
        #[arg(long)]
        until: Option<String>,
        /// Only this originator's reads.
        #[arg(long)]
        originator: Option<String>,
        /// At most this many elements.
        #[arg(long)]
        limit: Option<usize>,
    },
    /// Import an exported trace (JSON Lines): the whole file or nothing.
    Import {
        /// The file, or `-` for standard input.
        file: Option<PathBuf>,
    },
    /// Promote entries to one episodic memory: an Event concept linked
    /// (`involves`) to the concepts they touched, written as a traced KML write.
    Promote {
        /// The entries (`T:…`).
        #[arg(required = true)]
        ids: Vec<String>,
        /// The Event's name (default: "Trace session <start> by <originators>").
        #[arg(long)]
        name: Option<String>,
        /// The Event's event_class (default TraceSession).
        #[arg(long)]
        event_class: Option<String>,
        /// The Event's outcome.
        #[arg(long)]
        outcome: Option<String>,
    },
}

/// The filters of `list` and `export`.
#[derive(Debug, clap::Args)]
pub struct Filters {
    #[arg(long)]
    originator: Option<String>,
    /// TRACE, THINK, SAY or SPACE.
    #[arg(long = "type", value_name = "TYPE")]
    kind: Option<String>,
    #[arg(long)]
    tag: Option<String>,
    #[arg(long)]
    flag: Option<String>,
    /// ISO 8601: entries at or after.
    #[arg(long)]
    since: Option<String>,
    /// ISO 8601: entries at or before.
    #[arg(long)]
    until: Option<String>,
    /// Free text in the message, the command or the originator.
    #[arg(long)]
    text: Option<String>,
    /// Only entries that touched this element (C:… or P:…).
    #[arg(long)]
    element: Option<String>,
    /// Only agents' folded reads (each with the ids it returned, `data.returned`).
    #[arg(long)]
    reads: bool,
    /// At most this many entries (list: default 100).
    #[arg(long)]
    limit: Option<usize>,
}

impl Filters {
    fn body(&self) -> serde_json::Map<String, Json> {
        let mut b = serde_json::Map::new();
        let fields = [
            ("originator", &self.originator),
            ("type", &self.kind),
            ("tag", &self.tag),
            ("flag", &self.flag),
            ("since", &self.since),
            ("until", &self.until),
            ("text", &self.text),
            ("element", &self.element),
        ];
        for (k, v) in fields {
            if let Some(v) = v {
                b.insert(k.into(), json!(v));
            }
        }
        if self.reads {
            b.insert("reads".into(), json!(true));
        }
        b
    }
}

fn answer(api: &Api, op: Operation, body: Json) -> anyhow::Result<Result<Json, ExitCode>> {
    match api.call(op, body) {
        Ok(v) => Ok(Ok(v)),
        Err(e) => print_error(&e).map(Err),
    }
}

/// `kip trace heat`: the hottest elements as JSON Lines, then the totals.
fn heat(api: &Api, body: Json) -> anyhow::Result<Result<(), ExitCode>> {
    Ok(
        answer(api, Operation::ReadHeat, without_nulls(body))?.map(|mut heat| {
            let elements = heat
                .as_object_mut()
                .and_then(|h| h.remove("elements"))
                .and_then(|e| e.as_array().cloned())
                .unwrap_or_default();
            lines(&elements);
            lines(&[json!({"totals": heat})]);
        }),
    )
}

fn without_nulls(mut body: Json) -> Json {
    if let Some(o) = body.as_object_mut() {
        o.retain(|_, v| !v.is_null());
    }
    body
}

/// Entries as JSON Lines, one entry a line.
fn jsonl(entries: &[Json]) -> String {
    let mut text = String::new();
    for e in entries {
        text += &serde_json::to_string(e).unwrap_or_default();
        text.push('\n');
    }
    text
}

fn lines(entries: &[Json]) {
    out(&jsonl(entries));
}

pub fn run(db: Option<PathBuf>, action: Action) -> anyhow::Result<ExitCode> {
    let api = crate::db::open_api(db, "kip-cli")?;
    let result = match action {
        Action::List(f) => {
            let mut body = f.body();
            if let Some(l) = f.limit {
                body.insert("limit".into(), json!(l));
            }
            answer(&api, Operation::TraceList, Json::Object(body))?.map(|page| {
                lines(
                    page["entries"]
                        .as_array()
                        .map(Vec::as_slice)
                        .unwrap_or_default(),
                );
            })
        }
        Action::Export { filters, out } => export(&api, &filters, out.as_deref())?,
        Action::Show { id } => answer(&api, Operation::TraceEntry, json!({"id": id}))?
            .map(|e| out(&format!("{e:#}\n"))),
        Action::Add {
            kind,
            message,
            text,
            tag,
            flag,
        } => {
            let message = message.or(text).unwrap_or_default();
            let body = json!({"type": kind, "message": message, "tag": tag, "flags": flag});
            answer(&api, Operation::TraceAdd, body)?.map(|e| lines(&[e]))
        }
        Action::Revert { id, force, owner } => if owner {
            match api.revert_as_owner(&id, force) {
                Ok(r) => Ok(serde_json::to_value(r)?),
                Err(e) => print_error(&e).map(Err)?,
            }
        } else {
            answer(
                &api,
                Operation::TraceRevert,
                json!({"id": id, "force": force}),
            )?
        }
        .map(|r| out(&format!("{r:#}\n"))),
        Action::Flag {
            id,
            flags,
            mut set,
            clear,
        } => answer(&api, Operation::TraceFlag, {
            set.extend(flags);
            json!({"id": id, "set": set, "clear": clear})
        })?
        .map(|e| lines(&[e])),
        Action::Heat {
            since,
            until,
            originator,
            limit,
        } => heat(
            &api,
            json!({"since": since, "until": until, "originator": originator, "limit": limit}),
        )?,
        Action::Import { file } => {
            let jsonl = read_input(file.as_ref())?;
            answer(&api, Operation::TraceImport, json!({"jsonl": jsonl}))?
                .map(|r| out(&format!("{r}\n")))
        }
        Action::Promote {
            ids,
            name,
            event_class,
            outcome,
        } => {
            let request = kip_api::TracePromoteRequest {
                ids,
                name,
                event_class,
                outcome,
            };
            answer(
                &api,
                Operation::TracePromote,
                serde_json::to_value(request)?,
            )?
            .map(|r| out(&format!("{r:#}\n")))
        }
    };
    Ok(match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    })
}

/// Every matching entry, oldest first: pages newest first, then reversed;
/// to the file `to` when given (an I/O problem: exit 2), else to stdout.
fn export(
    api: &Api,
    f: &Filters,
    to: Option<&std::path::Path>,
) -> anyhow::Result<Result<(), ExitCode>> {
    let mut all = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let mut body = f.body();
        body.insert("limit".into(), json!(kip_api::MAX_TRACE_PAGE));
        if let Some(b) = &before {
            body.insert("before".into(), json!(b));
        }
        let page = match answer(api, Operation::TraceList, Json::Object(body))? {
            Ok(p) => p,
            Err(code) => return Ok(Err(code)),
        };
        all.extend(page["entries"].as_array().cloned().unwrap_or_default());
        match page["next_before"].as_str() {
            Some(b) => before = Some(b.to_owned()),
            None => break,
        }
        if f.limit.is_some_and(|l| all.len() >= l) {
            all.truncate(f.limit.unwrap_or(usize::MAX));
            break;
        }
    }
    all.reverse();
    match to {
        Some(path) => {
            std::fs::write(path, jsonl(&all))
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
        None => lines(&all),
    }
    Ok(Ok(()))
}
