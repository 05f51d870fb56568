//! The one bridge of the async hosts (`kip serve`, `kip mcp`) to the API's
//! blocking calls: the engine's calls are synchronous, and a write may wait
//! for another process's writer, so they run on tokio's blocking pool.

use kip_api::{Api, ApiError, ErrorCode, KipCode};

/// Runs `f` on the blocking pool; a call that panicked is an internal error.
pub async fn blocking<T: Send + 'static>(
    api: Api,
    f: impl FnOnce(&Api) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    off_runtime(api, f).await.and_then(|answer| answer)
}

/// Runs `f` on the blocking pool, whatever it answers (the resolver's
/// seed-shaped errors are not `ApiError`s); a call that panicked is an
/// internal error.
pub async fn off_runtime<T: Send + 'static>(
    api: Api,
    f: impl FnOnce(&Api) -> T + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(move || f(&api))
        .await
        .map_err(|e| {
            ApiError::new(
                ErrorCode::Kip(KipCode::InternalError),
                format!("the request failed: {e}"),
                "Retry; if it keeps failing, report it with the request that caused it.",
            )
        })
}
