//! `#[mcp_server]`: tools, prompts and resources as methods of a struct that is their state,
//! one server per value.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_registry::{Json, Registry, State, ToolContext, mcp_server};
use serde_json::{Value, json};

#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<String>>,
    reads: AtomicU64,
}

struct Prefix(&'static str);

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Stats {
    count: u64,
    reads: u64,
}

#[mcp_server(name = "notes", version = "2.0.0", title = "Notes")]
impl Notes {
    /// Add a note.
    ///
    /// # Arguments
    /// * `text` - what to remember
    /// * `times` - how many copies; 1 when left out
    #[tool(idempotent = false)]
    async fn add(&self, text: String, times: Option<u32>) -> String {
        let mut notes = self.lock();
        for _ in 0..times.unwrap_or(1) {
            notes.push(text.clone());
        }
        format!("{} notes", notes.len())
    }

    /// How many notes, and reads.
    #[tool(read_only, name = "stats")]
    async fn statistics(&self, _ctx: ToolContext) -> Json<Stats> {
        Json(Stats {
            count: self.lock().len() as u64,
            reads: self.reads.load(Ordering::Relaxed),
        })
    }

    /// Another state beside the server's own.
    #[tool]
    async fn tagged(&self, prefix: State<Prefix>, index: usize) -> Result<String, String> {
        let notes = self.lock();
        let note = notes.get(index).ok_or_else(|| format!("no note {index}"))?;
        Ok(format!("{}{note}", prefix.0))
    }

    /// Every note.
    #[resource(uri = "notes://all", mime_type = "text/plain")]
    async fn all(&self) -> String {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.lock().join("\n")
    }

    /// One note.
    #[resource(template = "notes://{index}")]
    async fn one(&self, index: usize) -> Result<String, mcp_registry::ResourceError> {
        self.lock()
            .get(index)
            .cloned()
            .ok_or_else(|| mcp_registry::ResourceError::not_found(format!("no note {index}")))
    }

    /// Summarize the notes.
    ///
    /// # Arguments
    /// * `style` - how to summarize
    #[prompt]
    async fn summary(&self, style: Option<String>) -> String {
        let style = style.unwrap_or_else(|| "briefly".into());
        format!("Summarize {style}: {}", self.lock().join("; "))
    }

    /// An ordinary method: no item.
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// No `name`: the type's name in snake case.
struct NoteStore;

#[mcp_server]
impl NoteStore {
    /// Ping.
    #[tool]
    async fn ping(&self) -> &'static str {
        "pong"
    }
}

fn text(value: &mcp_registry::CallToolResult) -> &str {
    value.first_text().unwrap_or_default()
}

#[tokio::test]
async fn methods_share_the_value_they_are_called_on() {
    let notes = Arc::new(Notes::default());
    let registry = Registry::builder()
        .server(notes.clone().server())
        .extension(Prefix("> "))
        .build();
    let added = registry
        .call_tool_by_name("add", json!({"text": "milk", "times": 2}))
        .await
        .unwrap();
    assert_eq!(text(&added), "2 notes");
    // The host sees what the tools did through its own Arc.
    assert_eq!(notes.lock().len(), 2);
    let all = registry.read_resource("notes://all").await.unwrap();
    assert_eq!(all.contents[0].as_text(), Some("milk\nmilk"));
    let one = registry.read_resource("notes://1").await.unwrap();
    assert_eq!(one.contents[0].as_text(), Some("milk"));
    assert!(registry.read_resource("notes://7").await.is_err());
    let stats = registry
        .call_tool_by_name("stats", json!({}))
        .await
        .unwrap();
    assert_eq!(
        stats.structured_content,
        Some(json!({"count": 2, "reads": 1}))
    );
    let tagged = registry
        .call_tool_by_name("tagged", json!({"index": 0}))
        .await
        .unwrap();
    assert_eq!(text(&tagged), "> milk");
    let prompt = registry
        .get_prompt_by_name("summary", [("style", "in verse")])
        .await
        .unwrap();
    let rendered = serde_json::to_value(&prompt.messages[0]).unwrap();
    assert_eq!(
        rendered["content"]["text"],
        "Summarize in verse: milk; milk"
    );
}

#[tokio::test]
async fn each_value_is_a_server_of_its_own() {
    let first = Registry::builder()
        .server(Notes::default().into_server())
        .build();
    let second = Registry::builder()
        .server(Notes::default().into_server())
        .build();
    first
        .call_tool_by_name("add", json!({"text": "a"}))
        .await
        .unwrap();
    let count = |r: CallResult| r.structured_content.unwrap()["count"].clone();
    type CallResult = mcp_registry::CallToolResult;
    let stats = first.call_tool_by_name("stats", json!({})).await.unwrap();
    assert_eq!(count(stats), 1);
    let stats = second.call_tool_by_name("stats", json!({})).await.unwrap();
    assert_eq!(count(stats), 0);
}

#[test]
fn the_server_is_described_as_server_would_describe_it() {
    let server = Notes::default().into_server();
    assert_eq!(server.name(), "notes");
    assert_eq!(server.version(), "2.0.0");
    assert_eq!(
        server.tool_names().collect::<Vec<_>>(),
        ["add", "stats", "tagged"]
    );
    assert_eq!(server.prompt_names().collect::<Vec<_>>(), ["summary"]);
    assert_eq!(server.resources()[0].uri(), "notes://all");
    assert_eq!(
        server.resource_templates()[0].uri_template(),
        "notes://{index}"
    );
    let add = server.tool("add").unwrap().descriptor();
    assert_eq!(add.description.as_deref(), Some("Add a note."));
    let schema: &Value = &add.input_schema;
    assert_eq!(
        schema["properties"],
        json!({
            "text": {"type": "string", "description": "what to remember"},
            "times": {"type": ["integer", "null"], "minimum": 0, "maximum": u32::MAX,
                      "description": "how many copies; 1 when left out"}
        })
    );
    assert_eq!(schema["required"], json!(["text"]));
    let tagged = &server.tool("tagged").unwrap().descriptor().input_schema;
    assert_eq!(
        tagged["required"],
        json!(["index"]),
        "states are no arguments"
    );
    assert_eq!(NoteStore.into_server().name(), "note_store");
}

#[tokio::test]
async fn the_value_travels_with_the_server() {
    // Registered in a registry that has no state of its own, moved to another: the value
    // comes along (it is the server's, not the registry's).
    let server = Notes::default().into_server();
    let registry = Registry::new();
    registry.register_server(server.clone());
    registry
        .call_tool_by_name("add", json!({"text": "x"}))
        .await
        .unwrap();
    let other = Registry::builder().server(server).build();
    let stats = other.call_tool_by_name("stats", json!({})).await.unwrap();
    assert_eq!(stats.structured_content.unwrap()["count"], 1);
}

#[tokio::test]
async fn a_server_s_own_state_comes_between_the_call_s_and_the_registry_s() {
    // What #[mcp_server] relies on, open to any server.
    let tool = mcp_registry::Tool::builder("prefix")
        .typed(
            |ctx: ToolContext, _: serde_json::Map<String, Value>| async move {
                ctx.get::<Prefix>().map_or("none", |p| p.0).to_owned()
            },
        )
        .unwrap();
    let server = mcp_registry::Server::builder("s")
        .tool(tool)
        .extension(Prefix("server"))
        .build()
        .unwrap();
    let registry = Registry::builder()
        .server(server)
        .extension(Prefix("registry"))
        .build();
    let said = registry
        .call_tool_by_name("prefix", json!({}))
        .await
        .unwrap();
    assert_eq!(text(&said), "server");
    let said = registry
        .call_tool_by_name("prefix", json!({}))
        .extension(Prefix("call"))
        .await
        .unwrap();
    assert_eq!(text(&said), "call");
}
