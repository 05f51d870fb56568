//! The capsule profiles a nexus may add to its Genesis: `.kip` files kept
//! in `capsules/profiles/`, embedded in the binary. This module only holds
//! their text, in the order they must run; applying them is the caller's
//! (an ordinary client's import: a profile changes nothing Genesis defines).

/// The RC11 cognitive memory profile (`capsules/profiles/memory/`): the types
/// Preference, Insight, Commitment, SleepTask, Experience, ExperienceStep and
/// Skill, then the predicates that name them, in the order they must run.
pub const MEMORY: [(&str, &str); 15] = [
    (
        "01_preference.kip",
        include_str!("../../../capsules/profiles/memory/01_preference.kip"),
    ),
    (
        "02_insight.kip",
        include_str!("../../../capsules/profiles/memory/02_insight.kip"),
    ),
    (
        "03_commitment.kip",
        include_str!("../../../capsules/profiles/memory/03_commitment.kip"),
    ),
    (
        "04_sleep_task.kip",
        include_str!("../../../capsules/profiles/memory/04_sleep_task.kip"),
    ),
    (
        "05_experience.kip",
        include_str!("../../../capsules/profiles/memory/05_experience.kip"),
    ),
    (
        "06_experience_step.kip",
        include_str!("../../../capsules/profiles/memory/06_experience_step.kip"),
    ),
    (
        "07_skill.kip",
        include_str!("../../../capsules/profiles/memory/07_skill.kip"),
    ),
    (
        "08_has_step.kip",
        include_str!("../../../capsules/profiles/memory/08_has_step.kip"),
    ),
    (
        "09_caused_by.kip",
        include_str!("../../../capsules/profiles/memory/09_caused_by.kip"),
    ),
    (
        "10_derived_insight.kip",
        include_str!("../../../capsules/profiles/memory/10_derived_insight.kip"),
    ),
    (
        "11_compiled_to.kip",
        include_str!("../../../capsules/profiles/memory/11_compiled_to.kip"),
    ),
    (
        "12_involves.kip",
        include_str!("../../../capsules/profiles/memory/12_involves.kip"),
    ),
    (
        "13_mentions.kip",
        include_str!("../../../capsules/profiles/memory/13_mentions.kip"),
    ),
    (
        "14_consolidated_to.kip",
        include_str!("../../../capsules/profiles/memory/14_consolidated_to.kip"),
    ),
    (
        "15_derived_from.kip",
        include_str!("../../../capsules/profiles/memory/15_derived_from.kip"),
    ),
];

/// The sleep cycle's decay sweep, RC11 §4.3's example with `LIMIT limit`:
/// every live, unpinned link not decayed since `:cycle_start` (and not
/// observed since `:stale_cutoff`) has its `memory_strength` multiplied by
/// `:decay_factor` and is stamped `strength_decay_applied_at: :timestamp`,
/// so a re-run continues where the last one stopped. The one text the
/// bench, the tests and the agent guide use.
pub fn decay_sweep(limit: u64) -> String {
    format!(
        r#"UPDATE ?link
SET METADATA {{
  memory_strength: CLAMP(MUL(COALESCE(?link.metadata.memory_strength, 0.7), :decay_factor), 0.0, 1.0),
  strength_decay_applied_at: :timestamp
}}
WHERE {{
  ?link (?s, ?p, ?o)
  FILTER(?p != "belongs_to_domain")
  FILTER(IS_NULL(?link.metadata.superseded) || ?link.metadata.superseded != true)
  FILTER(IS_NULL(?link.metadata.pinned) || ?link.metadata.pinned != true)
  FILTER(IS_NULL(?link.metadata.observed_at) || ?link.metadata.observed_at < :stale_cutoff)
  FILTER(IS_NULL(?link.metadata.memory_strength) || ?link.metadata.memory_strength > 0.05)
  FILTER(IS_NULL(?link.metadata.strength_decay_applied_at) ||
         ?link.metadata.strength_decay_applied_at < :cycle_start)
}}
LIMIT {limit}"#
    )
}

#[cfg(test)]
mod tests {
    use super::MEMORY;

    /// The profile is embedded from `capsules/profiles/memory/`, outside this
    /// crate: every file there is embedded, in name order (the order it
    /// runs in), byte for byte, so a capsule added or edited there cannot be
    /// missed by the engine.
    #[test]
    fn every_memory_profile_capsule_of_the_folder_is_embedded_as_it_is() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../capsules/profiles/memory");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("capsules/profiles/memory exists")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".kip"))
            .collect();
        files.sort();
        let embedded: Vec<&str> = MEMORY.iter().map(|(name, _)| *name).collect();
        assert_eq!(files, embedded);
        for (name, text) in MEMORY {
            let on_disk = std::fs::read_to_string(dir.join(name)).expect("readable");
            assert_eq!(on_disk, text, "{name} differs from the embedded copy");
        }
    }
}
