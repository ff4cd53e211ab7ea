//! Three replicas of examples/replica behind a real HAProxy (round-robin, no stickiness,
//! tests/e2e/replicas/haproxy.cfg) and a real `redis-server`, on loopback, driven by this
//! crate's client and by the Python SDK's:
//!
//! * 2026-07-28 calls spread over every replica ([`spread`]);
//! * a multi round-trip request whose retry lands on another replica ([`retry_elsewhere`]);
//! * a request-state key rotated on every replica while such requests are in flight, with no
//!   failure ([`rotation`]);
//! * each replica restarted in turn (`SIGTERM`: it drains) under 50 clients' calls, with no
//!   failure ([`rolling::rolling_restart`]);
//! * Redis restarted mid-run: stateless calls never fail, the tool that needs Redis fails
//!   clearly while it is down and works once it is back ([`redis_restart`]).
//!
//! Each scenario is a function of a cluster and a client, so more can be added (tasks across
//! replicas, a replica killed mid-task, list changes across replicas, legacy sessions across
//! replicas). The Python SDK's runs are ignored by `cargo test` (they need a venv with
//! `mcp` >= 2) and run by .ci/e2e.sh:
//! `MCP_E2E_PYTHON=<venv python> cargo test --all-features --test replicas -- --ignored
//! replicas_lb::`.
//! Without haproxy or redis-server the tests skip, except under CI (`CI` set), where they
//! fail. No assertion depends on timing: every wait is bounded and generous.

#[path = "replicas_lb/cluster.rs"]
mod cluster;
#[path = "replicas_lb/peers.rs"]
mod peers;
#[path = "replicas_lb/rolling.rs"]
mod rolling;

use std::time::Duration;

use cluster::{Cluster, HAPROXY_CFG, TASK_LEASE, WAIT, key};
use mcp_registry::client::ServerNotification;
use mcp_registry::client::ToolTask;
use mcp_registry::protocol::{ProtocolVersion, SubscriptionFilter, TaskStatus};
use peers::{Peer, Report, Work};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

/// The keys the cluster starts with: one.
fn first_keys() -> String {
    key(11)
}

fn assert_clean(what: &str, report: &Report, cluster: &Cluster) {
    assert!(
        report.failures.is_empty(),
        "{what}: {} of {} calls failed: {:?} (logs: {})",
        report.failures.len(),
        report.done,
        report.failures,
        cluster.logs().display()
    );
}

/// 30 stateless calls and 30 multi round-trip requests: every replica served some.
async fn spread(cluster: &Cluster, peer: &Peer) {
    for work in [Work::Whoami, Work::Order] {
        let load = peer.load(&cluster.url(), work, 2).await;
        load.advance(30).await;
        let report = load.finish().await;
        assert_clean("spread", &report, cluster);
        for replica in &cluster.replicas {
            assert!(
                report.served_by.get(&replica.name).copied().unwrap_or(0) > 0,
                "{work:?}: {} served nothing: {:?}",
                replica.name,
                report.served_by
            );
        }
    }
}

/// Multi round-trip requests one at a time: round-robin sends a retry to another replica
/// than the one that asked, and it completes there.
async fn retry_elsewhere(cluster: &Cluster, peer: &Peer) {
    let load = peer.load(&cluster.url(), Work::Order, 1).await;
    load.advance(12).await;
    let report = load.finish().await;
    assert_clean("retry elsewhere", &report, cluster);
    assert!(
        report.elsewhere > 0,
        "no request finished on another replica than the one that asked: {report:?}"
    );
}

/// A key rotated in three steps on every replica (accept, sign, retire) while multi
/// round-trip requests run: none fails; the retired key is no longer accepted.
async fn rotation(cluster: &Cluster, peer: &Peer) {
    let (old, new) = (first_keys(), key(12));
    let load = peer.load(&cluster.url(), Work::Order, 3).await;
    load.advance(10).await;
    cluster.set_keys(&format!("{old},{new}")).await;
    load.advance(10).await;
    cluster.set_keys(&format!("{new},{old}")).await;
    load.advance(10).await;
    let report = load.finish().await;
    assert_clean("rotation", &report, cluster);
    // Every state issued with the old key has been answered: retire it.
    cluster.set_keys(&new).await;
    let load = peer.load(&cluster.url(), Work::Order, 2).await;
    load.advance(10).await;
    let report = load.finish().await;
    assert_clean("after retiring the old key", &report, cluster);
}

