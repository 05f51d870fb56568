//! What a revert may do ([`Authority`]) and what only the owner's
//! authority reverts ([`touches_protected`]).

use crate::kml::ElementChange;

/// What a revert may do: go past later writes (`force`), and change the
/// protected scope (`owner`, see `Nexus::revert_as_owner`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Authority {
    pub force: bool,
    pub owner: bool,
}

/// Whether undoing `c` would change what `KIP_3004` protects: one of the
/// protected definitions, or a system actor's identity or
/// `core_directives` (which only the owner's authority writes).
pub(super) fn touches_protected(c: &ElementChange) -> bool {
    let (Some(ty), Some(name)) = (c.type_name.as_deref(), c.name.as_deref()) else {
        return false;
    };
    if crate::schema::PROTECTED.contains(&(ty, name)) {
        return true;
    }
    crate::schema::ACTORS.contains(&(ty, name))
        && crate::schema::ACTOR_FIXED_ATTRIBUTES.iter().any(|key| {
            let value = |s: &Option<crate::kml::ChangeState>| {
                s.as_ref().and_then(|s| s.attributes.get(*key).cloned())
            };
            value(&c.before) != value(&c.after)
        })
}
