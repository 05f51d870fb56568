//! The resolver's seven steps (seed 004 §8, BRIEF §8), split by what they
//! need: [`Resolver::prepare`] reads the type and the instances fresh
//! (mode B) and checks the request's own parameters, synchronously;
//! [`Resolver::gather`] asks the LLM for the rest (one call per property,
//! in parallel under a semaphore) and calls the `http` sources, async;
//! [`Resolver::evaluate`] runs every `kip` metric for every instance and
//! bucket in one read snapshot and lines the answers up with
//! `unique_identities`. [`Resolver::resolve`] runs the three;
//! [`Resolver::resolve_blocking`] does too, from synchronous code, with a
//! runtime of its own built only when there is something to wait for.

use std::sync::Arc;
use std::time::Instant;

use kip_lang::ErrorCode as KipCode;
use kip_nexus::{CONCEPT_TYPE, ConceptId, DataSource, LogicProperty, Nexus};
use serde_json::{Map, Value as Json, json};
use tokio::sync::Semaphore;
use tracing::Instrument as _;

use crate::error::{Code, ResolveError};
use crate::llm::{Llm, LlmConfig};
use crate::params::{self, Problem};
use crate::prompt;
use crate::types::*;
use crate::{eval, operator};

/// LLM calls in flight at once unless the request says otherwise.
pub const DEFAULT_MAX_CONCURRENCY: usize = 4;

/// The logic-property resolver over one nexus.
#[derive(Debug)]
pub struct Resolver {
    nexus: Arc<Nexus>,
    /// `Ok(None)`: no LLM configured; `Err`: configured but unusable
    /// (reported when an LLM is needed).
    llm: Result<Option<Arc<Llm>>, ResolveError>,
    client: reqwest::Client,
    account_id: String,
    account_type: String,
}

/// A requested property on its way through the steps.
#[derive(Debug)]
pub(crate) struct Prop {
    pub def: LogicProperty,
    pub span: tracing::Span,
    pub span_id: String,
    /// The checked inputs (from the request, or after `gather`).
    pub params: Option<Map<String, Json>>,
    pub from: ParamsFrom,
    pub llm_calls: u32,
    pub repairs: u32,
    pub params_ms: f64,
    pub eval_ms: f64,
    /// An `http` source's answer, one value per instance (after `gather`).
    pub fetched: Option<Vec<Json>>,
}

/// A request after [`Resolver::prepare`].
#[derive(Debug)]
pub struct Prepared {
    request: ResolveRequest,
    trace_id: String,
    now_ms: i64,
    started: Instant,
    pub(crate) instances: Vec<Instance>,
    pub(crate) props: Vec<Prop>,
}

impl Prepared {
    /// Whether [`Resolver::gather`] has anything to do (an LLM call or an
    /// `http` source): without, no runtime is needed.
    pub fn needs_async(&self) -> bool {
        self.props
            .iter()
            .any(|p| p.params.is_none() || matches!(p.def.data_source, DataSource::Http { .. }))
    }

    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }
}

fn random_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

impl Resolver {
    /// A resolver with the LLM of the environment (`KIP_LLM_URL`, …; none
    /// if unset).
    pub fn from_env(nexus: Arc<Nexus>) -> Resolver {
        let mut r = Resolver::new(nexus, None);
        r.llm = LlmConfig::from_env().map(|c| c.map(|c| Arc::new(Llm::new(c, r.client.clone()))));
        r
    }

    /// A resolver with the given LLM (or none).
    pub fn new(nexus: Arc<Nexus>, llm: Option<LlmConfig>) -> Resolver {
        // Building the client loads the root certificates once; it is
        // shared by the LLM and the operators' calls.
        let client = reqwest::Client::builder()
            .build()
            .unwrap_or_else(|_| reqwest::Client::new());
        let llm = match llm {
            None => Ok(None),
            Some(c) => c
                .check()
                .map(|()| Some(Arc::new(Llm::new(c, client.clone())))),
        };
        Resolver {
            nexus,
            llm,
            client,
            account_id: "kip".to_owned(),
            account_type: "app".to_owned(),
        }
    }