/// Redis stopped, then started again (empty), while stateless and multi round-trip calls
/// run: none fails. The tool that needs Redis says clearly that it is down, then works again.
async fn redis_restart(cluster: &mut Cluster, peer: &Peer) {
    let whoami = peer.load(&cluster.url(), Work::Whoami, 2).await;
    let orders = peer.load(&cluster.url(), Work::Order, 2).await;
    shared_state_everywhere(cluster, true).await;
    orders.advance(5).await;
    cluster.redis.stop();
    shared_state_everywhere(cluster, false).await;
    whoami.advance(10).await;
    orders.advance(10).await;
    cluster.redis.restart().await;
    shared_state_everywhere(cluster, true).await;
    whoami.advance(10).await;
    for report in [whoami.finish().await, orders.finish().await] {
        assert_clean("redis restart", &report, cluster);
    }
}

/// Until `shared_state` answers (`up`) or fails saying Redis did not answer (`!up`) on every
/// replica, asked directly (a bounded wait).
async fn shared_state_everywhere(cluster: &Cluster, up: bool) {
    for i in 0..cluster.replicas.len() {
        let client = peers::connect(&cluster.replica_url(i)).await;
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let result = client
                .call_tool("shared_state", serde_json::json!({}))
                .await
                .expect("shared_state answers (a result, failed or not)");
            let text = result.first_text().unwrap_or_default().to_owned();
            let failed = result.is_error == Some(true);
            if up && !failed {
                break;
            }
            if !up && failed {
                assert!(text.contains("did not answer"), "{text}");
                assert!(text.contains("check that it runs"), "{text}");
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "replica {i}: shared_state still says {text:?} (want Redis {})",
                if up { "up" } else { "down" }
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        client.close().await;
    }
}

/// The example's tools on one replica, asked directly: the slow one runs as a task, the
/// list-changing one adds a resource. (Across replicas, both need the Redis task store and
/// change bus: scenarios to add once they are merged.)
async fn one_replica_tools(cluster: &Cluster) {
    let client = peers::connect(&cluster.replica_url(0)).await;
    let name = &cluster.replicas[0].name;
    let task = client
        .call_tool_as_task("slow_report", serde_json::json!({"ms": 300}))
        .await
        .expect("slow_report starts");
    let ToolTask::Started(task) = task else {
        panic!("a 300 ms report becomes a task");
    };
    let result = tokio::time::timeout(WAIT, task.result())
        .await
        .expect("the task ends within the bound")
        .expect("the task succeeds");
    assert_eq!(
        result.first_text(),
        Some(&*format!("report of 300 ms by {name}"))
    );
    assert!(client.list_resources().await.unwrap().is_empty());
    let added = client
        .call_tool("add_note", serde_json::json!({"text": "hello"}))
        .await
        .expect("add_note answers");
    assert_eq!(
        added.first_text(),
        Some(&*format!("note://1 added on {name}"))
    );
    let listed = client.list_resources().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].uri, "note://1");
    client.close().await;
}

/// A legacy (2025-11-25) session opened through the load balancer: its stateless calls and
/// its calls that ask the user (the answer POSTed to whichever replica round-robin picks,
/// routed through Redis to the call waiting for it) are served by every replica, none fails.
async fn legacy_sessions(cluster: &Cluster, peer: &Peer) {
    spread(cluster, peer).await;
}

