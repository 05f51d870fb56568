//! "Revert to here" (issue 13 §6): an element's history, taken back to the
//! state one of its entries left it in.
//!
//! Every later write that touched the element and still stands is reverted,
//! newest first, each exactly as [`Nexus::revert`] would, all in one write
//! transaction: either every one of them is reverted or nothing changes.
//! A write that cannot be reverted (a still later write touched another of
//! its elements) refuses the whole operation with `trace_revert`'s error,
//! which names the blocking entry.
//!
//! What "still stands" means is [`Nexus::revert`]'s rule: a write already
//! reverted and the revert that undid it cancel out; a revert of a write at
//! or before the chosen entry is itself a standing change (reverting it
//! re-applies that write).

use kip_lang::{ErrorCode, KipError};
use kip_store::ElementId;
use serde::Serialize;

use super::entry::{EntryType, from_body, parse_entry_id};
use super::ops::Reverted;
use crate::graph::{Result, TxnError};
use crate::nexus::Nexus;

/// What [`Nexus::revert_to`] did.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RevertedTo {
    /// The element (`C:…` / `P:…`).
    pub element: String,
    /// The entry whose state the element is back to.
    pub to: String,
    /// One revert per later write, newest first (empty: nothing later stood).
    pub reverted: Vec<Reverted>,
}

fn bad_element(e: &str) -> KipError {
    KipError::new(
        ErrorCode::InvalidSyntax,
        format!("`{e}` is not an element id"),
    )
    .with_hint("Element ids look like C:12 or P:7.")
}

