//! A rolling restart under load: 50 clients call through HAProxy without a pause while each
//! replica in turn gets `SIGTERM` (it drains), exits, and starts again on its port; the next
//! one is restarted once the new process answers its readiness route.
//!
//! The clients, each with its own connection to the load balancer:
//! * [`STATELESS`] speak 2026-07-28 and alternate `whoami` (one round trip) and
//!   `confirm_order` (a multi round-trip request: the elicitation answered, the call
//!   retried, on whichever replica);
//! * [`LEGACY`] each hold a 2025-11-25 session (shared through Redis: any replica serves it)
//!   and alternate the same two calls;
//! * [`TASKS`], half 2026-07-28 and half legacy, call `slow_report` as a task running
//!   [`TASK_MS`] or more (longer than the drain of a replica that has nothing in flight) and
//!   follow each to its result through the load balancer.
//!
//! Besides, before each `SIGTERM` a task is started on the replica itself, so that its drain
//! has a task under way: its result is fetched at the end, through the load balancer.
//!
//! What must hold: no call fails; every task ends `completed` with its result (the drained
//! replica finished it, or another took it over); every client, legacy sessions included,
//! has a call answered after each restart; every replica exits `0` once drained. Nothing is
//! timed: every wait is bounded and generous (`WAIT`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_registry::client::{Client, ToolTask};
use mcp_registry::protocol::ProtocolVersion;
use serde_json::json;

use super::cluster::{Cluster, WAIT};
use super::peers::{self, Askers, Work};

/// Clients calling without a session, 2026-07-28.
pub const STATELESS: usize = 20;
/// Clients each in a legacy (2025-11-25) session.
pub const LEGACY: usize = 20;
/// Clients calling a slow tool as a task.
pub const TASKS: usize = 10;
/// The shortest task the task clients start (each adds up to a second).
pub const TASK_MS: u64 = 1500;
/// The task started on each replica just before its `SIGTERM`.
const PINNED_MS: u64 = 3000;

/// What kind of client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stateless,
    Legacy,
    Task { legacy: bool },
}

/// What the clients share with the scenario.
struct Shared {
    /// Restarts completed so far.
    epoch: AtomicUsize,
    /// Set to make the clients stop after their current call.
    stop: AtomicBool,
    /// Per client, one more than the epoch its last answered call started in (0: none yet).
    answered_in: Vec<AtomicUsize>,
    /// When the scenario began (the failures and the restarts say when they happened).
    began: std::time::Instant,
}

/// What one client did.
#[derive(Debug)]
struct Tally {
    kind: Kind,
    answered: usize,
    failures: Vec<String>,
}

/// The clients' kinds, in order: stateless, legacy, tasks.
fn kinds() -> Vec<Kind> {
    let mut kinds = vec![Kind::Stateless; STATELESS];
    kinds.extend(vec![Kind::Legacy; LEGACY]);
    kinds.extend((0..TASKS).map(|i| Kind::Task { legacy: i % 2 == 1 }));
    kinds
}

/// The rolling restart, with the counts printed.
pub async fn rolling_restart(cluster: &mut Cluster) {
    let kinds = kinds();
    let shared = Arc::new(Shared {
        epoch: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        answered_in: kinds.iter().map(|_| AtomicUsize::new(0)).collect(),
        began: std::time::Instant::now(),
    });
    let mut clients = Vec::new();
    for (n, kind) in kinds.iter().enumerate() {
        let client = connect(&cluster.url(), *kind).await;
        clients.push(tokio::spawn(calls(
            client.0,
            client.1,
            *kind,
            n,
            shared.clone(),
        )));
    }
    every_client_answered(cluster, &shared, 0).await;
    let mut pinned = Vec::new();
    for i in 0..cluster.replicas.len() {
        pinned.push((i, task_on(&cluster.replica_url(i)).await));
        let name = cluster.replicas[i].name.clone();
        eprintln!(
            "rolling restart: {name} SIGTERM at {:?}",
            shared.began.elapsed()
        );
        let exited = cluster.restart_replica(i).await;
        assert!(
            exited.success(),
            "{name} exited with {exited} after draining (logs: {})",
            cluster.logs().display()
        );
        let epoch = shared.epoch.fetch_add(1, Ordering::SeqCst) + 1;
        eprintln!(
            "rolling restart: {name} drained, exited and is ready again at {:?}",
            shared.began.elapsed()
        );
        every_client_answered(cluster, &shared, epoch).await;
    }
    shared.stop.store(true, Ordering::SeqCst);
    let mut tallies = Vec::new();
    for client in clients {
        let tally = tokio::time::timeout(WAIT, client)
            .await
            .expect("every client stops within the bound")
            .expect("a client's loop ends well");
        tallies.push(tally);
    }
    report(cluster, &tallies);
    pinned_tasks_finished(cluster, &pinned).await;
}

