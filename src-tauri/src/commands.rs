//! The Tauri commands the UI calls (`ui/src/transport/tauri.ts`): every
//! `kip-api` operation through one command, run on a blocking thread so the
//! window stays responsive while the engine works, and the one thing only
//! the shell can do, watching another folder.

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
