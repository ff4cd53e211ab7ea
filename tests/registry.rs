//! Registry behaviour: management operations, lookup, and every way a call can end.

use crate::common;

use std::future::IntoFuture as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{hanging_tool, math_server, small_server};
use mcp_registry::{
    CallError, CallOptions, CancellationToken, Registry, RegistryError, Server, Tool,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

#[tokio::test]
async fn calls_a_typed_tool_and_returns_structured_content() {
    let registry = Registry::from_servers([math_server()]);
    let result = registry
        .call_tool_by_name("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"value": 5})));
    assert_eq!(result.first_text(), Some(r#"{"value":5}"#));
    assert!(!result.is_error());
    // Option parameter left out, and given as explicit null.
    let r = registry
        .call_tool_by_name("add", json!({"a": 2}))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"value": 2})));
    let r = registry
        .call_tool_by_name("add", json!({"a": 2, "b": null}))
        .await
        .unwrap();
    assert_eq!(r.structured_content, Some(json!({"value": 2})));
}

#[tokio::test]
async fn qualified_names_reach_the_named_server() {
    let registry = Registry::from_servers([
        small_server("one", "hello", "from one"),
        small_server("two", "hello", "from two"),
    ]);
    let r = registry
        .call_tool_by_name("mcp__two__hello", json!({}))
        .await
        .unwrap();
    assert_eq!(r.first_text(), Some("from two"));
    let err = registry
        .call_tool_by_name("hello", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        CallError::AmbiguousTool {
            name: "hello".into(),
            servers: vec!["one".into(), "two".into()]
        }
    );
    assert!(err.to_string().contains("\"one\"") && err.to_string().contains("\"two\""));
    // Disabling one makes the plain name unique again.
    registry.toggle_server("one", false).unwrap();
    let r = registry
        .call_tool_by_name("hello", json!({}))
        .await
        .unwrap();
    assert_eq!(r.first_text(), Some("from two"));
    let err = registry
        .call_tool_by_name("mcp__nope__hello", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::UnknownServer { ref server, .. } if server == "nope"),
        "{err}"
    );
}

#[tokio::test]
async fn each_failure_is_told_apart() {
    let registry = Registry::from_servers([math_server()]);
    let unknown = registry
        .call_tool_by_name("nope", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        unknown,
        CallError::UnknownTool {
            name: "nope".into()
        }
    );

    invalid_arguments_name_the_field(&registry).await;

    let failed = registry
        .call_tool_by_name("divide", json!({"a": 1, "b": 0}))
        .await
        .unwrap_err();
    assert_eq!(
        failed,
        CallError::ToolFailed {
            tool: "divide".into(),
            message: "division by zero".into()
        }
    );
    assert_eq!(
        failed.into_call_tool_result().first_text(),
        Some("division by zero")
    );

    let panicked = registry
        .call_tool_by_name("boom", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        panicked,
        CallError::Panicked {
            tool: "boom".into(),
            message: "kaboom".into()
        }
    );
    // The registry is fully usable after a panic.
    let ok = registry
        .call_tool_by_name("add", json!({"a": 1}))
        .await
        .unwrap();
    assert_eq!(ok.structured_content, Some(json!({"value": 1})));

    registry.toggle_server("math", false).unwrap();
    let disabled = registry
        .call_tool_by_name("add", json!({"a": 1}))
        .await
        .unwrap_err();
    assert_eq!(
        disabled,
        CallError::ServerDisabled {
            server: "math".into(),
            tool: "add".into()
        }
    );
}

/// Arguments a tool cannot read are `InvalidArguments` naming the tool and the field.
async fn invalid_arguments_name_the_field(registry: &Registry) {
    let invalid = registry
        .call_tool_by_name("add", json!({"a": "two"}))
        .await
        .unwrap_err();
    match &invalid {
        CallError::InvalidArguments { tool, message } => {
            assert_eq!(tool, "add");
            assert!(
                message.contains("`a`"),
                "message names the field: {message}"
            );
            assert!(message.contains("invalid type"), "{message}");
        }
        other => panic!("expected InvalidArguments, got {other:?}"),
    }
    // Missing fields and wrong types, typed and raw, name the field.
    for (tool, args, says) in [
        ("add", json!({}), "missing required field `a`"),
        ("echo", json!({}), "missing required field `text`"),
        (
            "echo",
            json!({"text": 5}),
            "field `text`: expected string, got an integer",
        ),
    ] {
        let err = registry.call_tool_by_name(tool, args).await.unwrap_err();
        assert!(err.to_string().contains(says), "{tool}: {err}");
    }
    let not_object = registry
        .call_tool_by_name("add", json!([1, 2]))
        .await
        .unwrap_err();
    assert!(
        matches!(not_object, CallError::InvalidArguments { .. }),
        "{not_object}"
    );
}

