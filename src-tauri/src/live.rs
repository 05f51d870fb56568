//! Events that keep the UI live: committed writes by any process
//! (`kip://changes`), the progress of files dropped onto the window
//! (`kip://import-progress`: the imports under way, `[]` when done) and
//! their reports (`kip://dropped`).

use std::path::PathBuf;
use std::time::Duration;

use kip_api::{Api, ApiError, ChangesRequest, ErrorCode, ImportProgress, KipCode};
use serde_json::{Value as Json, json};
use tauri::{AppHandle, Emitter as _};

/// How often the change log's sequence number is read (one small read
/// transaction); other processes' writes show up within this interval.
const POLL: Duration = Duration::from_millis(400);

/// Starts the host's chores (kip-api's): each batch of new change-log
/// entries is emitted as `kip://changes`; the scheduled backup runs when due.
pub fn start_chores(app: AppHandle, api: Api) -> std::io::Result<kip_api::Chores> {
    api.start_chores(
        POLL,
        move |api, since, _| match api.changes(&ChangesRequest { since, limit: None }) {
            Ok(r) => {
                let _ = app.emit(
                    "kip://changes",
                    json!({"last_seq": r.last_seq, "changes": r.changes, "reset": r.reset}),
                );
                r.last_seq
            }
            Err(e) => {
                crate::log(&format!("reading the change log failed: {}", e.message));
                since
            }
        },
        crate::log,
    )
}

/// Imports dropped files (and the capsule files of dropped folders) on a
/// background thread, then emits their reports.
pub fn import_dropped(app: AppHandle, api: Api, paths: Vec<PathBuf>) {
    std::thread::spawn(move || {
        // The importer reports a few times a second at most: each report
        // is forwarded as it comes.
        let progress = |name: &str, p: &kip_capsule::Progress| {
            let _ = app.emit(
                "kip://import-progress",
                json!([{"name": name, "progress": ImportProgress::from(p)}]),
            );
        };
        let reports = import_paths(&api, &paths, &progress);
        let _ = app.emit("kip://import-progress", json!([]));
        let _ = app.emit("kip://dropped", reports);
    });
}

/// One import report per dropped file, in order; a dropped folder stands
/// for its capsule files. The drop is imported as `kip import` imports:
/// [`Api::import_files`], pipelined, additive capsules grouped. A file that
/// cannot be read or parsed gets a failed report of its own (one bad file
/// never hides the others' reports); a dropped path that cannot be read at
/// all is one failed report. Each file's progress goes to `progress` with
/// the file's name.
pub fn import_paths(
    api: &Api,
    paths: &[PathBuf],
    progress: &dyn Fn(&str, &kip_capsule::Progress),
) -> Vec<Json> {
    let files = match kip_api::capsule_files(paths) {
        Ok(files) => files,
        Err(e) => {
            let name = paths.first().map(|p| name_of(p)).unwrap_or_default();
            return vec![failed_report(&name, &e)];
        }
    };
    let names: Vec<String> = files.iter().map(|f| name_of(f)).collect();
    let current = std::cell::Cell::new(0usize);
    let on_progress = |p: kip_capsule::Progress| {
        let i = p.file.unwrap_or(current.get());
        if let Some(name) = names.get(i) {
            progress(name, &p);
        }
    };
    let options = kip_capsule::ImportOptions {
        progress: Some(&on_progress),
        ..kip_capsule::ImportOptions::default()
    };
    let mut reports: Vec<Json> = Vec::new();
    let imported = api.import_files(&files, &options, |mut report| {
        // The window names a dropped file by its name.
        report
            .file
            .clone_from(&names[current.get().min(names.len() - 1)]);
        let path = files[current.get().min(files.len() - 1)].clone();
        current.set(current.get() + 1);
        let mut json = serde_json::to_value(&report).unwrap_or_else(|e| {
            let e = ApiError::new(
                ErrorCode::Kip(KipCode::InternalError),
                format!("the import report cannot be serialized: {e}"),
                "This is a bug in KIP Explorer; please report it.",
            );
            failed_report(&report.file, &e)
        });
        // The window may apply a refused file again as the owner, by path.
        json["path"] = json!(path);
        reports.push(json);
    });
    if let Err(e) = imported {
        return vec![failed_report(
            &names.first().cloned().unwrap_or_default(),
            &e,
        )];
    }
    reports
}

/// The report of a dropped file (or path) that could not be imported at all.
fn failed_report(name: &str, error: &ApiError) -> Json {
    json!({"file": name, "status": "failed", "errors": [error]})
}

/// A dropped file's name, as the window shows it.
fn name_of(path: &std::path::Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    //! What a drop onto the window imports. The OS drag-and-drop event
    //! itself cannot be synthesised over WebDriver; it hands these paths to
    //! [`import_paths`] unchanged (`main.rs`, `WindowEvent::DragDrop`).

    use super::*;

    #[test]
    fn a_drop_imports_good_files_reports_broken_ones_and_expands_folders() {
        let dir = tempfile::tempdir().expect("temp dir");
        let api = Api::open(&dir.path().join("nexus"), "test-drop").expect("nexus");
        let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../capsules/examples");
        let folder = dir.path().join("dropped-folder");
        std::fs::create_dir(&folder).expect("folder");
        std::fs::copy(
            examples.join("11_medical_data.kip"),
            folder.join("11_medical_data.kip"),
        )
        .expect("copy");
        let broken = dir.path().join("broken.kip");
        std::fs::write(
            &broken,
            "UPSERT {\n  CONCEPT ?x { {type: \"Drug\", name: \"X\"}\n",
        )
        .expect("write");
        let binary = dir.path().join("binary.kip");
        std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x81]).expect("write");

        let reports = import_paths(
            &api,
            &[
                examples.join("10_medical_schema.kip"),
                folder,
                broken,
                binary,
            ],
            &|_, _| {},
        );
        let status: Vec<(&str, &str)> = reports
            .iter()
            .map(|r| {
                (
                    r["file"].as_str().unwrap_or(""),
                    r["status"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            status,
            [
                ("10_medical_schema.kip", "imported"),
                ("11_medical_data.kip", "imported"),
                ("broken.kip", "failed"),
                ("binary.kip", "failed"),
            ],
            "{reports:#?}"
        );
        let error = &reports[2]["errors"][0];
        assert!(error["data"]["line"].as_u64().is_some(), "{error}");
        let found = api.execute(kip_api::ExecuteRequest {
            command: Some(r#"FIND(?d.name) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#.into()),
            ..Default::default()
        });
        assert_eq!(found["result"], json!(["Aspirin"]), "{found}");
    }
}
