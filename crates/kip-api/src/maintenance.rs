//! `check_store` and `backup`: the store's integrity check and consistent
//! copies of the nexus, now or on a schedule the host runs.
//!
//! The schedule lives in the nexus's host state (`host/backup_schedule`),
//! so every host of the same nexus sees the same one; a host calls
//! [`crate::Api::run_scheduled_backup`] on a timer and it backs up when the
//! last backup is older than the schedule's period.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use kip_nexus::Nexus;

use crate::error::{ApiError, ErrorCode};
use crate::types::{BackupDone, BackupRequest, BackupResponse, BackupSchedule, StoreCheck};

/// The host-state key of the schedule.
pub(crate) const SCHEDULE_KEY: &str = "host/backup_schedule";

pub(crate) fn check_store(nexus: &Nexus) -> Result<StoreCheck, ApiError> {
    Ok(nexus.check_store()?)
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub(crate) fn schedule(nexus: &Nexus) -> Result<Option<BackupSchedule>, ApiError> {
    Ok(nexus
        .state(SCHEDULE_KEY)?
        .and_then(|v| serde_json::from_value(v).ok()))
}

fn save(nexus: &Nexus, schedule: Option<&BackupSchedule>) -> Result<(), ApiError> {
    match schedule {
        Some(s) => nexus.set_state(SCHEDULE_KEY, &serde_json::to_value(s).unwrap_or_default())?,
        None => {
            nexus.remove_state(SCHEDULE_KEY)?;
        }
    }
    Ok(())
}

/// Backs up into `dest/data.mdb`.
pub(crate) fn backup_to(nexus: &Nexus, dest: &Path) -> Result<BackupDone, ApiError> {
    let at = now_secs();
    let b = nexus.backup(dest)?;
    Ok(BackupDone {
        path: b.path.display().to_string(),
        bytes: b.bytes,
        last_change_seq: b.last_change_seq,
        at,
    })
}

/// Backs up into a new subfolder of `dest`.
pub(crate) fn backup_into(nexus: &Nexus, dest: &Path) -> Result<BackupDone, ApiError> {
    let at = now_secs();
    let seq = nexus.last_change_seq()?;
    let mut folder: PathBuf = dest.join(format!("kip-backup-{seq}-{at}"));
    let mut n = 1;
    while folder.exists() {
        n += 1;
        folder = dest.join(format!("kip-backup-{seq}-{at}-{n}"));
    }
    let mut done = backup_to(nexus, &folder)?;
    done.at = at;
    Ok(done)
}

pub(crate) fn backup(nexus: &Nexus, request: &BackupRequest) -> Result<BackupResponse, ApiError> {
    let mut schedule = schedule(nexus)?;
    let dest = match (&request.dest, &schedule) {
        (Some(d), _) => d.clone(),
        (None, Some(s)) => s.dest.clone(),
        (None, None) => {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "`backup` needs a `dest` folder: no scheduled backup names one",
                "Pass {\"dest\": \"/path/to/backups\"}.",
            ));
        }
    };
    if !Path::new(&dest).is_absolute() {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("the backup folder {dest:?} is not an absolute path"),
            "Name the folder by its absolute path.",
        ));
    }
    match request.every_hours {
        Some(0) => schedule = None,
        Some(every_hours) => {
            let last = schedule
                .take()
                .filter(|s| s.dest == dest)
                .and_then(|s| s.last);
            schedule = Some(BackupSchedule {
                dest: dest.clone(),
                every_hours,
                last,
            });
        }
        None => {}
    }
    let done = if request.now.unwrap_or(true) {
        let done = backup_into(nexus, Path::new(&dest))?;
        if let Some(s) = schedule.as_mut().filter(|s| s.dest == dest) {
            s.last = Some(done.clone());
        }
        Some(done)
    } else {
        None
    };
    if request.every_hours.is_some() || done.is_some() {
        save(nexus, schedule.as_ref())?;
    }
    Ok(BackupResponse {
        backup: done,
        schedule,
    })
}

/// Runs the scheduled backup if one is due; `Ok(None)` if none is.
pub(crate) fn run_scheduled(nexus: &Nexus) -> Result<Option<BackupDone>, ApiError> {
    let Some(mut s) = schedule(nexus)? else {
        return Ok(None);
    };
    let due = s
        .last
        .as_ref()
        .is_none_or(|last| now_secs().saturating_sub(last.at) >= u64::from(s.every_hours) * 3600);
    if !due {
        return Ok(None);
    }
    let done = backup_into(nexus, Path::new(&s.dest))?;
    s.last = Some(done.clone());
    save(nexus, Some(&s))?;
    Ok(Some(done))
}