fn hanging_server(dropped: Arc<AtomicBool>) -> Server {
    Server::new("slow", None, [hanging_tool(dropped)]).unwrap()
}

#[tokio::test(start_paused = true)]
async fn timeouts_drop_the_future_per_registry_and_per_call() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = Registry::builder()
        .default_timeout(Duration::from_secs(2))
        .server(hanging_server(dropped.clone()))
        .server(math_server())
        .build();
    let err = registry
        .call_tool_by_name("hang", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        CallError::Timeout {
            tool: "hang".into(),
            limit: Duration::from_secs(2)
        }
    );
    assert!(err.to_string().contains("\"hang\"") && err.to_string().contains("2s"));
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future was dropped"
    );

    let err = registry
        .call_tool_by_name("sleep", json!({"ms": 500}))
        .options(CallOptions::new().timeout(Duration::from_millis(100)))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Timeout { limit, .. } if limit == Duration::from_millis(100)));
    // A per-call limit can also lift the registry's.
    let ok = registry
        .call_tool_by_name("sleep", json!({"ms": 5000}))
        .options(CallOptions::new().without_timeout())
        .await
        .unwrap();
    assert_eq!(ok.first_text(), Some("sleep slept 5000"));
}

#[tokio::test(start_paused = true)]
async fn default_timeout_is_thirty_seconds() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = Registry::from_servers([hanging_server(dropped)]);
    let err = registry
        .call_tool_by_name("hang", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Timeout { limit, .. } if limit == Duration::from_secs(30)));
}

