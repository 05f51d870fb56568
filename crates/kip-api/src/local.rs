//! What a host working on local files needs beyond the wire operations —
//! today the `kip` command line: importing a file by its path (with
//! progress), exporting the nexus as text, and watching a folder onto a
//! channel.
//!
//! These are not [`crate::Operation`]s: their arguments are paths, callbacks
//! and channels, which no transport carries. Like the wire operations they
//! write under the API's origin and respect its read-only mode; the work
//! itself (the import pipeline, the export, the watcher) is `kip-capsule`'s.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use kip_capsule::{
    ExportOptions, ImportOptions, ImportReport, WatchError, WatchEvent, WatchOptions, Watcher,
};

use crate::{Api, ApiError};

impl Api {
    /// Reads and imports the file at `path` atomically, calling
    /// `options.progress` as the import moves on. A failed import (the file
    /// cannot be read, or holds any error) is a report with its errors, not
    /// an `Err`; a read-only host refuses anything but a dry run.
    pub fn import_file(
        &self,
        path: &Path,
        options: &ImportOptions<'_>,
    ) -> Result<ImportReport, ApiError> {
        let options = self.import_options(options)?;
        Ok(kip_capsule::import_path_with(
            &self.nexus,
            path,
            &self.origin,
            &options,
        ))
    }

    /// The one import of files and folders, for every host (`kip import`,
    /// files dropped on the desktop window): the files at `paths` in order
    /// (see [`capsule_files`]), each atomically, as [`Api::import_file`]
    /// would one after the other, but pipelined: the next file is read and
    /// parsed while the current one is applied, and runs of additive
    /// capsules are written as one group (`kip_capsule::import_paths_with`).
    /// `each` gets every report as its file is done; progress reports name
    /// their file by its index in `paths`.
    pub fn import_files(
        &self,
        paths: &[PathBuf],
        options: &ImportOptions<'_>,
        each: impl FnMut(ImportReport),
    ) -> Result<(), ApiError> {
        let options = self.import_options(options)?;
        kip_capsule::import_paths_with(&self.nexus, paths, &self.origin, &options, each);
        Ok(())
    }

    /// What an import through this API runs with: refused on a read-only
    /// host unless it is a dry run; the trace names this API's originator
    /// unless the caller chose.
    fn import_options<'a>(
        &'a self,
        options: &ImportOptions<'a>,
    ) -> Result<ImportOptions<'a>, ApiError> {
        if self.read_only && !options.dry_run {
            return Err(ApiError::read_only("importing"));
        }
        Ok(ImportOptions {
            dry_run: options.dry_run,
            progress: options.progress,
            originator: options.originator.or(Some(self.originator())),
            owner: options.owner,
        })
    }

    /// Imports an uploaded capsule with the owner's authority over the
    /// protected scope (BRIEF §3): what the desktop app's "apply as owner"
    /// runs, first as a dry run (the report's `changes` are the engine's
    /// diff) and then for real. Never an [`crate::Operation`]: only a host
    /// the owner runs on their own machine calls it (the desktop shell;
    /// `kip import --owner` passes the flag in [`ImportOptions`]), so no
    /// agent-facing face (MCP, HTTP) can reach it. Traced with the tag
    /// `OwnerAuthority`, revertible like any write.
    pub fn import_as_owner(
        &self,
        request: &crate::ImportRequest,
    ) -> Result<ImportReport, ApiError> {
        let options = self.import_options(&ImportOptions {
            dry_run: request.dry_run.unwrap_or(false),
            progress: None,
            originator: None,
            owner: true,
        })?;
        Ok(kip_capsule::import_text_with(
            &self.nexus,
            &request.file_name,
            &request.text,
            &self.origin,
            &options,
        ))
    }

    /// Reverts trace entry `id` with the owner's authority over the
    /// protected scope (see `kip_nexus::Nexus::revert_as_owner`): what
    /// `kip trace revert --owner` runs. Never an [`crate::Operation`].
    pub fn revert_as_owner(&self, id: &str, force: bool) -> Result<kip_nexus::Reverted, ApiError> {
        if self.read_only {
            return Err(ApiError::read_only("reverting"));
        }
        Ok(self.nexus.revert_as_owner(id, self.originator(), force)?)
    }

    /// What the nexus holds, less what Genesis created, as a capsule or a
    /// bundle that re-imports into the same graph. An unknown type or
    /// domain in the filters is an error.
    pub fn export(&self, options: &ExportOptions) -> Result<String, ApiError> {
        kip_capsule::export(&self.nexus, options).map_err(ApiError::from)
    }

    /// Watches the folder `dir`: imports the files it holds, then every
    /// capsule written or moved into it once the folder has been quiet for
    /// `debounce`, recording the writes under this API's origin (unlike
    /// [`Api::watch_folder`], which feeds a board and writes as
    /// `<origin>/watch`). Each event arrives on the returned channel, which
    /// ends when the watcher stops.
    ///
    /// A read-only host imports nothing, so it refuses to watch with a
    /// permission-denied [`WatchError::Io`].
    pub fn watch_events(
        &self,
        dir: &Path,
        debounce: Duration,
    ) -> Result<(Watcher, Receiver<WatchEvent>), WatchError> {
        if self.read_only {
            return Err(WatchError::Io {
                path: dir.to_path_buf(),
                source: io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "this host is read-only and imports nothing",
                ),
            });
        }
        let options = WatchOptions {
            debounce,
            ..self.watch_options(self.origin.clone())
        };
        Watcher::with_channel(self.nexus.clone(), dir, options)
    }
}