    /// The `x-account-id` / `x-account-type` headers of operator calls
    /// (default `kip` / `app`; hosts pass their origin).
    pub fn with_account(
        mut self,
        id: impl Into<String>,
        account_type: impl Into<String>,
    ) -> Resolver {
        self.account_id = id.into();
        self.account_type = account_type.into();
        self
    }

    /// Every step, async.
    pub async fn resolve(&self, request: ResolveRequest) -> Result<ResolveResponse, ResolveError> {
        let mut prepared = self.prepare(request)?;
        let trace_id = prepared.trace_id.clone();
        self.gather(&mut prepared)
            .await
            .map_err(|e| e.traced(&trace_id))?;
        self.evaluate(prepared)
    }

    /// Every step, from synchronous code (kip-api's operation): a
    /// current-thread runtime is built for the LLM and `http` calls only
    /// when the request needs them. Must not be called on a thread that
    /// drives an async runtime (hosts call it on a blocking thread).
    pub fn resolve_blocking(
        &self,
        request: ResolveRequest,
    ) -> Result<ResolveResponse, ResolveError> {
        let mut prepared = self.prepare(request)?;
        if prepared.needs_async() {
            let trace_id = prepared.trace_id.clone();
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| {
                    ResolveError::kip(
                        KipCode::InternalError,
                        format!("cannot start the resolver's runtime: {e}"),
                        "Retry; report it if it persists.",
                    )
                    .traced(&trace_id)
                })?;
            runtime
                .block_on(self.gather(&mut prepared))
                .map_err(|e| e.traced(&trace_id))?;
        }
        self.evaluate(prepared)
    }

    /// Steps 1–2 and the request's part of 3–5: the type's definition and
    /// the instances (one snapshot), the requested properties, and the
    /// parameters the request supplies, checked. Missing inputs with no
    /// LLM to ask fail here with `MISSING_INPUT_PARAMS`.
    pub fn prepare(&self, request: ResolveRequest) -> Result<Prepared, ResolveError> {
        let started = Instant::now();
        let trace_id = random_id();
        let traced = |e: ResolveError| e.traced(&trace_id);
        let now_ms = request.now_ms.unwrap_or_else(|| {
            i64::try_from(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis())
                    .unwrap_or_default(),
            )
            .unwrap_or_default()
        });
        let (declared, instances) = self.read_definition(&request).map_err(traced)?;
        let mut props = requested(&request, &declared, &trace_id).map_err(traced)?;
        // The request's own parameters, checked; what is missing collected.
        let mut missing = Vec::new();
        let given = request.dynamic_params.clone().unwrap_or_default();
        for prop in &mut props {
            let t = Instant::now();
            let Some(value) = given.get(&prop.def.name) else {
                continue;
            };
            match params::check(&prop.def, value) {
                Ok(p) => prop.params = Some(p),
                Err(Problem::Missing(list)) => missing.push(MissingInputs {
                    property: prop.def.name.clone(),
                    params: list,
                }),
                Err(Problem::Invalid(e)) => {
                    return Err(traced(e.in_property(&prop.def.name, &prop.span_id)));
                }
            }
            prop.params_ms = ms_since(t);
        }
        let unfilled: Vec<&Prop> = props
            .iter()
            .filter(|p| p.params.is_none() && !given.contains_key(&p.def.name))
            .collect();
        let llm = match &self.llm {
            Ok(l) => l.is_some(),
            // Reported only when the LLM is needed.
            Err(e) if !unfilled.is_empty() && missing.is_empty() => return Err(traced(e.clone())),
            Err(_) => false,
        };
        if !llm {
            for p in unfilled {
                missing.push(MissingInputs {
                    property: p.def.name.clone(),
                    params: params::all_missing(&p.def),
                });
            }
        }
        missing.retain(|m| !m.params.is_empty());
        // A property with no required input needs nothing from anyone.
        for prop in &mut props {
            if prop.params.is_none()
                && !given.contains_key(&prop.def.name)
                && params::all_missing(&prop.def).is_empty()
                && !llm
                && let Ok(p) = params::check(&prop.def, &json!({}))
            {
                prop.params = Some(p);
            }
        }
        if !missing.is_empty() {
            return Err(traced(missing_error(missing, llm)));
        }
        Ok(Prepared {
            request,
            trace_id,
            now_ms,
            started,
            instances,
            props,
        })
    }

    /// The type's declared logic properties and the requested instances,
    /// in one snapshot.
    fn read_definition(
        &self,
        request: &ResolveRequest,
    ) -> Result<(Vec<LogicProperty>, Vec<Instance>), ResolveError> {
        let ot = request.ot_id.as_str();
        let mut found = None;
        let outcome = self.nexus.read(|g| {
            let Some(def) = g.find_concept_by_names(CONCEPT_TYPE, ot)? else {
                found = Some(g.defined_types()?);
                return Ok(None);
            };
            let attributes = g
                .concept(def)?
                .map(|r| r.attributes.clone())
                .unwrap_or_default();
            let declared = kip_nexus::logic_properties(&attributes)?;
            let type_id = g.type_id(ot)?;
            let mut instances = Vec::new();
            let mut absent = Vec::new();
            for identity in &request.unique_identities {
                let id = match (&identity.id, &identity.name) {
                    (Some(id), _) => id.parse::<ConceptId>().ok().filter(|c| {
                        g.concept(*c)
                            .ok()
                            .flatten()
                            .is_some_and(|r| Some(r.type_id) == type_id)
                    }),
                    (None, Some(name)) => match type_id {
                        Some(t) => g.find_concept(t, name)?,
                        None => None,
                    },
                    (None, None) => None,
                };
                match id.and_then(|c| g.concept(c).ok().flatten().map(|r| (c, r))) {
                    Some((c, r)) => instances.push(Instance {
                        id: c,
                        name: r.name.clone(),
                        attributes: r.attributes.clone(),
                    }),
                    None => absent.push(identity.label()),
                }
            }
            Ok(Some((declared, instances, absent)))
        })?;
        let Some((declared, instances, absent)) = outcome else {
            let defined = found.unwrap_or_default();
            let close = kip_lang::suggest::similar(ot, defined.iter().map(String::as_str));
            return Err(ResolveError::kip(
                KipCode::TypeMismatch,
                format!("concept type `{ot}` is not defined"),
                match close.first() {
                    Some(s) => {
                        format!("Did you mean `{s}`? DESCRIBE CONCEPT TYPES lists them all.")
                    }
                    None => "DESCRIBE CONCEPT TYPES lists the defined types.".to_owned(),
                },
            )
            .with_data("suggestions", json!(close)));
        };
        if request.unique_identities.is_empty() {
            return Err(ResolveError::kip(
                KipCode::ConstraintViolation,
                "no instances requested",
                "Name the instances in `unique_identities`: [{\"name\": \"…\"}] or [{\"id\": \"C:…\"}].",
            ));
        }
        if !absent.is_empty() {
            return Err(ResolveError::kip(
                KipCode::NotFound,
                format!("no `{ot}` instance {}: {}", if absent.len() == 1 { "is" } else { "are" }, absent.join(", ")),
                format!("Check the names (case-sensitive) or ids; FIND(?x.name) WHERE {{ ?x {{type: \"{ot}\"}} }} lists them."),
            )
            .with_data("instances", absent));
        }
        Ok((declared, instances))
    }

    /// Steps 4 (the LLM's part) and 6 (the `http` sources): async.
    pub async fn gather(&self, prepared: &mut Prepared) -> Result<(), ResolveError> {
        let trace_id = prepared.trace_id.clone();
        if prepared.props.iter().any(|p| p.params.is_none()) {
            self.generate(prepared).await?;
        }
        for prop in prepared.props.iter_mut() {
            if let DataSource::Http { url } = &prop.def.data_source {
                let t = Instant::now();
                let values = operator::call(
                    &self.client,
                    url,
                    &prop.def,
                    prop.params.as_ref().unwrap_or(&Map::new()),
                    &prepared.instances,
                    (&self.account_id, &self.account_type),
                    &trace_id,
                )
                .instrument(prop.span.clone())
                .await
                .map_err(|e| e.in_property(&prop.def.name, &prop.span_id))?;
                prop.fetched = Some(values);
                prop.eval_ms = ms_since(t);
            }
        }
        Ok(())
    }

    /// One LLM call per property without parameters, in parallel, at most
    /// `max_concurrency` at once. Any failure fails the request; missing
    /// inputs of every property are reported together.
    async fn generate(&self, prepared: &mut Prepared) -> Result<(), ResolveError> {
        let llm = match &self.llm {
            Ok(Some(l)) => l.clone(),
            Ok(None) => return Ok(()),
            Err(e) => return Err(e.clone()),
        };
        let req = &prepared.request;
        let limit = req
            .options
            .max_concurrency
            .map_or(DEFAULT_MAX_CONCURRENCY, |n| {
                usize::try_from(n.max(1)).unwrap_or(1)
            });
        let semaphore = Arc::new(Semaphore::new(limit));
        let ctx = prompt::Context {
            query: &req.query,
            kn_id: &req.kn_id,
            ot_id: &req.ot_id,
            identities: &req.unique_identities,
            additional_context: &req.additional_context,
            now_ms: prepared.now_ms,
        };
        let mut tasks = tokio::task::JoinSet::new();
        for (index, prop) in prepared.props.iter().enumerate() {
            if prop.params.is_some() {
                continue;
            }
            let messages = vec![
                json!({"role": "system", "content": prompt::system(&prop.def)}),
                json!({"role": "user", "content": prompt::user(&ctx, &prop.def)}),
            ];
            let job = crate::generate::Job {
                llm: llm.clone(),
                semaphore: semaphore.clone(),
                def: prop.def.clone(),
                messages,
                max_repairs: req.options.max_repair_rounds,
            };
            tasks.spawn(async move { (index, job.run().await) }.instrument(prop.span.clone()));
        }
        let mut missing = Vec::new();
        let mut failure: Option<ResolveError> = None;
        while let Some(joined) = tasks.join_next().await {
            let (index, outcome) = joined.map_err(|e| {
                ResolveError::kip(
                    KipCode::InternalError,
                    format!("an LLM task failed: {e}"),
                    "Retry; report it if it persists.",
                )
            })?;
            let prop = &mut prepared.props[index];
            prop.from = ParamsFrom::Llm;
            prop.llm_calls = outcome.calls;
            prop.repairs = outcome.repairs;
            prop.params_ms = outcome.ms;
            match outcome.result {
                Ok(p) => prop.params = Some(p),
                Err(Problem::Missing(list)) => missing.push((
                    index,
                    MissingInputs {
                        property: prop.def.name.clone(),
                        params: list,
                    },
                )),
                Err(Problem::Invalid(e)) => {
                    let e = e.in_property(&prop.def.name, &prop.span_id);
                    // The first failure in request order is the one reported.
                    if failure.as_ref().is_none_or(|f| {
                        f.data.get("index").and_then(Json::as_u64) > Some(index as u64)
                    }) {
                        failure = Some(e.with_data("index", index));
                    }
                }
            }
        }
        if let Some(mut e) = failure {
            e.data.remove("index");
            return Err(e);
        }
        if !missing.is_empty() {
            missing.sort_by_key(|(i, _)| *i);
            return Err(missing_error(
                missing.into_iter().map(|(_, m)| m).collect(),
                true,
            ));
        }
        Ok(())
    }

    /// Step 6 for the `kip` metrics and step 7: every instance × property
    /// in one read snapshot, answers aligned with `unique_identities`.
    pub fn evaluate(&self, mut prepared: Prepared) -> Result<ResolveResponse, ResolveError> {
        let trace_id = prepared.trace_id.clone();
        let traced = |e: ResolveError| e.traced(&trace_id);
        let mut columns: Vec<Vec<Json>> = Vec::with_capacity(prepared.props.len());
        let values = self
            .nexus
            .read_queries(|snapshot| {
                let mut out = Vec::new();
                for prop in prepared.props.iter_mut() {
                    let _entered = prop.span.enter();
                    if let Some(values) = prop.fetched.take() {
                        out.push(Ok(values));
                        continue;
                    }
                    let t = Instant::now();
                    let result = eval::metric(
                        snapshot,
                        &prop.def,
                        prop.params.as_ref().unwrap_or(&Map::new()),
                        &prepared.instances,
                    )
                    .map_err(|e| ResolveError::from(e).in_property(&prop.def.name, &prop.span_id));
                    prop.eval_ms = ms_since(t);
                    let failed = result.is_err();
                    out.push(result);
                    if failed {
                        break;
                    }
                }
                Ok(out)
            })
            .map_err(|e| traced(e.into()))?;
        for v in values {
            columns.push(v.map_err(traced)?);
        }
        let datas = prepared
            .instances
            .iter()
            .enumerate()
            .map(|(i, inst)| {
                let mut row = Map::new();
                row.insert(
                    "id".into(),
                    json!(kip_nexus::ElementId::Concept(inst.id).to_string()),
                );
                row.insert("name".into(), json!(inst.name));
                for (prop, column) in prepared.props.iter().zip(&columns) {
                    row.insert(
                        prop.def.name.clone(),
                        column.get(i).cloned().unwrap_or(Json::Null),
                    );
                }
                row
            })
            .collect();
        let debug = prepared.request.options.return_debug.then(|| ResolveDebug {
            trace_id: trace_id.clone(),
            now_ms: prepared.now_ms,
            dynamic_params: prepared
                .props
                .iter()
                .map(|p| {
                    (
                        p.def.name.clone(),
                        Json::Object(p.params.clone().unwrap_or_default()),
                    )
                })
                .collect(),
            properties: prepared
                .props
                .iter()
                .map(|p| PropertyDebug {
                    property: p.def.name.clone(),
                    kind: p.def.kind.as_str().to_owned(),
                    span_id: p.span_id.clone(),
                    params_from: p.from,
                    llm_calls: p.llm_calls,
                    repair_rounds: p.repairs,
                    params_ms: p.params_ms,
                    eval_ms: p.eval_ms,
                })
                .collect(),
            total_ms: ms_since(prepared.started),
        });
        Ok(ResolveResponse { datas, debug })
    }
}