#[tokio::test]
async fn cancellation_drops_the_future_even_if_the_tool_never_looks() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = Registry::from_servers([hanging_server(dropped.clone())]);
    let token = CancellationToken::new();
    let call = registry
        .call_tool_by_name("hang", json!({}))
        .options(CallOptions::new().cancellation(token.clone()));
    let canceller = async {
        tokio::task::yield_now().await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(call, canceller);
    assert_eq!(
        result.unwrap_err(),
        CallError::Cancelled {
            tool: "hang".into()
        }
    );
    assert!(dropped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn management_operations() {
    let registry = Registry::new();
    assert!(registry.server_names().is_empty());
    assert!(
        registry
            .register_server(small_server("b", "t1", "b1"))
            .is_none()
    );
    registry.register_server(small_server("a", "t2", "a2"));
    assert_eq!(registry.server_names(), ["a", "b"]);

    // Same name replaces, and the replaced server is returned; its enabled flag stays.
    registry.toggle_server("b", false).unwrap();
    let old = registry
        .register_server(small_server("b", "t3", "b3"))
        .unwrap();
    assert_eq!(old.tool_names().collect::<Vec<_>>(), ["t1"]);
    let status = registry.server_status();
    assert_eq!(status[1].name, "b");
    assert!(!status[1].enabled);
    assert_eq!(status[1].tool_names, ["t3"]);
    assert_eq!(status[1].tool_count, 1);
    assert_eq!(status[1].version, "1.0.0");

    assert_eq!(
        registry.toggle_server("zzz", true),
        Err(RegistryError::UnknownServer("zzz".into()))
    );
    assert!(
        registry.unregister_server("zzz").is_none(),
        "unregistering an absent server is a no-op"
    );

    // reconnect re-enables.
    registry.reconnect_server("b").unwrap();
    assert_eq!(registry.is_enabled("b"), Some(true));
    assert!(registry.reconnect_server("zzz").is_err());

    // set_servers keeps the enabled flag of servers that stay; new ones start enabled.
    registry.toggle_server("a", false).unwrap();
    registry.set_servers([small_server("a", "t4", "a4"), small_server("c", "t5", "c5")]);
    assert_eq!(registry.server_names(), ["a", "c"]);
    assert_eq!(registry.is_enabled("a"), Some(false));
    assert_eq!(registry.is_enabled("c"), Some(true));

    let defs = registry.all_tool_definitions();
    assert_eq!(defs.len(), 1, "only enabled servers' tools");
    assert_eq!(defs[0].qualified_name, "mcp__c__t5");

    assert!(registry.unregister_server("c").is_some());
    assert!(registry.call_tool_by_name("t5", json!({})).await.is_err());
}

#[tokio::test]
async fn clones_share_state_and_changes_are_published() {
    let registry = Registry::new();
    let clone = registry.clone();
    let mut changes = registry.subscribe();
    clone.register_server(small_server("x", "t", "x"));
    changes.changed().await.unwrap();
    let change = changes.borrow_and_update().clone();
    assert_eq!(change.generation, 1);
    assert_eq!(change.servers, ["x"]);
    assert_eq!(registry.server_names(), ["x"]);
    // A toggle to the state it already has is not a change.
    registry.toggle_server("x", true).unwrap();
    assert!(!changes.has_changed().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toggles_do_not_disturb_running_calls() {
    // The tool says when it has started and finishes only when released, so the toggle and
    // the unregistration happen while the call is known to be running (no sleep decides it).
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let gate = {
        let (started, release) = (started.clone(), release.clone());
        Tool::new(
            "gate",
            "Waits to be released",
            json!({"type": "object"}),
            move |_: Value| {
                let (started, release) = (started.clone(), release.clone());
                async move {
                    started.notify_one();
                    release.notified().await;
                    "released"
                }
            },
        )
        .unwrap()
    };
    let registry = Registry::from_servers([Server::new("math", None, [gate]).unwrap()]);
    let running = {
        let r = registry.clone();
        tokio::spawn(async move { r.call_tool_by_name("gate", json!({})).await })
    };
    started.notified().await;
    registry.toggle_server("math", false).unwrap();
    registry.unregister_server("math");
    release.notify_one();
    let result = running
        .await
        .unwrap()
        .expect("a call that started before the toggle finishes");
    assert_eq!(result.first_text(), Some("released"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_readers_and_writers() {
    let registry = Registry::from_servers([math_server()]);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let r = registry.clone();
        tasks.push(tokio::spawn(async move {
            for j in 0..200 {
                if i == 0 {
                    r.register_server(small_server(&format!("s{}", j % 5), "t", "x"));
                } else {
                    let res = r.call_tool_by_name("add", json!({"a": j})).await.unwrap();
                    assert_eq!(res.structured_content, Some(json!({"value": j})));
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(registry.server_names().len(), 6);
}

#[test]
fn tool_and_server_construction_errors() {
    let bad = Tool::new("get weather", "x", json!({"type": "object"}), |_| async {
        ""
    })
    .unwrap_err();
    assert!(
        bad.to_string().contains("\"get weather\"") && bad.to_string().contains("' '"),
        "{bad}"
    );
    let long = "a".repeat(129);
    let err = Tool::new(long.as_str(), "x", json!({"type": "object"}), |_| async {
        ""
    })
    .unwrap_err();
    assert!(err.to_string().contains("129 characters"), "{err}");
    let err = Tool::new("x", "x", json!({"type": "string"}), |_| async { "" }).unwrap_err();
    assert!(err.to_string().contains("\"type\": \"object\""), "{err}");
    let err = Tool::builder("n")
        .typed(|x: i64| async move { x.to_string() })
        .unwrap_err();
    assert!(err.to_string().contains("object schema"), "{err}");

    let t = || Tool::new("same", "x", json!({"type": "object"}), |_| async { "" }).unwrap();
    let err = Server::new("dup", None, [t(), t()]).unwrap_err();
    assert!(
        err.to_string().contains("two tools named \"same\""),
        "{err}"
    );
    let err = Server::new("a__b", None, []).unwrap_err();
    assert!(err.to_string().contains("\"a__b\""), "{err}");
}

#[test]
fn calls_without_a_tokio_runtime_still_work() {
    let registry = Registry::from_servers([math_server()]);
    let result = futures_executor_block_on(registry.call_tool_by_name("add", json!({"a": 4})));
    assert_eq!(
        result.unwrap().structured_content,
        Some(json!({"value": 4}))
    );
}

/// A tool that waits once (returns `Pending` a first time), then answers.
fn yielding_server() -> Server {
    struct YieldOnce(bool);
    impl std::future::Future for YieldOnce {
        type Output = ();
        fn poll(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<()> {
            if std::mem::replace(&mut self.0, true) {
                return std::task::Poll::Ready(());
            }
            cx.waker().wake_by_ref();
            std::task::Poll::Pending
        }
    }
    let tool = Tool::new(
        "wait_once",
        "Waits once",
        json!({"type": "object"}),
        |_| async {
            YieldOnce(false).await;
            "resumed"
        },
    )
    .unwrap();
    Server::new("waiting", None, [tool]).unwrap()
}

#[test]
fn a_limited_call_that_waits_outside_a_runtime_fails_instead_of_running_unlimited() {
    let dropped = Arc::new(AtomicBool::new(false));
    let registry = Registry::from_servers([hanging_server(dropped.clone()), yielding_server()]);
    let err = futures_executor_block_on(registry.call_tool_by_name("hang", json!({}))).unwrap_err();
    assert_eq!(
        err,
        CallError::NoTimer {
            tool: "hang".into(),
            limit: Duration::from_secs(30)
        }
    );
    assert!(err.to_string().contains("outside a Tokio runtime"), "{err}");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the handler's future was dropped"
    );
    let limited = CallOptions::new().timeout(Duration::from_secs(1));
    let err = futures_executor_block_on(
        registry
            .call_tool_by_name("wait_once", json!({}))
            .options(limited),
    )
    .unwrap_err();
    assert!(matches!(err, CallError::NoTimer { limit, .. } if limit == Duration::from_secs(1)));

    // Without a limit, any executor runs calls that wait: per call, or for the registry.
    let ok = futures_executor_block_on(
        registry
            .call_tool_by_name("wait_once", json!({}))
            .without_timeout(),
    )
    .unwrap();
    assert_eq!(ok.first_text(), Some("resumed"));
    let unlimited = Registry::builder()
        .without_default_timeout()
        .server(yielding_server())
        .build();
    let ok =
        futures_executor_block_on(unlimited.call_tool_by_name("wait_once", json!({}))).unwrap();
    assert_eq!(ok.first_text(), Some("resumed"));
}

#[test]
fn a_runtime_without_time_cannot_keep_a_limit_either() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let registry = Registry::from_servers([yielding_server()]);
    let err = runtime
        .block_on(
            registry
                .call_tool_by_name("wait_once", json!({}))
                .into_future(),
        )
        .unwrap_err();
    assert!(matches!(err, CallError::NoTimer { .. }), "{err}");
    let ok = runtime
        .block_on(
            registry
                .call_tool_by_name("wait_once", json!({}))
                .without_timeout()
                .into_future(),
        )
        .unwrap();
    assert_eq!(ok.first_text(), Some("resumed"));
}

/// A minimal executor, so the test runs outside any Tokio runtime.
fn futures_executor_block_on<F: std::future::IntoFuture>(fut: F) -> F::Output {
    use std::task::{Context, Poll, Waker};
    let mut fut = std::pin::pin!(fut.into_future());
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// A `typed` tool (started without a context) keeps its time limit and its cancellation.
#[tokio::test(start_paused = true)]
async fn a_typed_tool_started_without_a_context_is_still_timed_and_cancelled() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Nap {
        ms: u64,
    }
    let nap = Tool::builder("nap")
        .typed(|nap: Nap| async move {
            tokio::time::sleep(Duration::from_millis(nap.ms)).await;
            "rested"
        })
        .unwrap();
    let registry = Registry::builder()
        .default_timeout(Duration::from_secs(1))
        .server(Server::new("naps", None, [nap]).unwrap())
        .build();
    let err = registry
        .call_tool_by_name("nap", json!({"ms": 5000}))
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::Timeout { limit, .. } if limit == Duration::from_secs(1)));
    let token = CancellationToken::new();
    let call = registry
        .call_tool_by_name("nap", json!({"ms": 500}))
        .options(CallOptions::new().cancellation(token.clone()));
    let (result, ()) = tokio::join!(call, async { token.cancel() });
    assert_eq!(
        result.unwrap_err(),
        CallError::Cancelled { tool: "nap".into() }
    );
    let done = registry
        .call_tool_by_name("nap", json!({"ms": 10}))
        .await
        .unwrap();
    assert_eq!(done.first_text(), Some("rested"));
}
