//! The Tauri commands the UI calls (`ui/src/transport/tauri.ts`). Each one
//! adapts a `kip-api` operation (or the formatter of `kip-lang`) and runs it
//! on a blocking thread, so the window stays responsive while the engine
//! works.

use kip_api::{ApiError, ErrorCode};
use serde_json::Value as Json;
use tauri::State;

use crate::AppState;
use crate::watch::WatchStatus;

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tauri::async_runtime::spawn_blocking(f).await.map_err(|e| {
        ApiError::new(
            ErrorCode::InternalError,
            format!("the operation stopped unexpectedly: {e}"),
            "This is a bug in KIP Explorer; please report it with what you were doing.",
        )
    })?
}

/// Any `kip-api` operation by its wire name, with its JSON body.
#[tauri::command]
pub async fn api_call(
    state: State<'_, AppState>,
    operation: String,
    body: Json,
) -> Result<Json, ApiError> {
    let api = state.api.clone();
    blocking(move || api.call_named(&operation, body)).await
}

/// Canonical KIP text (comments kept), or the first syntax error.
#[tauri::command]
pub async fn format_kip(text: String) -> Result<String, ApiError> {
    blocking(move || {
        kip_lang::format_source(&text).map_err(|e| ApiError::from(e.into_response_error()))
    })
    .await
}

/// The watched folder and the status of each of its files.
#[tauri::command]
pub fn watch_status(state: State<'_, AppState>) -> WatchStatus {
    state.watch.status()
}

/// Watches another folder instead (created when missing).
#[tauri::command]
pub async fn set_capsule_folder(
    state: State<'_, AppState>,
    folder: String,
) -> Result<WatchStatus, ApiError> {
    let dir = std::path::PathBuf::from(folder.trim());
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(ApiError::new(
            ErrorCode::Io,
            format!("cannot create {}: {e}", dir.display()),
            "Choose a folder you can write to.",
        ));
    }
    let watch = state.watch.clone();
    let nexus = state.nexus.clone();
    blocking(move || {
        watch.start(nexus, &dir);
        Ok(watch.status())
    })
    .await
}