fn names(props: &[LogicProperty]) -> Vec<String> {
    props.iter().map(|p| p.name.clone()).collect()
}

/// The seed's `MISSING_INPUT_PARAMS` (§9.1).
fn missing_error(missing: Vec<MissingInputs>, llm: bool) -> ResolveError {
    let mut e = ResolveError::new(
        Code::MissingInputParams,
        "dynamic_params lacks required input parameters",
        if llm {
            "Ask the user for what `missing` lists (or add it to additional_context) and resolve again."
        } else {
            "No LLM is configured on this server: supply dynamic_params yourself ({\"<property>\": {\"<param>\": value}}), asking the user for what you cannot infer, and resolve again."
        },
    );
    e.missing = missing;
    e
}

/// The properties `request` names, each once, with a tracing span under
/// `trace_id`; an error if it names none or one `declared` does not hold.
fn requested(
    request: &ResolveRequest,
    declared: &[LogicProperty],
    trace_id: &str,
) -> Result<Vec<Prop>, ResolveError> {
    if request.properties.is_empty() {
        return Err(ResolveError::kip(
            KipCode::ConstraintViolation,
            "no properties requested",
            format!(
                "Name one or more logic properties of `{}` in `properties`.",
                request.ot_id
            ),
        )
        .with_data("available", names(declared)));
    }
    let mut props = Vec::new();
    let mut unknown = Vec::new();
    for name in &request.properties {
        if props.iter().any(|p: &Prop| &p.def.name == name) {
            continue;
        }
        match declared.iter().find(|p| &p.name == name) {
            Some(def) => {
                let span_id = random_id();
                let span = tracing::info_span!("logic_property", property = %name, kind = def.kind.as_str(), span_id = %span_id, trace_id = %trace_id);
                props.push(Prop {
                    def: def.clone(),
                    span,
                    span_id,
                    params: None,
                    from: ParamsFrom::Request,
                    llm_calls: 0,
                    repairs: 0,
                    params_ms: 0.0,
                    eval_ms: 0.0,
                    fetched: None,
                });
            }
            None => unknown.push(name.clone()),
        }
    }
    if !unknown.is_empty() {
        let available = names(declared);
        return Err(ResolveError::kip(
            KipCode::AttributeUndefined,
            format!(
                "`{}` declares no logic propert{} {}",
                request.ot_id,
                if unknown.len() == 1 { "y" } else { "ies" },
                unknown.join(", ")
            ),
            if available.is_empty() {
                format!("`{}` declares no logic properties at all.", request.ot_id)
            } else {
                format!("Its logic properties are: {}.", available.join(", "))
            },
        )
        .with_data("unknown", unknown)
        .with_data("available", available));
    }
    Ok(props)
}
