//! Profiles: sets of definitions a nexus may carry besides Genesis, offered
//! when a nexus is created (`kip init --profile memory`, the app's Primer)
//! and installable later. Today one: KIP v1.0-RC11's cognitive memory
//! profile (`capsules/profiles/memory/`, embedded by kip-nexus). A profile
//! is applied as any client's import — it adds types and predicates, never
//! touches the protected scope — so every face may install it.

use kip_capsule::{ImportOptions, ImportReport};
use kip_nexus::{CONCEPT_TYPE, Nexus, Origin, PROPOSITION_TYPE};
use serde::{Deserialize, Serialize};

use crate::{ApiError, ErrorCode};

/// One profile a nexus may carry.
struct Profile {
    name: &'static str,
    title: &'static str,
    capsules: &'static [(&'static str, &'static str)],
    types: &'static [&'static str],
    predicates: &'static [&'static str],
}

/// Every profile, by name.
const PROFILES: [Profile; 1] = [Profile {
    name: "memory",
    title: "KIP v1.0-RC11 cognitive memory profile: preferences, insights, commitments, sleep tasks, experiences and skills",
    capsules: &kip_nexus::profile::MEMORY,
    types: &[
        "Preference",
        "Insight",
        "Commitment",
        "SleepTask",
        "Experience",
        "ExperienceStep",
        "Skill",
    ],
    predicates: &[
        "prefers",
        "learned",
        "committed_to",
        "owed_to",
        "assigned_to",
        "has_step",
        "caused_by",
        "derived_insight",
        "compiled_to",
        "involves",
        "mentions",
        "consolidated_to",
        "derived_from",
    ],
}];

/// A profile and whether this nexus carries it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProfileInfo {
    /// What `kip init --profile` and `install_profile` name it by.
    pub name: String,
    pub title: String,
    /// The concept types it defines.
    pub types: Vec<String>,
    /// The predicates it defines.
    pub predicates: Vec<String>,
    /// Every type and predicate it defines is defined here.
    pub installed: bool,
    /// What of it this nexus does not define yet.
    pub missing: Vec<String>,
}

/// The profiles this version offers (`profiles`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProfilesResponse {
    pub profiles: Vec<ProfileInfo>,
}

/// `install_profile`: the profile's name, e.g. `"memory"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(deny_unknown_fields)]
pub struct InstallProfileRequest {
    pub name: String,
    /// Check and run it in a transaction that is then aborted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub dry_run: Option<bool>,
}

/// What installing a profile did: one import report per capsule, in the
/// order they were applied (it stops at the first that fails).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InstallProfileResponse {
    pub profile: ProfileInfo,
    pub reports: Vec<ImportReport>,
}

/// Every profile with whether `nexus` carries it.
pub(crate) fn profiles(nexus: &Nexus) -> Result<ProfilesResponse, ApiError> {
    let profiles = PROFILES
        .iter()
        .map(|p| info(nexus, p))
        .collect::<Result<_, _>>()?;
    Ok(ProfilesResponse { profiles })
}

fn info(nexus: &Nexus, p: &Profile) -> Result<ProfileInfo, ApiError> {
    let missing = nexus.read(|g| {
        let mut missing = Vec::new();
        for (ty, names) in [(CONCEPT_TYPE, p.types), (PROPOSITION_TYPE, p.predicates)] {
            for name in names {
                if g.find_concept_by_names(ty, name)?.is_none() {
                    missing.push((*name).to_owned());
                }
            }
        }
        Ok(missing)
    })?;
    let owned = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
    Ok(ProfileInfo {
        name: p.name.to_owned(),
        title: p.title.to_owned(),
        types: owned(p.types),
        predicates: owned(p.predicates),
        installed: missing.is_empty(),
        missing,
    })
}

/// Applies the profile's capsules in order, as any client's import (no
/// owner's authority), each atomically; stops at the first that fails.
/// Applying it again changes nothing.
pub(crate) fn install(
    nexus: &Nexus,
    origin: &Origin,
    originator: &str,
    request: &InstallProfileRequest,
) -> Result<InstallProfileResponse, ApiError> {
    let Some(profile) = PROFILES.iter().find(|p| p.name == request.name) else {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("there is no profile {:?}", request.name),
            format!(
                "Name one of: {}.",
                PROFILES
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    let options = ImportOptions {
        dry_run: request.dry_run.unwrap_or(false),
        originator: Some(originator),
        ..ImportOptions::default()
    };
    let mut reports = Vec::new();
    for (name, text) in profile.capsules {
        let report = kip_capsule::import_text_with(nexus, name, text, origin, &options);
        let failed = !report.is_imported();
        reports.push(report);
        if failed {
            break;
        }
    }
    Ok(InstallProfileResponse {
        profile: info(nexus, profile)?,
        reports,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::Api;

    /// The memory profile installs as an ordinary client into a fresh
    /// nexus, defines exactly what its listing says, and installing it
    /// again changes nothing.
    #[test]
    fn the_memory_profile_installs_once_and_says_so() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let api = Api::new(Arc::new(Nexus::open(dir.path()).expect("nexus")), "test");
        let before = api.profiles().expect("profiles");
        assert!(!before.profiles[0].installed);
        assert_eq!(before.profiles[0].missing.len(), 20);
        let request = InstallProfileRequest {
            name: "memory".into(),
            dry_run: None,
        };
        let done = api.install_profile(&request).expect("installed");
        assert!(
            done.reports.iter().all(ImportReport::is_imported),
            "{:?}",
            done.reports
        );
        assert!(done.profile.installed, "{:?}", done.profile.missing);
        let again = api.install_profile(&request).expect("installed again");
        assert!(
            again.reports.iter().all(|r| !r.stats.changed()),
            "{:?}",
            again.reports
        );
        let unknown = api
            .install_profile(&InstallProfileRequest {
                name: "nope".into(),
                dry_run: None,
            })
            .expect_err("an unknown profile is refused");
        assert!(unknown.hint.contains("memory"), "{unknown:?}");
    }
}
