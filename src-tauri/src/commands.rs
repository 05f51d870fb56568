//! The Tauri commands the UI calls (`ui/src/transport/tauri.ts`): every
//! `kip-api` operation through one command, run on a blocking thread so the
//! window stays responsive while the engine works, and what only the
//! shell can do: watching another folder, saving an export as a file (a
//! webview has no downloads) and applying a capsule as the nexus's owner.

use kip_api::{ApiError, ErrorCode, KipCode};
use serde_json::Value as Json;
use tauri::State;

use crate::AppState;

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tauri::async_runtime::spawn_blocking(f).await.map_err(|e| {
        ApiError::new(
            ErrorCode::Kip(KipCode::InternalError),
            format!("the operation stopped unexpectedly: {e}"),
            "This is a bug in KIP Explorer; please report it with what you were doing.",
        )
    })?
}

/// Any `kip-api` operation by its wire name (`execute`, `validate`,
/// `neighbourhood`, `format`, `watch_status`, …), with its JSON body.
#[tauri::command]
pub async fn api_call(
    state: State<'_, AppState>,
    operation: String,
    body: Json,
) -> Result<Json, ApiError> {
    let api = state.host.api();
    blocking(move || api.call_named(&operation, body)).await
}

/// Watches another folder instead (created when missing); answers its status.
#[tauri::command]
pub async fn set_capsule_folder(
    state: State<'_, AppState>,
    folder: String,
) -> Result<Json, ApiError> {
    let dir = std::path::PathBuf::from(folder.trim());
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(ApiError::new(
            ErrorCode::Io,
            format!("cannot create {}: {e}", dir.display()),
            "Choose a folder you can write to.",
        ));
    }
    crate::prefs::remember(
        state.prefs.as_deref(),
        crate::prefs::CAPSULES,
        serde_json::json!(dir),
    );
    let host = state.host.clone();
    blocking(move || {
        host.watch(&dir);
        host.api().call_named("watch_status", Json::Null)
    })
    .await
}

/// What "apply as owner" sends: the text of a file chosen in the page, or
/// the path of a file dropped on the window (its report carried it).
#[derive(Debug, serde::Deserialize)]
pub struct OwnerImport {
    file_name: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    path: Option<std::path::PathBuf>,
    #[serde(default)]
    dry_run: bool,
}

/// Imports a capsule with the owner's authority over the protected scope
/// (BRIEF §3): first as a dry run, whose report lists the engine's diff,
/// then for real once the person at the window confirms. Only the desktop
/// shell offers this (the person who runs it owns the nexus); it is no
/// kip-api operation, so neither HTTP nor MCP can reach it.
#[tauri::command]
pub async fn import_as_owner(
    state: State<'_, AppState>,
    request: OwnerImport,
) -> Result<Json, ApiError> {
    let api = state.host.api();
    blocking(move || {
        let report = match (request.text, request.path) {
            (Some(text), _) => api.import_as_owner(&kip_api::ImportRequest {
                file_name: request.file_name,
                text,
                dry_run: Some(request.dry_run),
            })?,
            (None, Some(path)) => {
                let options = kip_capsule::ImportOptions {
                    dry_run: request.dry_run,
                    owner: true,
                    ..kip_capsule::ImportOptions::default()
                };
                let mut report = api.import_file(&path, &options)?;
                report.file = request.file_name;
                report
            }
            (None, None) => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    "apply as owner needs the file's text or its path",
                    "Choose the file again.",
                ));
            }
        };
        serde_json::to_value(report).map_err(|e| {
            ApiError::new(
                ErrorCode::Kip(KipCode::InternalError),
                format!("the import report cannot be serialized: {e}"),
                "This is a bug in KIP Explorer; please report it.",
            )
        })
    })
    .await
}

/// Saves an export where a browser would have downloaded it
/// ([`crate::save`]): the file's bytes are the raw request body, its name
/// the URI-encoded `x-kip-file-name` header. Answers the path written.
#[tauri::command]
pub async fn save_file(
    app: tauri::AppHandle,
    request: tauri::ipc::Request<'_>,
) -> Result<String, ApiError> {
    use tauri::Manager as _;
    let bad = |what: &str| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("save_file: {what}"),
            "The page sends the file as raw bytes with its name in x-kip-file-name.",
        )
    };
    let tauri::ipc::InvokeBody::Raw(bytes) = request.body() else {
        return Err(bad("the body is not raw bytes"));
    };
    let asked = request
        .headers()
        .get("x-kip-file-name")
        .and_then(|v| v.to_str().ok())
        .map(crate::save::percent_decode)
        .ok_or_else(|| bad("no file name"))?;
    let name = crate::save::file_name(&asked).ok_or_else(|| bad("no usable file name"))?;
    let dir = crate::save::download_dir(
        std::env::var_os("KIP_DOWNLOAD_DIR"),
        app.path().download_dir().ok(),
        app.path().home_dir().ok(),
    )
    .ok_or_else(|| {
        ApiError::new(
            ErrorCode::Io,
            "this platform has no download folder",
            "Set KIP_DOWNLOAD_DIR to the folder exports should go to.",
        )
    })?;
    let bytes = bytes.clone();
    blocking(move || {
        crate::save::save(&dir, &name, &bytes)
            .map(|p| p.display().to_string())
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::Io,
                    format!("cannot save {name} in {}: {e}", dir.display()),
                    "Choose a download folder you can write to (KIP_DOWNLOAD_DIR).",
                )
            })
    })
    .await
}