/// A `subscriptions/listen` stream held on one replica hears of the list change made on
/// another (the change bus), and so does a legacy session's stream. (`add_note` registers its
/// server again on the replica that runs it: the others announce the server's lists as
/// changed; their own resource list is the same, so what they send is `tools/list_changed`.)
async fn list_change_across(cluster: &Cluster) {
    let held = [
        peers::connect(&cluster.replica_url(0)).await,
        peers::connect_version(&cluster.replica_url(2), ProtocolVersion::LATEST_LEGACY).await,
    ];
    let mut heard = Vec::new();
    let stop = CancellationToken::new();
    for client in &held {
        heard.push(client.notifications());
        let (client, stop) = (client.clone(), stop.clone());
        let filter = SubscriptionFilter {
            tools_list_changed: true,
            resources_list_changed: true,
            ..Default::default()
        };
        tokio::spawn(async move { client.listen(filter, stop).await });
    }
    // The change, made on the replica in the middle, until each stream heard one (a
    // listen stream may not be open yet when the first change is made).
    let changer = peers::connect(&cluster.replica_url(1)).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    for (i, notifications) in heard.iter_mut().enumerate() {
        loop {
            changer
                .call_tool("add_note", serde_json::json!({"text": "across"}))
                .await
                .expect("add_note answers");
            let wait = tokio::time::timeout(Duration::from_secs(2), async {
                loop {
                    match notifications.recv().await {
                        Ok(
                            ServerNotification::ToolsListChanged
                            | ServerNotification::ResourcesListChanged,
                        ) => return true,
                        Ok(_) | Err(RecvError::Lagged(_)) => continue,
                        Err(RecvError::Closed) => return false,
                    }
                }
            });
            if wait.await == Ok(true) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "stream {i} never heard the change made on another replica (logs: {})",
                cluster.logs().display()
            );
        }
    }
    stop.cancel();
    for client in held.iter().chain([&changer]) {
        client.close().await;
    }
}

/// A task started through the load balancer is seen by every replica, asked directly, and
/// its result is fetched from another replica than the one that ran it.
async fn tasks_across(cluster: &Cluster) {
    let starter = peers::connect(&cluster.url()).await;
    let ToolTask::Started(task) = starter
        .call_tool_as_task("slow_report", serde_json::json!({"ms": 1500}))
        .await
        .expect("slow_report starts")
    else {
        panic!("a 1.5 s report becomes a task");
    };
    let mut asked = Vec::new();
    for i in 0..cluster.replicas.len() {
        let client = peers::connect(&cluster.replica_url(i)).await;
        let status = client.task(task.id()).status().await;
        let status = status.unwrap_or_else(|e| panic!("replica {i} shows the task: {e}"));
        assert_eq!(status.task_id, task.id());
        asked.push(client);
    }
    let result = tokio::time::timeout(WAIT, asked[2].task(task.id()).result())
        .await
        .expect("the task ends within the bound")
        .expect("the task succeeds");
    let text = result.first_text().unwrap_or_default().to_owned();
    assert!(text.starts_with("report of 1500 ms by r"), "{text}");
    for client in asked.iter().chain([&starter]) {
        client.close().await;
    }
}

