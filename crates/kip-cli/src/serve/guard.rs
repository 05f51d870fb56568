//! Who may talk to `kip serve`: the checks every request passes before any
//! route (API, event stream or web UI file) sees it, so that no web page the
//! curator happens to visit can read or write the nexus through their
//! browser. The MCP specification asks the same of local HTTP servers.
//!
//! - **Host** (DNS rebinding: a page on `evil.example` whose name is made to
//!   resolve to 127.0.0.1 reaches the server as "same origin"): the `Host`
//!   header must be `localhost`, a loopback literal (127.0.0.0/8, `[::1]`) or
//!   the bound address, each with the bound port, or a name given with
//!   `--allow-host` (on any port, so a reverse proxy in front works). Bound
//!   to an unspecified address (0.0.0.0, `::`), every IP literal with the
//!   bound port is accepted: a literal cannot be rebound, a name can.
//!   Refused with 421 Misdirected Request.
//! - **Origin** (a cross-origin `fetch`, form or `EventSource`): when the
//!   header is present it must be the page's own origin — the scheme and the
//!   same host and port the request is addressed to (`Host`) — or one given
//!   with `--allow-origin`. Requests without it (curl, agents, scripts) pass:
//!   browsers send it on every cross-origin request and on every `POST`.
//!   Refused with 403.
//! - **Content-Type**: a request with a body (anything but `GET`, `HEAD`,
//!   `OPTIONS`) must say `application/json`, so the "simple" requests a page
//!   may send anywhere without asking first (`text/plain`, forms,
//!   multipart) are refused with 415 even when no `Origin` came with them.
//! - **CORS preflights** are answered only for `--allow-origin` origins, and
//!   then for that origin alone; every other preflight gets 403 without any
//!   `Access-Control-Allow-*` header.
//!
//! Every refusal is a KIP-style error body (`{"error": {code, message,
//! hint}}`) with `API_UNAUTHORIZED` (415: `API_BAD_REQUEST`). This module
//! does not authenticate: the bearer token is checked after it, on the API
//! routes (`serve.rs`'s `authorize`).

use std::net::IpAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use kip_api::{ApiError, ErrorCode};

/// The accepted hosts and origins of one running server.
#[derive(Debug)]
pub struct Guard {
    /// The port the server listens on (the real one, when bound to port 0).
    port: u16,
    /// The address it is bound to; unspecified means "every interface".
    bound: IpAddr,
    /// `--allow-host` names, lowercase.
    hosts: Vec<String>,
    /// `--allow-origin` origins, normalized by [`Origin::parse`].
    origins: Vec<String>,
}

/// The `--allow-host` and `--allow-origin` values, checked before the server
/// binds (so a typo is a usage error, not a server that refuses everyone).
#[derive(Debug, Default)]
pub struct Allowed {
    hosts: Vec<String>,
    origins: Vec<String>,
}