impl Nexus {
    /// Puts `element` back as entry `to` left it: reverts, newest first and
    /// in one transaction, every later write that touched it and still
    /// stands (by `originator`, each its own `SelfCorrection` entry). `to`
    /// must be an entry that touched the element. Refused whole, naming the
    /// blocking entry, when one of those writes cannot be reverted, unless
    /// `force`.
    pub fn revert_to(
        &self,
        element: &str,
        to: &str,
        originator: &str,
        force: bool,
    ) -> Result<RevertedTo> {
        let e: ElementId = element.parse().map_err(|_| bad_element(element))?;
        let here = parse_entry_id(to)?;
        let settings = self.tracer.settings();
        let started = std::time::Instant::now();
        self.store
            .write(|txn| {
                // `trace_touching` also finds a bulk write that created the
                // element inside one of its id ranges.
                let touching = self.store.trace_touching(txn, e)?;
                if !touching.contains(&here) {
                    return Err(TxnError(
                        KipError::new(
                            ErrorCode::ReferenceError,
                            format!("{to} did not touch {element}"),
                        )
                        .with_hint("Choose an entry from the element's own history (the trace filtered by this element)."),
                    ));
                }
                let mut later = Vec::new();
                for n in touching {
                    if n <= here {
                        continue;
                    }
                    let Some(body) = self.store.trace_entry(txn, n)? else {
                        continue;
                    };
                    let entry = from_body(n, body)?;
                    let data = entry.data.as_ref();
                    let has_changes = data
                        .and_then(|d| d.get("changes"))
                        .and_then(|c| c.as_array())
                        .is_some_and(|c| !c.is_empty());
                    let reverted = data.and_then(|d| d.get("reverted_by")).is_some();
                    let cancels_newer = data
                        .and_then(|d| d.get("reverts"))
                        .and_then(|m| m.as_str())
                        .and_then(|m| parse_entry_id(m).ok())
                        .is_some_and(|m| m > here);
                    if entry.kind == EntryType::Trace && has_changes && !reverted && !cancels_newer
                    {
                        later.push((n, entry.id));
                    }
                }
                let mut done = Vec::with_capacity(later.len());
                for (n, id) in later.into_iter().rev() {
                    done.push(self.revert_in(
                        txn,
                        n,
                        &id,
                        originator,
                        super::authority::Authority { force, owner: false },
                        &settings,
                        started,
                    )?);
                }
                Ok(RevertedTo {
                    element: e.to_string(),
                    to: to.to_owned(),
                    reverted: done,
                })
            })
            .map_err(|e| e.0)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use crate::{Context, ExecuteKip, Nexus, TraceEntry, TraceFilter};

    fn fresh() -> (tempfile::TempDir, Nexus) {
        let dir = tempfile::tempdir().expect("temp dir");
        let nexus = Nexus::open(dir.path()).expect("nexus opens");
        let schema = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../capsules/examples/10_medical_schema.kip");
        let text = std::fs::read_to_string(schema).expect("schema");
        let r = nexus.execute(&ExecuteKip::command(text), &Context::new("setup"));
        assert!(r.get("error").is_none(), "{r:#}");
        (dir, nexus)
    }

    #[track_caller]
    fn run(nexus: &Nexus, command: &str) -> (Json, TraceEntry) {
        let ctx = Context::new("test").with_originator("agent");
        let r = nexus.execute(&ExecuteKip::command(command), &ctx);
        assert!(r.get("error").is_none(), "{command}\n{r:#}");
        let filter = TraceFilter {
            originator: Some("agent".into()),
            kind: Some("TRACE".into()),
            limit: Some(1),
            ..TraceFilter::default()
        };
        let entry = nexus.trace_list(&filter).expect("list").entries.remove(0);
        (r["result"].clone(), entry)
    }

    fn aspirin(nexus: &Nexus) -> Json {
        let (found, _) = run(
            nexus,
            r#"FIND(?d) WHERE { ?d {type: "Drug", name: "Aspirin"} }"#,
        );
        found[0].clone()
    }

    fn headache(nexus: &Nexus) -> Json {
        let (found, _) = run(
            nexus,
            r#"FIND(?s) WHERE { ?s {type: "Symptom", name: "Headache"} }"#,
        );
        found[0].clone()
    }

    const CREATE: &str = r#"UPSERT { CONCEPT ?h { {type: "Symptom", name: "Headache"} } CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 2 } SET PROPOSITIONS { ("treats", ?h) } } }"#;

    #[test]
    fn revert_to_here_undoes_every_later_write_of_the_element_newest_first_in_one_go() {
        let (_dir, nexus) = fresh();
        let (_, created) = run(&nexus, CREATE);
        let before = aspirin(&nexus);
        let id = before["id"].as_str().expect("id").to_owned();
        let (_, second) = run(
            &nexus,
            r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 3 } } }"#,
        );
        let (_, third) = run(
            &nexus,
            r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 5, note: "checked" } } }"#,
        );
        assert_eq!(aspirin(&nexus)["attributes"]["risk_level"], json!(5));

        let done = nexus
            .revert_to(&id, &created.id, "curator", false)
            .expect("revert to here");
        assert_eq!(done.element, id);
        assert_eq!(done.to, created.id);
        let order: Vec<&str> = done.reverted.iter().map(|r| r.reverted.as_str()).collect();
        assert_eq!(order, [third.id.as_str(), second.id.as_str()]);
        for r in &done.reverted {
            assert_eq!(r.entry.originator, "curator");
            assert!(r.entry.tag.contains(&"SelfCorrection".to_owned()));
        }
        let now = aspirin(&nexus);
        assert_eq!(now["attributes"], before["attributes"]);
        assert!(now["attributes"].get("note").is_none());
        for e in [&second, &third] {
            let data = nexus.trace_entry(&e.id).expect("entry").data.expect("data");
            assert!(
                data.get("reverted_by").is_some(),
                "{} is marked reverted",
                e.id
            );
        }
        // Back at the chosen state, nothing stands later: a second call reverts nothing.
        let again = nexus
            .revert_to(&id, &created.id, "curator", false)
            .expect("nothing to do");
        assert!(again.reverted.is_empty());
    }

    #[test]
    fn revert_to_here_is_refused_whole_naming_the_blocking_entry() {
        let (_dir, nexus) = fresh();
        let (_, created) = run(&nexus, CREATE);
        let id = aspirin(&nexus)["id"].as_str().expect("id").to_owned();
        // Two later writes of Aspirin; the older also changed Headache,
        // which a still later write (not Aspirin's) changed again.
        run(
            &nexus,
            r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 3 } } CONCEPT ?h { {type: "Symptom", name: "Headache"} SET ATTRIBUTES { severity: "mild" } } }"#,
        );
        let (_, blocking) = run(
            &nexus,
            r#"UPSERT { CONCEPT ?h { {type: "Symptom", name: "Headache"} SET ATTRIBUTES { severity: "severe" } } }"#,
        );
        run(
            &nexus,
            r#"UPSERT { CONCEPT ?d { {type: "Drug", name: "Aspirin"} SET ATTRIBUTES { risk_level: 4 } } }"#,
        );
        let before = (aspirin(&nexus), headache(&nexus));

        let err = nexus
            .revert_to(&id, &created.id, "curator", false)
            .expect_err("refused");
        assert_eq!(err.code.as_str(), "KIP_3005", "{err:?}");
        assert!(err.message.contains(&blocking.id), "{}", err.message);
        assert_eq!(err.data["later"], json!(blocking.id));
        // All or nothing: the newest write, revertible alone, was not reverted either.
        assert_eq!((aspirin(&nexus), headache(&nexus)), before);
        let by_curator = TraceFilter {
            originator: Some("curator".into()),
            ..TraceFilter::default()
        };
        assert!(
            nexus
                .trace_list(&by_curator)
                .expect("list")
                .entries
                .is_empty()
        );

        // Forced, every later write of Aspirin goes.
        let done = nexus
            .revert_to(&id, &created.id, "curator", true)
            .expect("forced");
        assert_eq!(done.reverted.len(), 2);
        assert_eq!(aspirin(&nexus)["attributes"]["risk_level"], json!(2));
    }

    #[test]
    fn revert_to_checks_the_element_and_the_entry() {
        let (_dir, nexus) = fresh();
        let (_, created) = run(&nexus, CREATE);
        let (_, other) = run(
            &nexus,
            r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "Fever"} } }"#,
        );
        let id = aspirin(&nexus)["id"].as_str().expect("id").to_owned();
        assert!(
            nexus
                .revert_to("Aspirin", &created.id, "curator", false)
                .is_err()
        );
        assert!(nexus.revert_to(&id, "T:999999", "curator", false).is_err());
        let err = nexus
            .revert_to(&id, &other.id, "curator", false)
            .expect_err("an entry that did not touch Aspirin");
        assert!(err.message.contains("did not touch"), "{}", err.message);
    }

    #[test]
    fn revert_to_here_finds_an_element_a_bulk_write_created_in_a_range() {
        let (_dir, nexus) = fresh();
        let blocks: Vec<String> = (0..crate::kml::changes::BULK_CREATIONS + 10)
            .map(|i| format!(r#"CONCEPT ?s{i} {{ {{type: "Symptom", name: "S{i}"}} SET ATTRIBUTES {{ severity: "mild" }} }}"#))
            .collect();
        let (_, bulk) = run(&nexus, &format!("UPSERT {{ {} }}", blocks.join("\n")));
        let data = bulk.data.clone().expect("data");
        assert!(
            data.get("created").is_some(),
            "a bulk write keeps ranges: {data:#}"
        );
        let (found, _) = run(
            &nexus,
            r#"FIND(?s) WHERE { ?s {type: "Symptom", name: "S500"} }"#,
        );
        let id = found[0]["id"].as_str().expect("id").to_owned();
        let (_, later) = run(
            &nexus,
            r#"UPSERT { CONCEPT ?s { {type: "Symptom", name: "S500"} SET ATTRIBUTES { severity: "severe" } } }"#,
        );
        let done = nexus
            .revert_to(&id, &bulk.id, "curator", false)
            .expect("the bulk entry touched the element");
        let order: Vec<&str> = done.reverted.iter().map(|r| r.reverted.as_str()).collect();
        assert_eq!(order, [later.id.as_str()]);
        let (found, _) = run(
            &nexus,
            r#"FIND(?s) WHERE { ?s {type: "Symptom", name: "S500"} }"#,
        );
        assert_eq!(found[0]["attributes"]["severity"], json!("mild"));
    }
}
