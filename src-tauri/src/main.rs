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
mod prefs;
mod save;
mod watch;

use std::path::PathBuf;

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
    /// The preferences file (`kip_api::paths::prefs_file`), when the platform has a config folder.
    pub prefs: Option<PathBuf>,
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
    let prefs_file = kip_api::paths::prefs_file();
    let remembered = remembered(prefs_file.as_deref());
    let kip_db_set = std::env::var_os("KIP_DB").is_some_and(|v| !v.is_empty());
    let start = prefs::startup(&remembered, args.db, args.capsules, kip_db_set);
    let (db, capsules) = folders(start.db, start.capsules)?;
    let mut api = kip_api::Api::open(&db, ORIGIN)
        .map_err(|e| anyhow::anyhow!("cannot open the nexus at {}: {}", db.display(), e.message))?
        .with_originator(CURATOR);
    if let Some(file) = &prefs_file {
        api = api.with_prefs(file.clone());
    }
    let title = format!("KIP Explorer — {}", db.display());
    let opened = std::fs::canonicalize(&db).unwrap_or_else(|_| db.clone());
    prefs::remember(
        prefs_file.as_deref(),
        prefs::LAST_NEXUS,
        serde_json::json!(opened),
    );
    // The cognitive trace (BRIEF §7): the app acts as `curator`, and says
    // when it opens and closes the nexus (the session ends with the app).
    let session = std::sync::Mutex::new(Some(api.open_session(
        None,
        "The desktop app opened the nexus.",
        "The desktop app closed the nexus.",
        log,
    )));

    tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![
            commands::api_call,
            commands::set_capsule_folder,
            commands::save_file,
            commands::import_as_owner,
        ])
        .setup(move |app| {
            let handle = app.handle().clone();
            let host = watch::Host::new(handle.clone(), api.clone());
            app.manage(AppState {
                host: host.clone(),
                prefs: prefs_file.clone(),
            });
            let window =
                WebviewWindowBuilder::new(app, "main", WebviewUrl::App("index.html".into()))
                    .title(&title)
                    .inner_size(start.size.0, start.size.1)
                    .min_inner_size(prefs::MIN_SIZE.0, prefs::MIN_SIZE.1)
                    .build()?;
            follow_window(&window, host.clone(), prefs_file.clone());
            // Change notices and the scheduled backup, for as long as the app runs.
            app.manage(live::start_chores(handle.clone(), host.api())?);
            // Watching starts after the window exists, so the first pass's
            // events reach a UI that is already loading; the UI also asks
            // for the status when it starts.
            prefs::remember(
                prefs_file.as_deref(),
                prefs::CAPSULES,
                serde_json::json!(capsules),
            );
            let folder = capsules.clone();
            std::thread::spawn(move || {
                if let Err(e) = std::fs::create_dir_all(&folder) {
                    eprintln!("kip-explorer: cannot create {}: {e}", folder.display());
                }
                host.watch(&folder);
            });
            Ok(())
        })
        .build(tauri::generate_context!())
        .map_err(|e| anyhow::anyhow!("the window could not run: {e}"))?
        .run(move |_, event| {
            if let tauri::RunEvent::Exit = event {
                drop(session.lock().unwrap_or_else(|e| e.into_inner()).take());
            }
        });
    Ok(())
}

/// The preferences remembered in `file` (none when the platform has no
/// config folder; a corrupt file is reported and read as none).
fn remembered(file: Option<&std::path::Path>) -> serde_json::Map<String, serde_json::Value> {
    let Some(file) = file else {
        return serde_json::Map::new();
    };
    let (remembered, warning) = kip_api::prefs::load(file);
    if let Some(warning) = warning {
        eprintln!("kip-explorer: {warning}");
    }
    remembered
}

/// What the window's own events do: files dropped on it are imported;
/// its size is remembered (in logical pixels, as it opens next time).
fn follow_window(window: &tauri::WebviewWindow, host: watch::Host, prefs_file: Option<PathBuf>) {
    let handle = window.app_handle().clone();
    let size_window = window.clone();
    window.on_window_event(move |event| match event {
        WindowEvent::DragDrop(tauri::DragDropEvent::Drop { paths, .. }) => {
            live::import_dropped(handle.clone(), host.api(), paths.clone());
        }
        WindowEvent::Resized(size) => {
            let scale = size_window.scale_factor().unwrap_or(1.0);
            if size.width > 0 && size.height > 0 && !size_window.is_maximized().unwrap_or(false) {
                let logical = size.to_logical::<f64>(scale);
                prefs::remember(
                    prefs_file.as_deref(),
                    prefs::WINDOW,
                    prefs::size_value(logical.width, logical.height),
                );
            }
        }
        _ => {}
    });
}

/// Who the trace names for the app's requests.
const CURATOR: &str = "curator";

/// Where the app's background failures go (tracing never stops the app).
fn log(message: &str) {
    eprintln!("kip-explorer: {message}");
}