impl Allowed {
    pub fn new(hosts: &[String], origins: &[String]) -> anyhow::Result<Allowed> {
        let hosts = hosts
            .iter()
            .map(|h| match Authority::parse(h) {
                Some(a) if a.port.is_none() => Ok(a.host),
                _ => Err(anyhow::anyhow!(
                    "`--allow-host` takes a host name without scheme or port, like `kip.lan`: found `{h}`"
                )),
            })
            .collect::<anyhow::Result<_>>()?;
        let origins = origins
            .iter()
            .map(|o| {
                let trimmed = o.strip_suffix('/').unwrap_or(o);
                if trimmed == "*" || trimmed.eq_ignore_ascii_case("null") {
                    anyhow::bail!(
                        "`--allow-origin {o}` would let any web page use the server; name the origin of the page that needs it, like `http://localhost:5173`"
                    );
                }
                Origin::parse(trimmed).map(|p| p.to_string()).ok_or_else(|| {
                    anyhow::anyhow!(
                        "`--allow-origin` takes an origin, scheme://host[:port] without a path, like `http://localhost:5173`: found `{o}`"
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Allowed { hosts, origins })
    }
}

impl Guard {
    /// The guard of a server listening on `bound:port`.
    pub fn new(bound: IpAddr, port: u16, allowed: Allowed) -> Guard {
        Guard {
            port,
            bound,
            hosts: allowed.hosts,
            origins: allowed.origins,
        }
    }

    /// Whether a request addressed to `authority` (a `Host` header) is for
    /// this server.
    fn host_allowed(&self, authority: &Authority) -> bool {
        if self.hosts.contains(&authority.host) {
            return true;
        }
        // No port in `Host` means the scheme's default: 80 for plain HTTP.
        if authority.port.unwrap_or(80) != self.port {
            return false;
        }
        match authority.ip() {
            Some(ip) => ip.is_loopback() || ip == self.bound || self.bound.is_unspecified(),
            None => authority.host == "localhost",
        }
    }

    fn origin_allowed(&self, origin: &Origin) -> bool {
        self.origins.contains(&origin.to_string())
    }
}

/// The middleware: every request of every route passes through it.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    // Refusals before the origin is known carry no CORS header at all.
    let host = match checked_host(&guard, &request) {
        Ok(host) => host,
        Err(refusal) => return refusal,
    };
    let has_origin = request.headers().contains_key(header::ORIGIN);
    let cross = match checked_origin(&guard, request.headers(), &host) {
        Ok(cross) => cross,
        Err(refusal) => return refusal,
    };
    let mut response = if is_preflight(&request) {
        preflight(cross.as_ref())
    } else if let Err(refusal) = checked_content_type(&request) {
        refusal
    } else {
        next.run(request).await
    };
    if has_origin {
        // Answers differ by origin: no cache may hand one origin's to another.
        response
            .headers_mut()
            .append(header::VARY, HeaderValue::from_static("origin"));
    }
    if let Some(allowed) = cross {
        response
            .headers_mut()
            .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allowed);
    }
    response
}

/// The request's one `Host`, when it names this server.
fn checked_host(guard: &Guard, request: &Request) -> Result<Authority, Response> {
    let host = match single(request.headers(), &header::HOST) {
        Ok(Some(h)) => h,
        Ok(None) => {
            return Err(refuse(
                StatusCode::MISDIRECTED_REQUEST,
                ErrorCode::BadRequest,
                "the request has no `Host` header",
                "Send `Host: 127.0.0.1:PORT` (HTTP/1.1 clients do so by themselves).",
            ));
        }
        Err(()) => {
            return Err(refuse(
                StatusCode::MISDIRECTED_REQUEST,
                ErrorCode::BadRequest,
                "the request has more than one `Host` header",
                "Send one `Host` header.",
            ));
        }
    };
    let parsed = Authority::parse(host).filter(|a| guard.host_allowed(a));
    // An absolute request target (`POST http://name/…`) must name this
    // server too, whatever `Host` says.
    let target_ok = request
        .uri()
        .authority()
        .is_none_or(|a| Authority::parse(a.as_str()).is_some_and(|a| guard.host_allowed(&a)));
    match parsed {
        Some(authority) if target_ok => Ok(authority),
        _ => Err(refuse(
            StatusCode::MISDIRECTED_REQUEST,
            ErrorCode::Unauthorized,
            format!("this server does not answer to the host name `{host}`"),
            format!(
                "Address it as localhost:{port} or 127.0.0.1:{port}. A name that is not the server's own may be a DNS-rebinding attack from a web page; if the name is yours (a reverse proxy, a LAN name), start `kip serve` with `--allow-host NAME`.",
                port = guard.port
            ),
        )),
    }
}

/// Whether the request's `Origin`, if any, may use the server; `Some` is
/// the `Access-Control-Allow-Origin` to answer, for an `--allow-origin`
/// origin (a page of the server's own origin needs none).
fn checked_origin(
    guard: &Guard,
    headers: &HeaderMap,
    host: &Authority,
) -> Result<Option<HeaderValue>, Response> {
    let raw = match single(headers, &header::ORIGIN) {
        Ok(None) => return Ok(None),
        Ok(Some(o)) => o,
        Err(()) => return Err(foreign_origin("(several)")),
    };
    let Some(origin) = Origin::parse(raw) else {
        // `null` (a sandboxed frame, a file:// page) and anything malformed.
        return Err(foreign_origin(raw));
    };
    if guard.origin_allowed(&origin) {
        return HeaderValue::from_str(&origin.to_string())
            .map(Some)
            .map_err(|_| foreign_origin(raw));
    }
    if origin.is_same_as(host) {
        return Ok(None);
    }
    Err(foreign_origin(raw))
}

fn foreign_origin(origin: &str) -> Response {
    refuse(
        StatusCode::FORBIDDEN,
        ErrorCode::Unauthorized,
        format!("requests from the web page origin `{origin}` are not accepted"),
        "Only the web UI this server serves, and clients that send no `Origin` (curl, agents), may use it: another page must not read or write your nexus. To let a page of your own in (a dev server, say), start `kip serve` with `--allow-origin ORIGIN`.",
    )
}

fn is_preflight(request: &Request) -> bool {
    request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// The answer to a CORS preflight: permissions only for an allowed origin.
fn preflight(cross: Option<&HeaderValue>) -> Response {
    if cross.is_none() {
        return refuse(
            StatusCode::FORBIDDEN,
            ErrorCode::Unauthorized,
            "cross-origin requests are not accepted from this origin",
            "Start `kip serve` with `--allow-origin ORIGIN` for the origin of the page that needs the API.",
        );
    }
    let allow = |name: HeaderName, value: &'static str| (name, HeaderValue::from_static(value));
    (
        StatusCode::NO_CONTENT,
        [
            allow(header::ACCESS_CONTROL_ALLOW_METHODS, "GET, POST"),
            allow(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                "authorization, content-type, last-event-id, x-kip-originator",
            ),
            allow(header::ACCESS_CONTROL_MAX_AGE, "600"),
        ],
    )
        .into_response()
}

/// A request with a body must carry JSON, said so in `Content-Type`.
fn checked_content_type(request: &Request) -> Result<(), Response> {
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return Ok(());
    }
    let found = match single(request.headers(), &header::CONTENT_TYPE) {
        Ok(Some(value)) => value,
        Ok(None) => "none",
        Err(()) => "several",
    };
    let essence = found.split(';').next().unwrap_or_default().trim();
    if essence.eq_ignore_ascii_case("application/json") {
        return Ok(());
    }
    Err(refuse(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ErrorCode::BadRequest,
        format!(
            "the request body must be JSON sent as `Content-Type: application/json`, found `{found}`"
        ),
        "Send `Content-Type: application/json` (with curl: `-H 'Content-Type: application/json'`). Other types are refused because any web page may send them to this server without asking.",
    ))
}

/// The one value of header `name`: `Ok(None)` when absent, `Err` when it
/// appears more than once or is not text.
fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, ()> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(());
    }
    first.to_str().map(Some).map_err(|_| ())
}

