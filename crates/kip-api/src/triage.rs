//! Decay triage (issue 31 §5) on the wire: `triage` reads one page of a
//! list (expired, fading, untouched), `triage_apply` runs a bulk action
//! (pin, renew, archive, delete) or its dry run as this host's caller. The
//! work is the engine's (`kip_nexus::triage`, `kip_nexus::triage_apply`);
//! the request and response types are the engine's own.

use kip_nexus::Access;
use kip_nexus::triage::{TriagePage, TriageQuery};
use kip_nexus::triage_apply::{TriageApply, TriageOutcome};

use crate::{Api, ApiError};

pub(crate) fn triage(api: &Api, q: &TriageQuery) -> Result<TriagePage, ApiError> {
    Ok(api.nexus.triage(q)?)
}

pub(crate) fn apply(api: &Api, r: &TriageApply) -> Result<TriageOutcome, ApiError> {
    Ok(api.nexus.triage_apply(r, &api.context(Access::ReadWrite))?)
}
