//! `kip-explorer`: the desktop shell of KIP Explorer.
//!
//! It opens a nexus (the default one, or `--db DIR`), watches a capsule
//! folder through `kip-capsule`'s [`kip_capsule::Watcher`], imports files
//! dropped onto the window, and shows the web UI of `ui/` in a Tauri
//! window. The UI reaches the nexus through the commands of [`commands`],
//! each a thin adapter over [`kip_api::Api`]; it learns about writes (by
//! this or any other process) and about the watched folder through events.
//!
//! This crate holds no KIP logic: parsing, execution, import and
//! formatting all live in the library crates.

// No console window next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod live;
mod watch;

use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use tauri::{Manager as _, WebviewUrl, WebviewWindowBuilder, WindowEvent};

#[derive(Debug, Parser)]
#[command(
    name = "kip-explorer",
    version,
    about = "KIP Explorer: the desktop app"
)]
struct Args {
    /// The nexus folder (default: $KIP_DB, else the platform data directory's kip-explorer/nexus).
    #[arg(long, value_name = "DIR")]
    db: Option<PathBuf>,
    /// The capsule folder to watch (default: the platform data directory's kip-explorer/capsules).
    #[arg(long, value_name = "DIR")]
    capsules: Option<PathBuf>,
}

/// What every command shares: the API over the open nexus, with the watcher.
#[derive(Debug)]
pub struct AppState {
    pub host: watch::Host,
}

/// The nexus and capsule folders: the arguments, else `kip`'s defaults
/// (`kip_api::paths`), so both open the same nexus.
fn folders(db: Option<PathBuf>, capsules: Option<PathBuf>) -> anyhow::Result<(PathBuf, PathBuf)> {
    let missing =
        || anyhow::anyhow!("no data directory on this platform; pass --db and --capsules");
    Ok((
        kip_api::paths::nexus_dir(db).ok_or_else(missing)?,
        kip_api::paths::capsules_dir(capsules).ok_or_else(missing)?,
    ))
}

/// Who the shell writes as (the watcher's imports: `kip-explorer/watch`).
const ORIGIN: &str = "kip-explorer";

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (db, capsules) = folders(args.db, args.capsules)?;
    let nexus = Arc::new(kip_nexus::Nexus::open(&db).map_err(|e| {
        anyhow::anyhow!("cannot open the nexus at {}: {}", db.display(), e.message)
    })?);
    let title = format!("KIP Explorer — {}", db.display());

    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![
            commands::api_call,
            commands::set_capsule_folder,
        ])
        .setup(move |app| {
            let handle = app.handle().clone();
            let host = watch::Host::new(handle.clone(), kip_api::Api::new(nexus.clone(), ORIGIN));
            app.manage(AppState { host: host.clone() });
            let window =
                WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
                    .title(&title)
                    .inner_size(1440.0, 900.0)
                    .min_inner_size(880.0, 560.0)
                    .build()?;
            let drop_host = host.clone();
            let drop_handle = handle.clone();
            window.on_window_event(move |event| {
                if let WindowEvent::DragDrop(tauri::DragDropEvent::Drop { paths, .. }) = event {
                    live::import_dropped(drop_handle.clone(), drop_host.api(), paths.clone());
                }
            });
            live::forward_changes(handle.clone(), host.api());
            live::run_scheduled_backups(host.api());
            // Watching starts after the window exists, so the first pass's
            // events reach a UI that is already loading; the UI also asks
            // for the status when it starts.
            let folder = capsules.clone();
            std::thread::spawn(move || {
                if let Err(e) = std::fs::create_dir_all(&folder) {
                    eprintln!("kip-explorer: cannot create {}: {e}", folder.display());
                }
                host.watch(&folder);
            });
            Ok(())
        })
        .run(tauri::generate_context!())
        .map_err(|e| anyhow::anyhow!("the window could not run: {e}"))
}
