//! `kip mcp`: the nexus as an MCP server over stdio, with the official Rust
//! SDK (`rmcp`).
//!
//! Tools: `execute_kip`, `execute_kip_readonly`, `get_knowledge_schema`,
//! `import_knowledge_bundle`, `record_trace`, `resolve_logic_properties` (whose failures
//! keep the seed's shape, `{error_code, message, missing?, trace_id}`, so
//! an agent can re-ask the user for what is missing) — their names, descriptions and argument
//! schemas come from `kip_api::tools`. Every result carries the answer as
//! structured content and as the same JSON in a text block; a KIP error is
//! a tool result with `isError: true` (so the model reads the code and the
//! hint and corrects itself), not a protocol error.
//!
//! Resources: the agent guide (`kip://docs/agent-guide`, how to use the
//! memory well), the KIP reference for LLMs (`kip://docs/syntax-reference`),
//! the live Primer (`kip://nexus/primer`, `DESCRIBE PRIMER` run at read
//! time) and the latest entries of the cognitive trace
//! (`kip://trace/recent`). Prompt: `kip_bootstrap`, the official KIP MCP
//! bridge's bootstrap (the guide and the reference, ready to inject).
//!
//! The cognitive trace (BRIEF §7) names the client by its `clientInfo.name`
//! (unless `--originator` says otherwise), marks it an agent (its writes
//! are flagged `Unverified`), and records the session's start and end as
//! SPACE `SpaceAcquire` / `SpaceRelease` entries. Tool `record_trace` lets
//! the agent write its THINK / SAY entries.
//!
//! Standard output carries the protocol and nothing else: logs go to
//! standard error through `tracing`.

use std::process::ExitCode;
use std::sync::Arc;

use kip_api::{
    Api, ApiError, ErrorCode, ExecuteRequest, ImportRequest, KipCode, Operation, TraceAddRequest,
    tools,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt as _};
use serde::Deserialize;
use serde_json::{Map, Value as Json, json};

const INSTRUCTIONS: &str = "This server is your long-term memory: a knowledge graph (the Cognitive Nexus) spoken to in KIP. Start every session with execute_kip_readonly {\"command\": \"DESCRIBE PRIMER\"} to learn who you are and what you know; ground names with SEARCH and DESCRIBE before querying; store new, confirmed knowledge with UPSERT through execute_kip. Read the resource kip://docs/syntax-reference for the syntax, the result shapes and how to recover from each error code.";

/// How often the chores look for work when there is none.
const CHORE_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs the MCP server on stdin/stdout until the client disconnects.
pub fn run(api: Api, read_only: bool) -> anyhow::Result<ExitCode> {
    let server = KipMcp {
        api: api.read_only(read_only),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        tracing::info!(
            "kip mcp: serving the nexus at {} over stdio ({})",
            server.api.path().display(),
            if read_only { "read-only" } else { "read-write" }
        );
        let api = server.api.clone();
        // The host's chores for as long as the session lasts, as `kip
        // serve` and the app run them: the scheduled backup, expired
        // idempotency keys forgotten, and the concepts writes left waiting
        // embedded for SEARCH by meaning (a read-only host embeds nothing).
        let _chores = api.start_chores(
            CHORE_POLL,
            |_, _, current| current,
            |message| tracing::warn!("{message}"),
        )?;
        let service = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
        let client = service
            .peer()
            .peer_info()
            .map(|info| info.client_info.name.clone());
        let who = originator(&api, client.as_deref());
        let session = api.open_session(
            Some(&who),
            "An MCP session opened the nexus.",
            "The MCP session ended.",
            |message| tracing::warn!("{message}"),
        );
        let reason = service.waiting().await?;
        drop(session);
        tracing::info!("kip mcp: session ended ({reason:?})");
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Clone, Debug)]
struct KipMcp {
    api: Api,
}

/// Who the trace names: `--originator`, else the client's
/// `clientInfo.name`, else the host's default (`mcp`).
fn originator(api: &Api, client: Option<&str>) -> String {
    if let Some(name) = crate::db::originator_override() {
        return name.to_owned();
    }
    client
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .unwrap_or(api.originator())
        .to_owned()
}

