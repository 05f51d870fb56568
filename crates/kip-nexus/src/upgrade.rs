//! Bringing a nexus made with an earlier Genesis to the bundled one, when
//! it is opened ([`Nexus::upgrade_genesis`]).

use kip_lang::Errors;

use crate::genesis::{CAPSULES, VERSION, VERSION_KEY, recorded_version};
use crate::graph::{Result, TxnError};
use crate::kml::BeforeImage;
use crate::nexus::Nexus;
use crate::options::{Origin, RunOptions};
use crate::run::Given;
use crate::stats::Stats;
use crate::trace;
use crate::write::EndOfWrite;

/// The capsules an upgrade re-applies: the definitions and the domains
/// (the first three). The personas (`$self`, `$system`) are the agent's
/// own data once created, so an upgrade leaves them as they are.
const DEFINITIONS: usize = 3;

/// Who the trace names for Genesis and its upgrades.
const ORIGINATOR: &str = "system";

/// Brings a nexus made by an earlier version to the bundled Genesis: its
/// definitions and domains re-applied with the engine's own authority in
/// one traced write (a TRACE entry tagged `GenesisUpgrade` with the
/// before-image, so revertible, and a SPACE `MetaDataChange` entry saying
/// what changed), the new version recorded in the same transaction. User
/// data is not touched: only what the bundled capsules define is written.
/// Nothing when the nexus is already current (decided inside the write, so
/// two processes opening it at once upgrade it once).
fn upgrade(nexus: &Nexus) -> Result<()> {
    let store = &nexus.store;
    if store
        .read(|txn| recorded_version(store, txn).map_err(TxnError))
        .map_err(|e| e.0)?
        >= VERSION
    {
        return Ok(());
    }
    let text: String = CAPSULES[..DEFINITIONS]
        .iter()
        .map(|(_, text)| *text)
        .collect::<Vec<_>>()
        .join("\n");
    let commands = kip_lang::parse(&text).map_err(|e: Errors| e.into_response_error())?;
    let mut options = RunOptions::new(Origin::new(ORIGINATOR));
    options.owner = true;
    options.trace.tags.push("GenesisUpgrade".to_owned());
    let started = std::time::Instant::now();
    nexus.write_traced(true, |txn, traced| {
        let from = recorded_version(store, txn)?;
        if from >= VERSION {
            return Ok(());
        }
        let mut changes = BeforeImage::default();
        let mut stats = Stats::default();
        for command in &commands {
            let given = Given {
                handles: None,
                known: None,
                explain: false,
                owner: true,
            };
            let outcome = nexus.command_in_write(
                txn,
                &text,
                command,
                true,
                traced.on().then_some(&mut changes),
                given,
            )?;
            stats += outcome.stats;
        }
        let mut options = options.clone();
        options.trace.data.insert(
            "genesis_upgrade".to_owned(),
            serde_json::json!({"from": from, "to": VERSION}),
        );
        let write = EndOfWrite {
            options: &options,
            traced,
            commit: true,
            started,
        };
        nexus.log_and_trace(
            txn,
            &write,
            trace::verbs(&commands),
            &text,
            stats,
            &mut changes,
        )?;
        store.put_state(txn, VERSION_KEY, &serde_json::json!(VERSION))?;
        Ok(())
    })
}

impl Nexus {
    /// See [`upgrade`]: called by [`Nexus::open`].
    pub(crate) fn upgrade_genesis(&self) -> Result<()> {
        upgrade(self)
    }
}

#[cfg(test)]
mod upgrade_tests {
    use serde_json::{Value as Json, json};

    use super::*;
    use crate::genesis::bootstrap_folder;
    use crate::{Context, ExecuteKip, TraceFilter};

    /// Genesis as version 1 bundled it (`tests/data/genesis-v1/`).
    const V1: [(&str, &str); 5] = [
        (
            "01_genesis.kip",
            include_str!("../../../tests/data/genesis-v1/01_genesis.kip"),
        ),
        (
            "02_person.kip",
            include_str!("../../../tests/data/genesis-v1/02_person.kip"),
        ),
        (
            "03_event.kip",
            include_str!("../../../tests/data/genesis-v1/03_event.kip"),
        ),
        (
            "04_self.kip",
            include_str!("../../../tests/data/genesis-v1/04_self.kip"),
        ),
        (
            "05_system.kip",
            include_str!("../../../tests/data/genesis-v1/05_system.kip"),
        ),
    ];