fn refuse(
    status: StatusCode,
    code: ErrorCode,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> Response {
    let e = ApiError::new(code, message, hint);
    (status, axum::Json(e.to_response())).into_response()
}

/// `host[:port]` as in a `Host` header, the host lowercased and an IPv6
/// literal without its brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    fn parse(text: &str) -> Option<Authority> {
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (literal, after) = rest.split_once(']')?;
            literal.parse::<std::net::Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':')?),
            };
            (literal, port)
        } else {
            match text.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            }
        };
        let port = match port {
            // Digits only: `u16::from_str` would also take a leading `+`.
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                Some(p.parse().ok()?)
            }
            Some(_) => return None,
            None => None,
        };
        let valid = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':');
        if host.is_empty() || !host.bytes().all(valid) {
            return None;
        }
        Some(Authority {
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

impl std::fmt::Display for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

/// A web origin, `scheme://host[:port]`, lowercased and without the
/// scheme's default port, so equal origins print equal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    authority: Authority,
}

impl Origin {
    fn parse(text: &str) -> Option<Origin> {
        let (scheme, rest) = text.split_once("://")?;
        let scheme_ok = scheme
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
        if !scheme_ok {
            return None;
        }
        let scheme = scheme.to_ascii_lowercase();
        let mut authority = Authority::parse(rest)?;
        if authority.port.is_some() && authority.port == default_port(&scheme) {
            authority.port = None;
        }
        Some(Origin { scheme, authority })
    }

    /// Whether a page of this origin is the one `host` serves: same host
    /// name and port (a `Host` without a port means the scheme's default).
    fn is_same_as(&self, host: &Authority) -> bool {
        let Some(default) = default_port(&self.scheme) else {
            return false;
        };
        self.authority.host == host.host
            && self.authority.port.unwrap_or(default) == host.port.unwrap_or(default)
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", self.scheme, self.authority)
    }
}

/// The schemes a page served by this server (directly or behind a proxy)
/// can have, with their default ports.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(bound: &str, port: u16, hosts: &[&str], origins: &[&str]) -> Guard {
        let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let allowed = Allowed::new(&owned(hosts), &owned(origins)).expect("valid lists");
        Guard::new(bound.parse().expect("an IP"), port, allowed)
    }

    fn host_ok(g: &Guard, host: &str) -> bool {
        Authority::parse(host).is_some_and(|a| g.host_allowed(&a))
    }

    #[test]
    fn loopback_accepts_its_own_names_on_its_own_port() {
        let g = guard("127.0.0.1", 4840, &[], &[]);
        for ok in [
            "127.0.0.1:4840",
            "localhost:4840",
            "LOCALHOST:4840",
            "127.8.9.10:4840",
            "[::1]:4840",
        ] {
            assert!(host_ok(&g, ok), "{ok}");
        }
        for refused in [
            "evil.example:4840",
            "localhost:4841",
            "localhost",
            "127.0.0.1",
            "192.168.1.5:4840",
            "localhost.:4840",
            "127.1:4840",
            "localhost:+4840",
            "localhost:4840:4840",
            "::1:4840",
            "[::1",
            ":4840",
            "",
            "local host:4840",
        ] {
            assert!(!host_ok(&g, refused), "{refused}");
        }
    }

    #[test]
    fn unspecified_address_accepts_ip_literals_but_names_only_when_listed() {
        let g = guard("0.0.0.0", 4840, &["kip.lan"], &[]);
        assert!(host_ok(&g, "192.168.1.5:4840"));
        assert!(host_ok(&g, "[fe80::1]:4840"));
        assert!(host_ok(&g, "localhost:4840"));
        assert!(!host_ok(&g, "192.168.1.5:80"));
        assert!(!host_ok(&g, "evil.example:4840"));
        assert!(host_ok(&g, "kip.lan:4840"));
        assert!(host_ok(&g, "KIP.lan"), "a listed name on any port");
        let g = guard("192.168.1.5", 4840, &[], &[]);
        assert!(host_ok(&g, "192.168.1.5:4840"));
        assert!(host_ok(&g, "127.0.0.1:4840"));
        assert!(!host_ok(&g, "192.168.1.6:4840"));
    }

    #[test]
    fn allow_lists_are_checked_before_serving() {
        let bad = |hosts: &[&str], origins: &[&str]| {
            let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
            Allowed::new(&owned(hosts), &owned(origins)).is_err()
        };
        assert!(bad(&["kip.lan:4840"], &[]));
        assert!(bad(&["http://kip.lan"], &[]));
        assert!(bad(&[], &["*"]));
        assert!(bad(&[], &["null"]));
        assert!(bad(&[], &["localhost:5173"]));
        assert!(bad(&[], &["http://localhost:5173/app"]));
        assert!(!bad(&["kip.lan"], &["http://localhost:5173/"]));
    }

    #[test]
    fn origins_compare_by_scheme_host_and_port() {
        let g = guard(
            "127.0.0.1",
            4840,
            &[],
            &["HTTP://LocalHost:5173", "https://kip.example:443"],
        );
        let allowed = |o: &str| Origin::parse(o).is_some_and(|o| g.origin_allowed(&o));
        assert!(allowed("http://localhost:5173"));
        assert!(allowed("https://kip.example"));
        assert!(!allowed("http://kip.example"));
        assert!(!allowed("http://localhost:5174"));

        let host = Authority::parse("localhost:4840").expect("host");
        let same = |o: &str| Origin::parse(o).is_some_and(|o| o.is_same_as(&host));
        assert!(same("http://localhost:4840"));
        assert!(!same("http://127.0.0.1:4840"));
        assert!(!same("http://evil.example:4840"));
        assert!(!same("chrome-extension://localhost:4840"));
        let bare = Authority::parse("kip.lan").expect("host");
        assert!(Origin::parse("http://kip.lan:80").is_some_and(|o| o.is_same_as(&bare)));
        assert!(Origin::parse("https://kip.lan").is_some_and(|o| o.is_same_as(&bare)));
        assert_eq!(Origin::parse("null"), None);
    }
}