/// How many entries `kip://trace/recent` shows.
const RECENT_ENTRIES: usize = 50;

fn tool(def: tools::ToolDefinition) -> Tool {
    let read_only = def.read_only();
    let schema = match def.input_schema {
        Json::Object(map) => map,
        _ => Map::new(),
    };
    let mut annotations = ToolAnnotations::new()
        .read_only(read_only)
        .destructive(def.destructive)
        // A tool that only reads may be called again with no further effect.
        .idempotent(read_only)
        .open_world(false);
    annotations.title = Some(def.title.to_owned());
    Tool::new(def.name, def.description, Arc::new(schema))
        .with_title(def.title)
        .with_annotations(annotations)
}

/// A KIP response as a tool result. A response carrying an error (or a
/// batch stopped by one) is flagged so the model knows to correct itself.
fn kip_result(response: Json, batch: bool) -> CallToolResult {
    if kip_api::response_failed(&response, batch) {
        CallToolResult::structured_error(response)
    } else {
        CallToolResult::structured(response)
    }
}

fn error_result(e: &ApiError) -> CallToolResult {
    CallToolResult::structured_error(e.to_response())
}

fn arguments<T: for<'de> Deserialize<'de>>(
    tool: &str,
    args: Option<Map<String, Json>>,
) -> Result<T, ApiError> {
    serde_json::from_value(Json::Object(args.unwrap_or_default()))
        .map_err(|e| ApiError::bad_request(tool, e))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportArgs {
    yaml: Option<String>,
    path: Option<String>,
    file_name: Option<String>,
    dry_run: Option<bool>,
}

impl KipMcp {
    /// The API naming the session's client, as an agent.
    fn for_client(&self, context_peer: &rmcp::service::Peer<RoleServer>) -> KipMcp {
        let client = context_peer
            .peer_info()
            .map(|info| info.client_info.name.clone());
        KipMcp {
            api: self
                .api
                .clone()
                .with_originator(originator(&self.api, client.as_deref()))
                .as_agent(true),
        }
    }

    /// `execute_kip` / `execute_kip_readonly`: the request, with
    /// `execute_kip`'s own `idempotency_key` (BRIEF §5) taken out of it.
    async fn execute_tool(
        &self,
        name: &str,
        readonly: bool,
        args: Option<Map<String, Json>>,
    ) -> CallToolResult {
        let mut args = args.unwrap_or_default();
        let key = match args.remove("idempotency_key") {
            Some(Json::String(k)) => Some(k),
            None => None,
            Some(_) => {
                return error_result(&ApiError::bad_request(
                    name,
                    "`idempotency_key` must be a string",
                ));
            }
        };
        let request: ExecuteRequest = match arguments(name, Some(args)) {
            Ok(r) => r,
            Err(e) => return error_result(&e),
        };
        let batch = request.commands.is_some();
        self.blocking(move |api| {
            Ok(match (readonly, key) {
                // Reads are safe to repeat: the key is not needed.
                (true, _) => api.execute_readonly(request),
                (false, Some(key)) => api.execute_once(request, &key)?,
                (false, None) => api.execute(request),
            })
        })
        .await
        .map_or_else(|e| error_result(&e), |response| kip_result(response, batch))
    }

    async fn blocking(
        &self,
        f: impl FnOnce(&Api) -> Result<Json, ApiError> + Send + 'static,
    ) -> Result<Json, ApiError> {
        crate::runtime::blocking(self.api.clone(), f).await
    }

    async fn call(
        &self,
        name: &str,
        args: Option<Map<String, Json>>,
    ) -> Result<CallToolResult, McpError> {
        let Some(tool) = tools::named(name) else {
            let names: Vec<&str> = tools::all().iter().map(|t| t.name).collect();
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`; the tools are {}", names.join(", ")),
                None,
            ));
        };
        // The tools whose arguments are an operation's body but for a
        // few agent-facing differences (a bundle by path, the resolver's
        // seed-shaped errors, an agent writing as itself).
        let outcome = match tool.operation {
            Operation::Execute | Operation::ExecuteReadonly => {
                return Ok(self
                    .execute_tool(name, tool.operation == Operation::ExecuteReadonly, args)
                    .await);
            }
            Operation::Schema => {
                if let Err(e) = arguments::<Map<String, Json>>(name, args.clone()) {
                    return Ok(error_result(&e));
                }
                self.blocking(|api| api.knowledge_schema().and_then(|s| to_json(&s)))
                    .await
                    .map(CallToolResult::structured)
            }
            Operation::Import => {
                let args: ImportArgs = match arguments(name, args) {
                    Ok(a) => a,
                    Err(e) => return Ok(error_result(&e)),
                };
                let request = match import_request(args).await {
                    Ok(r) => r,
                    Err(e) => return Ok(error_result(&e)),
                };
                self.blocking(move |api| api.import(&request).and_then(|r| to_json(&r)))
                    .await
                    .map(|report| {
                        let imported =
                            report.get("status").and_then(Json::as_str) == Some("imported");
                        if imported {
                            CallToolResult::structured(report)
                        } else {
                            CallToolResult::structured_error(report)
                        }
                    })
            }
            Operation::ResolveLogicProperties => {
                let body = Json::Object(args.unwrap_or_default());
                let answer = crate::runtime::off_runtime(self.api.clone(), move |api| {
                    api.resolve_logic_properties_json(body)
                })
                .await;
                return Ok(match answer {
                    Ok(Ok(answer)) => CallToolResult::structured(answer),
                    Ok(Err(error)) => CallToolResult::structured_error(error),
                    Err(e) => error_result(&e),
                });
            }
            Operation::TraceAdd => {
                let mut request: TraceAddRequest = match arguments(name, args) {
                    Ok(r) => r,
                    Err(e) => return Ok(error_result(&e)),
                };
                // An agent writes as itself: the session's client.
                request.originator = None;
                self.blocking(move |api| api.call(Operation::TraceAdd, to_json(&request)?))
                    .await
                    .map(CallToolResult::structured)
            }
            other => self
                .blocking(move |api| api.call(other, Json::Object(args.unwrap_or_default())))
                .await
                .map(CallToolResult::structured),
        };
        Ok(outcome.unwrap_or_else(|e| error_result(&e)))
    }
}

/// The file contents to import: the `yaml` text, or the file at `path`.
async fn import_request(args: ImportArgs) -> Result<ImportRequest, ApiError> {
    match (args.yaml, args.path) {
        (Some(text), None) => Ok(ImportRequest {
            file_name: args.file_name.unwrap_or_else(|| "bundle.yaml".to_owned()),
            text,
            dry_run: args.dry_run,
        }),
        (None, Some(path)) => {
            let text = tokio::fs::read_to_string(&path).await.map_err(|e| {
                ApiError::new(
                    ErrorCode::Io,
                    format!("cannot read `{path}`: {e}"),
                    "Pass an absolute path to a file this server can read, or send the bundle's text in `yaml` instead.",
                )
                .with_data("path", path.clone())
            })?;
            let file_name = args.file_name.unwrap_or_else(|| {
                std::path::Path::new(&path)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or(path.clone())
            });
            Ok(ImportRequest {
                file_name,
                text,
                dry_run: args.dry_run,
            })
        }
        _ => Err(ApiError::new(
            ErrorCode::BadRequest,
            "import_knowledge_bundle needs exactly one of `yaml` and `path`",
            "Send {\"yaml\": \"- type: …\"} with the bundle's text, or {\"path\": \"/absolute/file.yaml\"}.",
        )),
    }
}

impl ServerHandler for KipMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(
            Implementation::new("kip-explorer", env!("CARGO_PKG_VERSION"))
                .with_title("KIP Explorer: the Cognitive Nexus"),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            tools::all().into_iter().map(tool).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.for_client(&context.peer)
            .call(&request.name, request.arguments)
            .await
            .map(CallToolResponse::from)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(tools::GUIDE_URI, "kip-agent-guide")
                .with_title("How to use your memory")
                .with_description("A session's steps (wake up with DESCRIBE PRIMER, ground names, recall, learn with provenance), search, the sleep cycle's maintenance (MERGE, bounded UPDATE sweeps, EXPECT VERSION), what is protected, how to recover from errors.")
                .with_mime_type("text/markdown")
                .with_size(tools::AGENT_GUIDE.len() as u64),
            Resource::new(tools::REFERENCE_URI, "kip-syntax-reference")
                .with_title("KIP syntax reference")
                .with_description("KIP commands, result shapes, error codes and how to recover from each. Read once per session before writing KIP.")
                .with_mime_type("text/markdown")
                .with_size(tools::KIP_REFERENCE.len() as u64),
            Resource::new(tools::PRIMER_URI, "cognitive-primer")
                .with_title("Cognitive Primer (live)")
                .with_description("The result of DESCRIBE PRIMER right now: who you are ($self) and a map of the domains, types and predicates in memory.")
                .with_mime_type("application/json"),
            Resource::new(tools::TRACE_URI, "trace-recent")
                .with_title("Cognitive trace (latest entries)")
                .with_description("The latest entries of the memory's trace, newest first, as JSON Lines with the seed's fields (originator, type, seq, message, tag, flags, id, at, data): who changed the memory, when and why.")
                .with_mime_type("application/jsonl"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        let contents = match uri.as_str() {
            tools::GUIDE_URI => ResourceContents::text(tools::AGENT_GUIDE, uri.clone())
                .with_mime_type("text/markdown"),
            tools::REFERENCE_URI => ResourceContents::text(tools::KIP_REFERENCE, uri.clone())
                .with_mime_type("text/markdown"),
            tools::PRIMER_URI => {
                let response = self
                    .blocking(|api| {
                        Ok(api.execute_readonly(ExecuteRequest::command("DESCRIBE PRIMER")))
                    })
                    .await
                    .unwrap_or_else(|e| e.to_response());
                let text = serde_json::to_string_pretty(&response).unwrap_or_default();
                ResourceContents::text(text, uri.clone()).with_mime_type("application/json")
            }
            tools::TRACE_URI => {
                let text = self
                    .blocking(|api| {
                        let page =
                            api.call(Operation::TraceList, json!({"limit": RECENT_ENTRIES}))?;
                        let lines: Vec<String> = page["entries"]
                            .as_array()
                            .map(|entries| entries.iter().map(Json::to_string).collect())
                            .unwrap_or_default();
                        Ok(Json::String(lines.join("\n")))
                    })
                    .await
                    .map(|t| t.as_str().unwrap_or_default().to_owned())
                    .unwrap_or_else(|e| e.to_response().to_string());
                ResourceContents::text(text, uri.clone()).with_mime_type("application/jsonl")
            }
            other => {
                return Err(McpError::resource_not_found(
                    format!("no resource `{other}`"),
                    Some(
                        json!({"uri": other, "resources": [tools::GUIDE_URI, tools::REFERENCE_URI, tools::PRIMER_URI, tools::TRACE_URI]}),
                    ),
                ));
            }
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let mut prompt = Prompt::new(
            tools::BOOTSTRAP_PROMPT,
            Some(
                "A system prompt, ready to inject, that teaches an agent to use this memory: the agent guide and the KIP syntax reference.",
            ),
            None,
        );
        prompt.title = Some("Bootstrap an agent on this memory".to_owned());
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != tools::BOOTSTRAP_PROMPT {
            return Err(McpError::invalid_params(
                format!(
                    "no prompt `{}`; the prompt is {}",
                    request.name,
                    tools::BOOTSTRAP_PROMPT
                ),
                None,
            ));
        }
        let mut result = GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            tools::bootstrap(),
        )]);
        result.description = Some("How to use your long-term memory (KIP).".to_owned());
        Ok(result.into())
    }
}

/// A typed answer as the JSON of a tool result.
fn to_json<T: serde::Serialize>(value: &T) -> Result<Json, ApiError> {
    serde_json::to_value(value).map_err(|e| {
        ApiError::new(
            ErrorCode::Kip(KipCode::InternalError),
            format!("the answer cannot be serialized: {e}"),
            "This is a bug in KIP Explorer; please report it with the request that caused it.",
        )
    })
}