/// The capsule files `paths` name, in order: files as given, folders walked
/// (hidden and temporary files skipped, see `kip_capsule::capsule_files`).
/// A path that does not exist or a folder that cannot be listed is an
/// error naming it, before anything is imported.
pub fn capsule_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, ApiError> {
    let cannot_read = |path: &Path, e: io::Error| {
        ApiError::new(
            crate::ErrorCode::Io,
            format!("cannot read {}: {e}", path.display()),
            "Check that the path exists and is readable.",
        )
    };
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| cannot_read(path, e))?;
        if meta.is_dir() {
            out.extend(kip_capsule::capsule_files(path).map_err(|e| cannot_read(path, e))?);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kip_capsule::ExportFormat;

    use super::*;

    fn api(dir: &Path) -> Api {
        let nexus = kip_nexus::Nexus::open(&dir.join("nexus")).expect("the nexus opens");
        Api::new(Arc::new(nexus), "test")
    }

    #[test]
    fn an_imported_file_comes_back_in_the_export() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let file = dir.path().join("botany.yaml");
        std::fs::write(
            &file,
            "- type: Domain\n  name: Botany\n  description: Plants.\n",
        )
        .expect("the bundle is written");
        let api = api(dir.path());
        let report = api
            .import_file(&file, &ImportOptions::default())
            .expect("a read-write host imports");
        assert!(report.is_imported(), "{report:?}");
        let options = ExportOptions {
            format: ExportFormat::Yaml,
            types: vec!["Domain".to_owned()],
            domains: Vec::new(),
        };
        let text = api.export(&options).expect("the export succeeds");
        assert!(text.contains("name: Botany"), "{text}");
    }

    #[test]
    fn an_unknown_export_filter_is_the_engines_error() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let options = ExportOptions {
            format: ExportFormat::Kip,
            types: vec!["Nope".to_owned()],
            domains: Vec::new(),
        };
        let error = api(dir.path())
            .export(&options)
            .expect_err("an unknown type is refused");
        assert_eq!(
            error.code,
            crate::ErrorCode::Kip(crate::KipCode::TypeMismatch)
        );
    }

    /// The owner's import previews the engine's diff of the protected
    /// definitions, writes nothing on the preview, then applies them;
    /// the ordinary import of the same text is refused.
    #[test]
    fn the_owner_previews_then_applies_what_every_client_is_refused() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let api = api(dir.path());
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/data/kip-rc11-official/persons/system.kip"),
        )
        .expect("the official persona is vendored");
        let request = crate::ImportRequest {
            file_name: "system.kip".into(),
            text,
            dry_run: Some(true),
        };
        let refused = api.import(&request).expect("a report");
        assert!(!refused.is_imported());
        let preview = api.import_as_owner(&request).expect("a report");
        assert!(preview.is_imported() && preview.dry_run, "{preview:?}");
        assert!(
            preview
                .changes
                .iter()
                .any(|c| c.name.as_deref() == Some("$system")),
            "{:?}",
            preview.changes
        );
        let directives = |api: &Api| {
            api.execute(crate::ExecuteRequest {
                command: Some(
                    r#"FIND(?s.attributes.core_directives) WHERE { ?s {type: "Person", name: "$system"} }"#
                        .into(),
                ),
                ..Default::default()
            })["result"]
                .clone()
        };
        let before = directives(&api);
        assert_eq!(directives(&api), before, "a preview writes nothing");
        let applied = api
            .import_as_owner(&crate::ImportRequest {
                dry_run: None,
                ..request
            })
            .expect("a report");
        assert!(
            applied.is_imported() && applied.changes.is_empty(),
            "{applied:?}"
        );
        assert_ne!(directives(&api), before);
    }

    #[test]
    fn a_read_only_host_neither_imports_nor_watches() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let file = dir.path().join("botany.kip");
        std::fs::write(&file, "").expect("the capsule is written");
        let api = api(dir.path()).read_only(true);
        let error = api
            .import_file(&file, &ImportOptions::default())
            .expect_err("a read-only host refuses to import");
        assert_eq!(
            error.code,
            crate::ErrorCode::Kip(crate::KipCode::ImmutableTarget)
        );
        let dry_run = ImportOptions {
            dry_run: true,
            progress: None,
            originator: None,
            owner: false,
        };
        assert!(api.import_file(&file, &dry_run).is_ok());
        assert!(matches!(
            api.watch_events(dir.path(), Duration::from_millis(50)),
            Err(WatchError::Io { source, .. }) if source.kind() == io::ErrorKind::PermissionDenied
        ));
    }
}
