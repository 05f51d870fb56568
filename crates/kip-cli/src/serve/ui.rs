//! Where `kip serve` takes the web UI from: a folder named with `--ui`
//! (development), else the UI embedded in the binary at build time
//! (`build.rs`, feature `web-ui`, the default), else — in a binary built
//! without it — `ui/dist` beside the workspace, if built.
//!
//! Embedded files are served from memory: `/` and any path that is not a
//! file (the UI routes in the browser) answer `index.html`; Vite's hashed
//! `assets/…` are cached for good, everything else is revalidated.

use std::path::PathBuf;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));
}

/// The web UI a server shows.
#[derive(Clone, Debug)]
pub enum Ui {
    /// Files from a folder on disk.
    Dir(PathBuf),
    /// The files built into this binary.
    Embedded,
    /// None: the API only.
    Missing,
}

impl Ui {
    /// `--ui DIR` if given, else the embedded UI, else `ui/dist` when built.
    pub fn choose(explicit: Option<PathBuf>) -> Ui {
        if let Some(dir) = explicit {
            return if dir.is_dir() {
                Ui::Dir(dir)
            } else {
                Ui::Missing
            };
        }
        if !embedded::ASSETS.is_empty() {
            return Ui::Embedded;
        }
        ui_dir().map_or(Ui::Missing, Ui::Dir)
    }

    /// How the startup log names it.
    pub fn describe(&self) -> String {
        match self {
            Ui::Dir(d) => format!(", web UI from {}", d.display()),
            Ui::Embedded => ", web UI built in".to_owned(),
            Ui::Missing => ", no web UI built".to_owned(),
        }
    }

    /// `app` with the UI as its fallback route.
    pub fn serve<S: Clone + Send + Sync + 'static>(&self, app: Router<S>) -> Router<S> {
        match self {
            Ui::Dir(dir) => app.fallback_service(
                tower_http::services::ServeDir::new(dir)
                    .fallback(tower_http::services::ServeFile::new(dir.join("index.html"))),
            ),
            Ui::Embedded => app.fallback(embedded_file),
            Ui::Missing => app.fallback(no_ui),
        }
    }
}

/// `ui/dist` in the current folder, or next to the workspace the binary was
/// built in (`target/<profile>/kip` → `../../ui/dist`).
fn ui_dir() -> Option<PathBuf> {
    let mut candidates = vec![PathBuf::from("ui/dist")];
    if let Ok(exe) = std::env::current_exe()
        && let Some(root) = exe
            .parent()
            .and_then(|p| p.parent())
            .and_then(|p| p.parent())
    {
        candidates.push(root.join("ui/dist"));
    }
    candidates
        .into_iter()
        .find(|d| d.join("index.html").is_file())
}

fn asset(path: &str) -> Option<&'static [u8]> {
    embedded::ASSETS
        .iter()
        .find(|(name, _)| *name == path)
        .map(|(_, bytes)| *bytes)
}

async fn embedded_file(request: Request) -> Response {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            [(header::ALLOW, "GET, HEAD")],
            "the web UI answers GET and HEAD only\n",
        )
            .into_response();
    }
    let path = request.uri().path().trim_start_matches('/');
    let (name, bytes) = match asset(path) {
        Some(bytes) if !path.is_empty() => (path, bytes),
        // The UI's own routes (and `/`) are the single page.
        _ => match asset("index.html") {
            Some(bytes) => ("index.html", bytes),
            None => return no_ui().await,
        },
    };
    let cache = if name.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut response = (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(name)),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
        ],
        bytes,
    )
        .into_response();
    if request.method() == Method::HEAD {
        *response.body_mut() = axum::body::Body::empty();
    }
    response
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "wasm" => "application/wasm",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

async fn no_ui() -> Response {
    (
        StatusCode::NOT_FOUND,
        "KIP Explorer: the web UI is not built (run `./scripts/ui.sh build`, or `npm ci --prefix ui && npm --prefix ui run build`). The API is at POST /api/kip, POST /kip and /api/<operation>.\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_follow_the_extension() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("assets/index-x.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(content_type("assets/a.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("font.bin"), "application/octet-stream");
    }

    /// With the `web-ui` feature the build embeds the UI, or fails.
    #[cfg(feature = "web-ui")]
    #[test]
    fn the_default_build_carries_the_ui() {
        let index = asset("index.html").expect("index.html is embedded");
        assert!(String::from_utf8_lossy(index).contains("<script"));
        assert!(
            embedded::ASSETS
                .iter()
                .any(|(n, _)| n.starts_with("assets/"))
        );
        assert!(matches!(Ui::choose(None), Ui::Embedded));
    }
}
