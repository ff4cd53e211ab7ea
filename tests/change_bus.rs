//! The change bus seam without Redis: two registries joined by an in-process `ChangeBus`
//! hear each other's list changes and resource updates, and a change received is not
//! published again.

use std::sync::{Arc, Mutex};

use mcp_registry::{ChangeBus, RemoteChanges, SharedChange};
use mcp_registry::{Registry, Server, Tool};
use serde_json::json;

/// One end of a pipe between two registries: what one publishes, the other applies.
#[derive(Debug, Default, Clone)]
struct End {
    /// Where this end's registry takes changes from the other.
    mine: Arc<Mutex<Option<RemoteChanges>>>,
    /// The other end's.
    theirs: Arc<Mutex<Option<RemoteChanges>>>,
    /// What this end published.
    published: Arc<Mutex<Vec<SharedChange>>>,
}

impl ChangeBus for End {
    fn publish(&self, change: SharedChange) {
        self.published.lock().unwrap().push(change.clone());
        if let Some(other) = &*self.theirs.lock().unwrap() {
            other.apply(change);
        }
    }

    fn attach(&self, changes: RemoteChanges) {
        *self.mine.lock().unwrap() = Some(changes);
    }
}

fn pipe() -> (End, End) {
    let a = End::default();
    let b = End {
        mine: a.theirs.clone(),
        theirs: a.mine.clone(),
        published: Arc::default(),
    };
    (a, b)
}

fn server(tools: &[&str]) -> Server {
    let tools = tools
        .iter()
        .map(|name| Tool::new(*name, "x", json!({"type": "object"}), |_| async { "ok" }).unwrap());
    Server::builder("s").tools(tools).build().unwrap()
}

#[test]
fn changes_cross_the_bus_once_and_do_not_come_back() {
    let (a_end, b_end) = pipe();
    let a = Registry::builder()
        .server(server(&["t"]))
        .change_bus(a_end.clone())
        .build();
    let b = Registry::builder()
        .server(server(&["t"]))
        .change_bus(b_end.clone())
        .build();
    let (seen_a, seen_b) = (a.subscribe(), b.subscribe());
    let (before_a, before_b) = (seen_a.borrow().generation, seen_b.borrow().generation);

    a.register_server(server(&["t", "u"]));
    assert!(
        seen_b.borrow().changed_since("s", before_b),
        "B heard A's change"
    );
    assert_eq!(seen_a.borrow().generation, before_a + 1);
    assert_eq!(seen_b.borrow().generation, before_b + 1);
    // B applied it without publishing it back.
    assert!(b_end.published.lock().unwrap().is_empty());
    assert_eq!(
        *a_end.published.lock().unwrap(),
        [SharedChange::Servers {
            servers: vec!["s".to_owned()]
        }]
    );

    b.notify_resource_updated("note://x");
    assert_eq!(
        b_end.published.lock().unwrap().last(),
        Some(&SharedChange::ResourceUpdated {
            uri: "note://x".to_owned()
        })
    );
    assert_eq!(a_end.published.lock().unwrap().len(), 1, "not echoed");
}

#[test]
fn a_gone_registry_is_reported_to_the_bus() {
    let (a_end, _b_end) = pipe();
    let a = Registry::builder().change_bus(a_end.clone()).build();
    let changes = a_end
        .mine
        .lock()
        .unwrap()
        .clone()
        .expect("attached at build");
    assert!(changes.resync());
    drop(a);
    assert!(!changes.apply(SharedChange::ResourceUpdated {
        uri: "note://x".to_owned()
    }));
}
