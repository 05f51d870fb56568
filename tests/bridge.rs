//! The official KIP MCP bridge's path (BRIEF §5, `specs/kip-v1.0-rc11/
//! mcp-bridge/README.md`): an MCP client talks to the bridge, which posts
//! `{method, params}` to one HTTP endpoint — here `kip serve`'s `POST /kip`.
//! The bridge itself (`@ldclabs/kip-mcp-server`, Node) is not part of this
//! repository, so the test runs a bridge-shaped MCP server of the same two
//! tools, which forwards each call unchanged, between a real MCP client
//! (the official Rust SDK's) and a real `kip serve`.

use crate::common;

use std::sync::Arc;

use common::{Server, http};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value as Json, json};

/// The bridge's shape: `execute_kip` and `list_logs`, each posted as
/// `{"method": <tool>, "params": <arguments>}` to the backend.
#[derive(Clone)]
struct Bridge {
    port: u16,
}

impl ServerHandler for Bridge {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("bridge-shaped", "0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let object = |properties: Json| -> Arc<Map<String, Json>> {
            match json!({"type": "object", "properties": properties}) {
                Json::Object(m) => Arc::new(m),
                _ => Arc::default(),
            }
        };
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "execute_kip",
                "Execute KIP commands.",
                object(
                    json!({"command": {"type": "string"}, "commands": {"type": "array"}, "parameters": {"type": "object"}, "dry_run": {"type": "boolean"}}),
                ),
            ),
            Tool::new(
                "list_logs",
                "List backend log entries.",
                object(json!({"cursor": {"type": "string"}, "limit": {"type": "integer"}})),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let body = json!({
            "method": request.name,
            "params": Json::Object(request.arguments.unwrap_or_default()),
        });
        let port = self.port;
        let (status, answer) =
            tokio::task::spawn_blocking(move || http(port, "POST", "/kip", &[], Some(&body)))
                .await
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let result = if status == 200 && answer.get("error").is_none() {
            CallToolResult::structured(answer)
        } else {
            CallToolResult::structured_error(answer)
        };
        Ok(result.into())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_reaches_kip_serve_through_a_bridge_shaped_server() {
    let db = tempfile::tempdir().expect("temp dir");
    let server = Server::start(db.path(), &["--addr", "127.0.0.1:0"]);
    let (to_bridge, to_client) = tokio::io::duplex(1 << 16);
    let bridge = Bridge { port: server.port };
    let bridge = tokio::spawn(async move {
        let running = bridge.serve(to_bridge).await.expect("the bridge serves");
        let _ = running.waiting().await;
    });
    let client = ().serve(to_client).await.expect("the client connects");

    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["execute_kip", "list_logs"]);

    let call = |tool: &'static str, arguments: Json| {
        let arguments = match arguments {
            Json::Object(m) => m,
            _ => Map::new(),
        };
        client.call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
    };
    for name in ["Ann", "Bo"] {
        let r = call(
            "execute_kip",
            json!({"command": "UPSERT { CONCEPT ?p { {type: \"Person\", name: :name} SET ATTRIBUTES { person_class: \"Human\" } } }", "parameters": {"name": name}}),
        )
        .await
        .expect("execute_kip");
        assert_ne!(r.is_error, Some(true), "{r:?}");
    }
    let found = call(
        "execute_kip",
        json!({"command": "FIND(?p.name) WHERE { ?p {type: \"Person\"} } ORDER BY ?p.name"}),
    )
    .await
    .expect("execute_kip");
    let found = found.structured_content.expect("structured");
    assert!(
        found["result"]
            .as_array()
            .is_some_and(|names| names.contains(&json!("Ann")) && names.contains(&json!("Bo"))),
        "{found}"
    );

    // list_logs, page by page, oldest first: the two writes are there, in order.
    let mut messages = Vec::new();
    let mut cursor: Option<Json> = None;
    loop {
        let mut args = json!({"limit": 3});
        if let Some(c) = &cursor {
            args["cursor"] = c.clone();
        }
        let page = call("list_logs", args).await.expect("list_logs");
        assert_ne!(page.is_error, Some(true), "{page:?}");
        let page = page.structured_content.expect("structured");
        for e in page["result"].as_array().expect("entries") {
            messages.push(e["message"].as_str().unwrap_or_default().to_owned());
        }
        match page.get("next_cursor") {
            Some(c) => cursor = Some(c.clone()),
            None => break,
        }
    }
    let upserts: Vec<&String> = messages
        .iter()
        .filter(|m| m.starts_with("UPSERT"))
        .collect();
    assert_eq!(upserts.len(), 2, "{messages:#?}");

    // A backend error reaches the client as an error result with KIP's shape.
    let bad = call("execute_kip", json!({"command": "FIDN(?x)"}))
        .await
        .expect("execute_kip");
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(
        bad.structured_content.expect("structured")["error"]["code"],
        "KIP_1001"
    );

    client.cancel().await.expect("close the session");
    bridge.await.expect("the bridge ends");
}
