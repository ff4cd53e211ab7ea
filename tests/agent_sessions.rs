//! Session-scoped and process-wide registries.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_registry::Registry;
use mcp_registry::agent::{GlobalServers, SessionError, SessionRegistries};
use serde_json::json;

use crate::common;

use common::labelled_server as server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_sessions_update_only_their_own_registries() {
    let sessions = SessionRegistries::new();
    let ids: Vec<String> = (0..16).map(|i| format!("session-{i}")).collect();
    let mut tasks = Vec::new();
    for (i, id) in ids.iter().cloned().enumerate() {
        let sessions = sessions.clone();
        tasks.push(tokio::spawn(async move {
            let registry = sessions.get_or_insert_with(&id, Registry::new);
            for round in 0..20 {
                sessions
                    .update(&id, |r| {
                        r.register_server(server(&format!("s{i}-{round}"), &["own"]));
                        if round % 2 == 1 {
                            r.unregister_server(&format!("s{i}-{}", round - 1));
                        }
                    })
                    .unwrap();
                tokio::task::yield_now().await;
            }
            // The session calls its own tool; the others' tools are unknown to it.
            let own = format!("mcp__s{i}-19__own");
            let result = registry.call_tool_by_name(&own, json!({})).await.unwrap();
            assert_eq!(result.first_text(), Some(format!("s{i}-19/own").as_str()));
            let other = format!("mcp__s{}-19__own", (i + 1) % 16);
            assert!(registry.call_tool_by_name(&other, json!({})).await.is_err());
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(sessions.session_ids().len(), 16);
    for (i, id) in ids.iter().enumerate() {
        let names = sessions.get(id).unwrap().server_names();
        // Odd rounds removed the even round before them: 10 servers left, all this session's.
        assert_eq!(names.len(), 10, "{id}: {names:?}");
        assert!(
            names.iter().all(|n| n.starts_with(&format!("s{i}-"))),
            "{id}: {names:?}"
        );
    }
}

#[test]
fn updates_of_one_session_do_not_interleave() {
    let sessions = SessionRegistries::new();
    sessions.register("shared", Registry::new());
    let inserted = Arc::new(AtomicUsize::new(0));
    std::thread::scope(|scope| {
        for _ in 0..8 {
            let sessions = &sessions;
            let inserted = inserted.clone();
            scope.spawn(move || {
                for _ in 0..50 {
                    // Read-then-write: only atomic if updates of a session are serialized.
                    sessions
                        .update("shared", |r| {
                            if r.server("once").is_none() {
                                r.register_server(server("once", &["t"]));
                                inserted.fetch_add(1, Ordering::SeqCst);
                            }
                        })
                        .unwrap();
                }
            });
        }
    });
    assert_eq!(inserted.load(Ordering::SeqCst), 1);
}

#[test]
fn a_toggle_in_one_session_leaves_the_others_alone() {
    let shared = server("docs", &["search"]);
    let sessions = SessionRegistries::new();
    sessions.register("a", Registry::from_servers([shared.clone()]));
    sessions.register("b", Registry::from_servers([shared]));
    sessions
        .update("a", |r| r.toggle_server("docs", false))
        .unwrap()
        .unwrap();
    assert_eq!(sessions.get("a").unwrap().is_enabled("docs"), Some(false));
    assert_eq!(sessions.get("b").unwrap().is_enabled("docs"), Some(true));
}

#[test]
fn unregistered_and_replaced_sessions_refuse_updates() {
    let sessions = SessionRegistries::new();
    assert!(sessions.is_empty());
    let first = Registry::new();
    sessions.register("s", first.clone());
    let replaced = sessions.register("s", Registry::new()).unwrap();
    replaced.register_server(server("stale", &["t"]));
    // The replaced registry is no longer the session's.
    assert!(sessions.get("s").unwrap().server("stale").is_none());
    assert!(sessions.unregister("s").is_some());
    assert!(sessions.unregister("s").is_none());
    assert_eq!(
        sessions.update("s", |_| ()),
        Err(SessionError::UnknownSession("s".to_owned()))
    );
    // A closure may unregister its own session without deadlocking.
    sessions.register("t", Registry::new());
    sessions.update("t", |_| sessions.unregister("t")).unwrap();
    assert!(sessions.get("t").is_none());
    // get_or_insert_with builds only when absent.
    let built = AtomicUsize::new(0);
    for _ in 0..3 {
        sessions.get_or_insert_with("u", || {
            built.fetch_add(1, Ordering::SeqCst);
            Registry::new()
        });
    }
    assert_eq!(built.load(Ordering::SeqCst), 1);
    assert_eq!(sessions.len(), 1);
}

#[test]
fn global_servers_register_get_list_unregister_clear_from_many_threads() {
    // One test owns the process-wide set in this binary, so clear() disturbs no other test.
    std::thread::scope(|scope| {
        for t in 0..4 {
            scope.spawn(move || {
                for i in 0..25 {
                    GlobalServers::register(server(&format!("g{t}-{i}"), &["ping"]));
                }
            });
        }
    });
    let names = GlobalServers::names();
    assert_eq!(names.iter().filter(|n| n.starts_with('g')).count(), 100);
    assert!(names.windows(2).all(|w| w[0] < w[1]), "names are sorted");
    assert_eq!(GlobalServers::get("g2-7").unwrap().name(), "g2-7");
    assert!(GlobalServers::registry().server("g3-24").is_some());

    // A session seeded from the global set is a copy: changes do not flow back.
    let session = Registry::from_servers(GlobalServers::servers());
    session.unregister_server("g0-0");
    assert!(GlobalServers::get("g0-0").is_some());

    // Replacing returns the old server; unregistering returns it once.
    let old = GlobalServers::register(server("g0-0", &["pong"])).unwrap();
    assert_eq!(old.tool_names().collect::<Vec<_>>(), ["ping"]);
    assert!(GlobalServers::unregister("g0-0").is_some());
    assert!(GlobalServers::unregister("g0-0").is_none());

    // No server! in this test binary, so clear leaves nothing and restore brings nothing back.
    GlobalServers::clear();
    assert!(GlobalServers::names().is_empty());
    assert!(GlobalServers::restore_collected().is_empty());
}