/// A replica killed while it runs a task: asked through the load balancer (which skips the
/// dead replica), the task ends `failed` within its lease, and its result is an error that
/// says what happened; nothing hangs.
async fn replica_killed_mid_task(cluster: &mut Cluster) {
    let runner = peers::connect(&cluster.replica_url(0)).await;
    let ToolTask::Started(task) = runner
        .call_tool_as_task("slow_report", serde_json::json!({"ms": 600_000}))
        .await
        .expect("slow_report starts")
    else {
        panic!("a 10-minute report becomes a task");
    };
    let id = task.id().to_owned();
    runner.close().await;
    cluster.kill_replica(0);
    let killed = tokio::time::Instant::now();
    let client = peers::connect(&cluster.url()).await;
    let status = loop {
        let status = client.task(&id).status().await.expect("tasks/get answers");
        if status.status != TaskStatus::Working {
            break status;
        }
        assert!(
            killed.elapsed() < WAIT,
            "the dead replica's task still works after {:?}",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status.status, TaskStatus::Failed, "{status:?}");
    assert!(
        killed.elapsed() >= TASK_LEASE / 2,
        "failed before its lease could run out: {:?}",
        killed.elapsed()
    );
    let error = tokio::time::timeout(WAIT, client.task(&id).result())
        .await
        .expect("the result answers within the bound")
        .expect_err("a failed task has no result");
    assert!(error.to_string().contains("replica"), "{error}");
    client.close().await;
}

/// Each scenario on a fresh cluster, with `peer`.
async fn run(peer: Peer, scenario: &str) {
    let started = std::time::Instant::now();
    let Some(mut cluster) = Cluster::start(&first_keys()).await else {
        return;
    };
    eprintln!("{scenario}: cluster up in {:?}", started.elapsed());
    match scenario {
        "spread" => spread(&cluster, &peer).await,
        "retry_elsewhere" => retry_elsewhere(&cluster, &peer).await,
        "rotation" => rotation(&cluster, &peer).await,
        "redis_restart" => redis_restart(&mut cluster, &peer).await,
        "one_replica_tools" => one_replica_tools(&cluster).await,
        "legacy_sessions" => legacy_sessions(&cluster, &peer).await,
        "list_change_across" => list_change_across(&cluster).await,
        "tasks_across" => tasks_across(&cluster).await,
        "replica_killed_mid_task" => replica_killed_mid_task(&mut cluster).await,
        "rolling_restart" => rolling::rolling_restart(&mut cluster).await,
        other => panic!("no scenario {other}"),
    }
    eprintln!("{scenario}: done in {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_calls_spread_over_the_replicas() {
    run(Peer::Ours, "spread").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_retry_lands_on_another_replica() {
    run(Peer::Ours, "retry_elsewhere").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_sees_no_failure_while_a_key_rotates() {
    run(Peer::Ours, "rotation").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_sees_no_failure_while_redis_restarts() {
    run(Peer::Ours, "redis_restart").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_tools_work_on_one_replica() {
    run(Peer::Ours, "one_replica_tools").await;
}

/// The Python SDK's client (`MCP_E2E_PYTHON`, a Python with `mcp` >= 2), every scenario.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs Python with mcp >= 2: run by .ci/e2e.sh"]
async fn python_sdk_client_behind_the_load_balancer() {
    let python = std::env::var("MCP_E2E_PYTHON")
        .expect("MCP_E2E_PYTHON names a Python with the mcp package (>= 2) installed");
    for scenario in ["spread", "retry_elsewhere", "rotation", "redis_restart"] {
        eprintln!("python sdk: {scenario}");
        run(Peer::PythonSdk(python.clone()), scenario).await;
    }
    eprintln!("python sdk, legacy session: legacy_sessions");
    run(Peer::PythonSdkLegacy(python), "legacy_sessions").await;
}

/// The replicas guide (`mcp_registry::guide::replicas`) quotes the HAProxy configuration the
/// tests run.
#[test]
fn the_replicas_guide_quotes_the_haproxy_configuration() {
    let guide = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/mcp-registry/src/guide/replicas.md"
    );
    let readme = std::fs::read_to_string(guide).expect("the replicas guide reads");
    let cfg = std::fs::read_to_string(HAPROXY_CFG).expect("haproxy.cfg reads");
    let quoted = format!("```text\n{cfg}```");
    assert!(
        readme.contains(&quoted),
        "the replicas guide must quote tests/e2e/replicas/haproxy.cfg exactly, in a ```text block"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_legacy_client_session_is_served_by_every_replica() {
    run(Peer::OursLegacy, "legacy_sessions").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_on_one_replica_reaches_streams_held_on_others() {
    run(Peer::Ours, "list_change_across").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_started_on_one_replica_is_followed_through_the_others() {
    run(Peer::Ours, "tasks_across").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_task_leaves_the_task_failed_within_its_lease() {
    run(Peer::Ours, "replica_killed_mid_task").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolling_restart_under_50_clients_fails_no_call() {
    run(Peer::Ours, "rolling_restart").await;
}