/// A client of `kind` through `url`, and the elicitations it was asked.
async fn connect(url: &str, kind: Kind) -> (Client, Askers) {
    let askers = Askers::default();
    let legacy = matches!(kind, Kind::Legacy | Kind::Task { legacy: true });
    let version = legacy.then_some(ProtocolVersion::LATEST_LEGACY);
    (
        peers::connect_asking(url, askers.clone(), version).await,
        askers,
    )
}

/// Client `n`'s calls, until told to stop.
async fn calls(client: Client, askers: Askers, kind: Kind, n: usize, shared: Arc<Shared>) -> Tally {
    let mut tally = Tally {
        kind,
        answered: 0,
        failures: Vec::new(),
    };
    let mut i = 0;
    while !shared.stop.load(Ordering::SeqCst) {
        let epoch = shared.epoch.load(Ordering::SeqCst);
        let at = shared.began.elapsed();
        let outcome = match kind {
            Kind::Task { .. } => task_call(&client, TASK_MS + (i as u64 * 97) % 1000).await,
            Kind::Stateless | Kind::Legacy => {
                let work = if i % 2 == 0 {
                    Work::Whoami
                } else {
                    Work::Order
                };
                peers::one_call(&client, &askers, work, i).await.map(|_| ())
            }
        };
        match outcome {
            Ok(()) => {
                tally.answered += 1;
                shared.answered_in[n].fetch_max(epoch + 1, Ordering::SeqCst);
            }
            Err(e) => tally.failures.push(format!(
                "{kind:?} client {n}, call {i} (from {at:?} to {:?}): {e}",
                shared.began.elapsed()
            )),
        }
        i += 1;
    }
    client.close().await;
    tally
}

/// `slow_report` of `ms` as a task, followed to its result.
async fn task_call(client: &Client, ms: u64) -> Result<(), String> {
    let started = client
        .call_tool_as_task("slow_report", json!({ "ms": ms }))
        .await
        .map_err(|e| format!("slow_report: {e}"))?;
    let result = match started {
        ToolTask::Finished(result) => result,
        ToolTask::Started(task) => tokio::time::timeout(WAIT, task.result())
            .await
            .map_err(|_| format!("task {}: no result within {WAIT:?}", task.id()))?
            .map_err(|e| format!("task {}: {e}", task.id()))?,
    };
    let text = result.first_text().unwrap_or_default();
    if result.is_error == Some(true) || !text.starts_with(&format!("report of {ms} ms by r")) {
        return Err(format!("slow_report: {text:?}"));
    }
    Ok(())
}

/// Until every client has had a call answered that started after `epoch` restarts (a
/// bounded wait).
async fn every_client_answered(cluster: &Cluster, shared: &Shared, epoch: usize) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let waiting: Vec<usize> = (0..shared.answered_in.len())
            .filter(|&n| shared.answered_in[n].load(Ordering::SeqCst) <= epoch)
            .collect();
        if waiting.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "after {epoch} restarts, clients {waiting:?} had no call answered within {WAIT:?} (logs: {})",
            cluster.logs().display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `slow_report` task of [`PINNED_MS`] started on the replica at `url` itself; its id.
async fn task_on(url: &str) -> String {
    let client = peers::connect(url).await;
    let started = client
        .call_tool_as_task("slow_report", json!({ "ms": PINNED_MS }))
        .await
        .expect("slow_report starts");
    let ToolTask::Started(task) = started else {
        panic!("a {PINNED_MS} ms report becomes a task");
    };
    let id = task.id().to_owned();
    client.close().await;
    id
}

/// The tasks started on each replica before its restart: each completed there, with its
/// result, read through the load balancer.
async fn pinned_tasks_finished(cluster: &Cluster, pinned: &[(usize, String)]) {
    let client = peers::connect(&cluster.url()).await;
    for (i, id) in pinned {
        let result = tokio::time::timeout(WAIT, client.task(id).result())
            .await
            .expect("the task's result answers within the bound")
            .unwrap_or_else(|e| panic!("the task on {} before its restart: {e}", i + 1));
        let by = &cluster.replicas[*i].name;
        assert_eq!(
            result.first_text(),
            Some(&*format!("report of {PINNED_MS} ms by {by}")),
            "the task {by} ran when it was told to stop"
        );
    }
    client.close().await;
}

/// Prints the counts, and fails on any failed call.
fn report(cluster: &Cluster, tallies: &[Tally]) {
    let count = |f: &dyn Fn(&Kind) -> bool| -> usize {
        tallies
            .iter()
            .filter(|t| f(&t.kind))
            .map(|t| t.answered)
            .sum()
    };
    let failures: Vec<&String> = tallies.iter().flat_map(|t| &t.failures).collect();
    eprintln!(
        "rolling restart: {} clients; answered: {} stateless, {} in legacy sessions, {} tasks; {} failed",
        tallies.len(),
        count(&|k| *k == Kind::Stateless),
        count(&|k| *k == Kind::Legacy),
        count(&|k| matches!(k, Kind::Task { .. })),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} calls failed during the rolling restart: {failures:#?} (logs: {})",
        failures.len(),
        cluster.logs().display()
    );
}
