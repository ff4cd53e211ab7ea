//! A tool's `ctx.log` messages also go to `tracing`, with the tool and server as fields.
//!
//! Alone in its test binary: its scoped subscriber must not race other tests for the
//! interest of the log call sites (a call site first hit under no subscriber on another
//! thread can be cached as uninteresting).

mod common;

use std::sync::{Arc, Mutex};

use common::logs::registry;
use serde_json::json;

/// Records the `tracing` events of the current thread: their level and fields.
struct Recorder(Arc<Mutex<Vec<String>>>);

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        struct Fields(String);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push_str(&format!(" {}={:?}", field.name(), value));
            }
        }
        let mut fields = Fields(format!(
            "{} {}",
            event.metadata().level(),
            event.metadata().target()
        ));
        event.record(&mut fields);
        self.0.lock().unwrap().push(fields.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn a_tools_log_also_goes_to_tracing() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(Recorder(events.clone()), || {
        runtime.block_on(async {
            // No client asked for anything: tracing still gets every message.
            registry()
                .call_tool_by_name("chatty", json!({}))
                .await
                .unwrap();
        })
    });
    let events = events.lock().unwrap();
    let tool_events: Vec<&String> = events
        .iter()
        .filter(|e| e.contains("mcp_registry::tool"))
        .collect();
    assert_eq!(tool_events.len(), 4, "{events:#?}");
    assert!(tool_events[0].starts_with("DEBUG"));
    assert!(tool_events[2].starts_with("WARN"));
    assert!(
        tool_events[2].contains("tool=\"chatty\""),
        "{}",
        tool_events[2]
    );
    assert!(tool_events[2].contains("server=\"logs\""));
    assert!(tool_events[2].contains("slow_ms"));
    assert!(tool_events[3].starts_with("ERROR"));
}
