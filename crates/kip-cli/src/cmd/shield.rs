//! The crash shield of the store walks (`kip check-store`, `kip backup`):
//! the walk runs in a child process, this same binary re-executed with the
//! hidden flag [`CHILD_FLAG`], and the parent only waits for it.
//!
//! LMDB keeps no checksums and follows the page numbers it reads as they
//! are, so bytes damaged inside the data pages can make a read fault
//! (SIGSEGV, SIGBUS) or trip one of LMDB's assertions (SIGABRT); no error
//! handling in the reading process can catch that. A check or a backup is
//! exactly when a curator suspects damage, so there the fault ends the
//! child and the parent reports it as a coded error naming the store,
//! instead of dying with it. The parent never opens the store itself.
//!
//! Deliberately not shielded: every other command, the server and the
//! desktop app, which keep the store open in their own process (see the
//! failure model, docs/failure-model.md).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, ExitStatus};

use kip_api::{ApiError, ErrorCode, KipCode};

use crate::stdio::print_error;

/// The hidden flag that makes a store walk run in this process.
pub const CHILD_FLAG: &str = "--unshielded";

/// The exit code of a Rust panic (the runtime's own, for a panicking main).
const PANIC_EXIT: i32 = 101;

/// How the child ended when it did not end by itself.
#[derive(Debug, PartialEq, Eq)]
enum Crash {
    /// Killed by a signal (unix).
    Signal(i32),
    /// A panic: the store held something the code did not expect.
    Panic,
    /// An exception code (Windows: an access violation and the like).
    #[cfg(windows)]
    Exception(u32),
}

/// Runs `kip --db DB [--originator …] SUBCOMMAND --unshielded [-- ARGS]` with
/// this process's standard streams, and passes its exit code on; a crash of
/// the child becomes a `KIP_4003` error naming the store (exit 1). `cleanup`
/// lists files a crashed child may have left half-written.
pub fn run(
    db: &Path,
    subcommand: &str,
    args: &[OsString],
    cleanup: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().map_err(|e| {
        anyhow::anyhow!("cannot find this program's own file to run {subcommand}: {e}")
    })?;
    let mut child = Command::new(exe);
    child.arg("--db").arg(db);
    if let Some(originator) = crate::db::originator_override() {
        child.arg("--originator").arg(originator);
    }
    child.arg(subcommand).arg(CHILD_FLAG);
    if !args.is_empty() {
        // Positional arguments after `--`, so one starting with `-` stays one.
        child.arg("--").args(args);
    }
    let status = child
        .status()
        .map_err(|e| anyhow::anyhow!("cannot start {subcommand} in a child process: {e}"))?;
    let Some(crash) = crash_of(status) else {
        let code = match (status.code(), stopped_by(status)) {
            (Some(code), _) => code,
            // Killed from outside (SIGKILL, SIGTERM, …): no judgement on the
            // store; the shell's convention for the exit code.
            (None, Some(signal)) => {
                eprintln!("kip: {subcommand} was stopped by signal {signal} before it finished");
                128 + signal
            }
            (None, None) => 2,
        };
        return Ok(ExitCode::from(u8::try_from(code).unwrap_or(2)));
    };
    for file in cleanup {
        let _ = std::fs::remove_file(file);
    }
    let error = damaged(db, subcommand, &crash);
    eprintln!("kip: {}", error.message);
    print_error(&error)
}

/// The coded error of a crashed walk.
fn damaged(db: &Path, subcommand: &str, crash: &Crash) -> ApiError {
    let how = match crash {
        Crash::Signal(n) => match signal_name(*n) {
            Some(name) => format!("signal {n}, {name}"),
            None => format!("signal {n}"),
        },
        Crash::Panic => "a panic".to_owned(),
        #[cfg(windows)]
        Crash::Exception(code) => format!("exception {code:#010x}"),
    };
    let mut error = ApiError::new(
        ErrorCode::Kip(KipCode::InternalError),
        format!(
            "the store at {} is damaged: reading it crashed ({how}) during {subcommand}; LMDB keeps no checksums, so bytes damaged inside its data pages can only be found this way",
            db.display()
        ),
        "Restore from a backup (kip restore BACKUP --force), or move the folder away and re-import its capsules; do not open this store in the app meanwhile, it can crash there too.",
    )
    .with_data("path", db.display().to_string())
    .with_data("during", subcommand);
    if let Crash::Signal(n) = crash {
        error = error.with_data("signal", *n);
    }
    error
}

/// A crash: a fault signal (a bad memory access, an assertion's abort) or
/// a panic. Other signals come from outside and say nothing of the store.
#[cfg(unix)]
fn crash_of(status: ExitStatus) -> Option<Crash> {
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(signal) = status.signal().filter(|&s| signal_name(s).is_some()) {
        return Some(Crash::Signal(signal));
    }
    (status.code() == Some(PANIC_EXIT)).then_some(Crash::Panic)
}

/// The signal that ended the child, if one did.
#[cfg(unix)]
fn stopped_by(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt as _;
    status.signal()
}

#[cfg(not(unix))]
fn stopped_by(_: ExitStatus) -> Option<i32> {
    None
}

#[cfg(windows)]
fn crash_of(status: ExitStatus) -> Option<Crash> {
    // NTSTATUS error codes (0xC…): access violation, stack overflow, …
    let code = status.code()? as u32;
    if code >= 0xC000_0000 {
        return Some(Crash::Exception(code));
    }
    (status.code() == Some(PANIC_EXIT)).then_some(Crash::Panic)
}

#[cfg(not(any(unix, windows)))]
fn crash_of(status: ExitStatus) -> Option<Crash> {
    (status.code() == Some(PANIC_EXIT)).then_some(Crash::Panic)
}

/// The names of the fault signals a damaged file can raise in a reader.
fn signal_name(n: i32) -> Option<&'static str> {
    Some(match n {
        4 => "SIGILL",
        6 => "SIGABRT",
        #[cfg(target_os = "linux")]
        7 => "SIGBUS",
        #[cfg(target_os = "macos")]
        10 => "SIGBUS",
        8 => "SIGFPE",
        11 => "SIGSEGV",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_damage_error_names_the_store_the_signal_and_the_way_out() {
        let e = damaged(Path::new("/x/nexus"), "check-store", &Crash::Signal(11));
        let json = serde_json::to_value(&e).expect("json");
        assert_eq!(json["code"], "KIP_4003");
        let message = json["message"].as_str().expect("message");
        assert!(
            message.starts_with(
                "the store at /x/nexus is damaged: reading it crashed (signal 11, SIGSEGV)"
            ),
            "{message}"
        );
        assert!(json["hint"].as_str().expect("hint").contains("kip restore"));
        assert_eq!(json["data"]["signal"], 11);
        assert_eq!(json["data"]["path"], "/x/nexus");
    }
}
