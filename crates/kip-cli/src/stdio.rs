//! Standard input and output as every subcommand uses them.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

/// Writes to stdout; a closed pipe (`kip exec … | head`) ends the program
/// quietly instead of panicking.
pub fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("kip: cannot write to standard output: {e}");
        std::process::exit(2);
    }
}

/// Prints `{"error": error}` (pretty) on standard output; the exit code of
/// a result that carries an error is 1.
pub fn print_error(error: &impl serde::Serialize) -> anyhow::Result<ExitCode> {
    out(&format!(
        "{}\n",
        serde_json::to_string_pretty(&serde_json::json!({ "error": error }))?
    ));
    Ok(ExitCode::from(1))
}

/// The text of `file`, or of standard input when it is absent or `-`.
pub fn read_input(file: Option<&PathBuf>) -> anyhow::Result<String> {
    match file {
        Some(path) if path.as_os_str() != "-" => std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display())),
        _ => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text)?;
            Ok(text)
        }
    }
}