    /// What the agent and its user wrote into the version 1 nexus.
    const USER_DATA: &str = r#"
        UPSERT {
            CONCEPT ?garden { {type: "Domain", name: "Garden"} SET ATTRIBUTES { description: "My plants." } }
            CONCEPT ?self { {type: "Person", name: "$self"} SET ATTRIBUTES { name: "Ivy", persona: "A gardener's helper." } }
        }
    "#;

    fn ok(nexus: &Nexus, command: &str) -> Json {
        let r = nexus.execute(&ExecuteKip::command(command), &Context::default());
        assert!(r.get("error").is_none(), "{command}\n{r:#}");
        r["result"].clone()
    }

    /// Every definition and domain, by type and name, with its attributes.
    fn definitions(nexus: &Nexus) -> Vec<(Json, Json, Json)> {
        let mut out = Vec::new();
        for ty in ["$ConceptType", "$PropositionType", "Domain"] {
            let found = ok(
                nexus,
                &format!("FIND(?t) WHERE {{ ?t {{type: \"{ty}\"}} }} LIMIT 1000"),
            );
            for t in found.as_array().expect("concepts") {
                out.push((
                    t["type"].clone(),
                    t["name"].clone(),
                    t["attributes"].clone(),
                ));
            }
        }
        out.sort_by_key(|(ty, name, _)| (ty.to_string(), name.to_string()));
        out
    }

    fn upgrades(nexus: &Nexus) -> Vec<crate::TraceEntry> {
        let filter = TraceFilter {
            tag: Some("GenesisUpgrade".into()),
            ..TraceFilter::default()
        };
        nexus.trace_list(&filter).expect("the trace lists").entries
    }

    #[test]
    fn a_version_1_nexus_is_upgraded_once_on_open() {
        let old = tempfile::tempdir().expect("a temporary folder");
        let mut capsules = V1.to_vec();
        capsules.push(("user.kip", USER_DATA));
        bootstrap_folder(old.path(), &capsules, None);
        let fresh_dir = tempfile::tempdir().expect("a temporary folder");
        let fresh = Nexus::open(fresh_dir.path()).expect("a fresh nexus opens");
        assert!(upgrades(&fresh).is_empty(), "a fresh nexus is current");

        let nexus = Nexus::open(old.path()).expect("the old nexus opens");
        // The bundled definitions and domains, exactly as a fresh nexus has
        // them, plus the user's own domain.
        let mut expected = definitions(&fresh);
        expected.push((
            json!("Domain"),
            json!("Garden"),
            json!({"description": "My plants."}),
        ));
        expected.sort_by_key(|(ty, name, _)| (ty.to_string(), name.to_string()));
        assert_eq!(definitions(&nexus), expected);
        // The persona is the agent's own: untouched.
        let me = ok(
            &nexus,
            r#"FIND(?p.attributes.name, ?p.attributes.persona) WHERE { ?p {type: "Person", name: "$self"} }"#,
        );
        assert_eq!(me, json!([["Ivy"], ["A gardener's helper."]]));
        // Traced as an owner-authority write with a SPACE MetaDataChange.
        let entries = upgrades(&nexus);
        assert_eq!(entries.len(), 1, "{entries:#?}");
        let data = entries[0].data.as_ref().expect("the entry's data");
        assert_eq!(data["genesis_upgrade"], json!({"from": 1, "to": VERSION}));
        assert!(!data["changes"].as_array().expect("changes").is_empty());
        let space = nexus
            .trace_list(&TraceFilter {
                tag: Some("MetaDataChange".into()),
                ..TraceFilter::default()
            })
            .expect("the trace lists")
            .entries;
        assert!(
            space
                .iter()
                .any(|e| e.message.contains("Genesis was upgraded from version 1")),
            "{space:#?}"
        );
        let report = nexus.check_store().expect("checked");
        assert!(report.ok, "{report:?}");
        drop(nexus);

        // Opening it again changes nothing more.
        let nexus = Nexus::open(old.path()).expect("the nexus opens again");
        assert_eq!(upgrades(&nexus).len(), 1);
    }
}
