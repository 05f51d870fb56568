//! Helpers for tests that run `kip` as separate processes: a `kip serve`
//! child on an ephemeral port, a minimal HTTP/1.1 client and a server-sent
//! events reader over plain sockets (so the tests depend on no HTTP stack
//! of their own and see exactly the bytes a browser would).

#![allow(dead_code)] // each test file uses a different subset

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value as Json;

/// How long a socket read may wait before the test fails (a failure
/// deadline, not a performance assertion).
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

pub fn kip() -> Command {
    Command::new(kip_e2e::kip_bin())
}

/// Fails the test unless `out` (a finished `kip`) exited 0, showing what
/// it printed on both streams.
#[track_caller]
pub fn assert_exited_ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `kip --db DB args…` to completion.
pub fn kip_run(db: &Path, args: &[&str]) -> Output {
    kip()
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("kip runs")
}

/// A running `kip serve`, killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
}

impl Server {
    /// Starts `kip --db DB serve ARGS…` and waits for its "listening on" line.
    pub fn start(db: &Path, args: &[&str]) -> Server {
        Server::spawn(kip(), db, args)
    }

    /// [`Server::start`] with environment variables set for the server.
    pub fn start_with_env(db: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut command = kip();
        command.envs(env.iter().copied());
        Server::spawn(command, db, args)
    }

    /// [`Server::start`] with the `kip` binary at `program`, run in `cwd`
    /// (a copy of the binary away from the repository).
    pub fn start_from(program: &Path, cwd: &Path, db: &Path, args: &[&str]) -> Server {
        let mut command = Command::new(program);
        command.current_dir(cwd);
        Server::spawn(command, db, args)
    }

    fn spawn(mut command: Command, db: &Path, args: &[&str]) -> Server {
        command
            .arg("--db")
            .arg(db)
            .arg("serve")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A binary this test just copied can be "busy" for a moment: another
        // test thread that forked while the copy was open for writing holds
        // that descriptor until its child execs (ETXTBSY). Retried briefly.
        let mut tries = 0;
        let mut child = loop {
            match command.spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                started => break started.expect("kip serve starts"),
            }
        };
        if let Some(stderr) = child.stderr.take() {
            kip_e2e::forward_log(stderr, "kip serve");
        }
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        Server { child, port }
    }

    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Json>,
    ) -> (u16, Json) {
        http(self.port, method, path, headers, body)
    }

    pub fn post(&self, path: &str, body: &Json) -> (u16, Json) {
        self.request("POST", path, &[], Some(body))
    }

    pub fn get(&self, path: &str) -> (u16, Json) {
        self.request("GET", path, &[], None)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Only the child this test started, by its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to kip serve");
    stream
        .set_read_timeout(Some(READ_TIMEOUT))
        .expect("timeout");
    stream
}

/// One HTTP/1.1 request with `Connection: close`; the status and the body
/// parsed as JSON (`Json::String` of the text when it is not JSON).
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Json>,
) -> (u16, Json) {
    let mut stream = connect(port);
    let body = body.map(Json::to_string).unwrap_or_default();
    let mut request =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() {
        request.push_str("Content-Type: application/json\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the response");
    let text = String::from_utf8(raw).expect("UTF-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status code");
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_owned()
    };
    let json = serde_json::from_str(&body).unwrap_or(Json::String(body));
    (status, json)
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    pub event: String,
    pub id: Option<String>,
    pub data: String,
}

/// A connection to `/api/events`, read event by event.
pub struct Sse {
    reader: BufReader<TcpStream>,
    buffer: String,
    pub status: u16,
}

impl Sse {
    pub fn open(port: u16, path: &str, headers: &[(&str, &str)]) -> Sse {
        let mut stream = connect(port);
        let mut request = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
        );
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).expect("send");
        let mut reader = BufReader::new(stream);
        let mut status_line = String::new();
        reader.read_line(&mut status_line).expect("status line");
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("header line");
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        Sse {
            reader,
            buffer: String::new(),
            status,
        }
    }

    /// The next event (comments and keep-alives skipped), decoding the
    /// chunked transfer encoding on the way.
    pub fn next_event(&mut self) -> SseEvent {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent {
                    event: "message".into(),
                    id: None,
                    data: String::new(),
                };
                let mut any = false;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event.event = v.trim().to_owned();
                        any = true;
                    } else if let Some(v) = line.strip_prefix("data:") {
                        event.data.push_str(v.trim_start());
                        any = true;
                    } else if let Some(v) = line.strip_prefix("id:") {
                        event.id = Some(v.trim().to_owned());
                    }
                }
                if any {
                    return event;
                }
                continue;
            }
            let mut size = String::new();
            self.reader
                .read_line(&mut size)
                .expect("a chunk size (or the stream ended)");
            let n = usize::from_str_radix(size.trim(), 16).expect("a hex chunk size");
            assert!(n > 0, "the event stream ended");
            let mut chunk = vec![0; n + 2];
            self.reader.read_exact(&mut chunk).expect("a chunk");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
    }

    /// Skips events until one named `name`.
    pub fn next_named(&mut self, name: &str) -> SseEvent {
        loop {
            let e = self.next_event();
            if e.event == name {
                return e;
            }
        }
    }
}
