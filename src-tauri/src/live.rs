//! Events that keep the UI live: committed writes by any process
//! (`kip://changes`) and the reports of files dropped onto the window
//! (`kip://dropped`).

use std::path::PathBuf;
use std::time::Duration;

use kip_api::{Api, ChangesRequest, ImportRequest};
use serde_json::{Value as Json, json};
use tauri::{AppHandle, Emitter as _};

/// How often the change log's sequence number is read (one small read
/// transaction); other processes' writes show up within this interval.
const POLL: Duration = Duration::from_millis(400);

/// Polls the change log and emits each batch of new entries.
pub fn forward_changes(app: AppHandle, api: Api) {
    std::thread::Builder::new()
        .name("kip-explorer-changes".into())
        .spawn(move || {
            let mut since = api.last_change_seq().unwrap_or(0);
            loop {
                std::thread::sleep(POLL);
                let Ok(current) = api.last_change_seq() else {
                    continue;
                };
                if current == since {
                    continue;
                }
                match api.changes(&ChangesRequest { since, limit: None }) {
                    Ok(r) => {
                        since = r.last_seq;
                        let _ = app.emit(
                            "kip://changes",
                            json!({"last_seq": r.last_seq, "changes": r.changes, "reset": r.reset}),
                        );
                    }
                    Err(e) => {
                        eprintln!("kip-explorer: reading the change log failed: {}", e.message)
                    }
                }
            }
        })
        .expect("spawn the change poller");
}

/// Imports dropped files (and the capsule files of dropped folders) on a
/// background thread, then emits their reports.
pub fn import_dropped(app: AppHandle, api: Api, paths: Vec<PathBuf>) {
    std::thread::spawn(move || {
        let mut files = Vec::new();
        for path in paths {
            if path.is_dir() {
                match kip_capsule::capsule_files(&path) {
                    Ok(found) => files.extend(found),
                    Err(e) => eprintln!("kip-explorer: cannot read {}: {e}", path.display()),
                }
            } else {
                files.push(path);
            }
        }
        let mut reports: Vec<Json> = Vec::new();
        for file in files {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let report = match std::fs::read_to_string(&file) {
                Ok(text) => api
                    .import(&ImportRequest {
                        file_name: name.clone(),
                        text,
                        dry_run: None,
                    })
                    .unwrap_or_else(|e| json!({"file": name, "status": "failed", "errors": [e]})),
                Err(e) => json!({
                    "file": name,
                    "status": "failed",
                    "errors": [{"code": "API_IO", "message": format!("cannot read {}: {e}", file.display()), "hint": "Drop a readable .kip or .yaml file."}],
                }),
            };
            reports.push(report);
        }
        let _ = app.emit("kip://dropped", reports);
    });
}
