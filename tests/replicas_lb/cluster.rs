//! Three replicas of examples/replica behind HAProxy (tests/e2e/replicas/haproxy.cfg) on
//! loopback, sharing a real `redis-server` and a request-state key file: started by
//! [`Cluster::start`], stopped (every process killed) when dropped.
//!
//! Without `haproxy` or `redis-server`, `start` returns `None` and the test says it was
//! skipped, except under CI (`CI` set), where it fails: `.ci/run` installs both.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::LazyLock;
use std::time::Duration;

use base64::Engine as _;
use mcp_registry::tool::RequestStateKeys;

use crate::common::redis::RedisServer;

/// How long a process may take to listen, a key change to reach every replica, Redis to come
/// back: generous, for a loaded machine.
pub const WAIT: Duration = Duration::from_secs(60);

/// The HAProxy configuration the README quotes.
pub const HAPROXY_CFG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/e2e/replicas/haproxy.cfg"
);

/// The lease of the replicas' running tasks: a killed replica's tasks fail this long after
/// its last renewal.
pub const TASK_LEASE: Duration = Duration::from_secs(2);

/// The replicas' drain bound (`DRAIN_TIMEOUT_MS`): longer than any call or task the tests
/// make, shorter than [`WAIT`].
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(20);

/// The replicas' drain delay (`DRAIN_DELAY_MS`): none, HAProxy's retries (`retry-on
/// conn-failure`, `option redispatch`) send what a stopping replica refuses elsewhere. (With
/// 3 s, longer than HAProxy takes to see a replica's readiness fail, no call failed either
/// without those retries; but a task started on a replica during its delay was now and then
/// failed by its lease of [`TASK_LEASE`] while it still ran: to look into before the tests
/// use a delay.)
pub const DRAIN_DELAY: Duration = Duration::ZERO;

/// A request-state key of 32 bytes `byte`, as base64.
pub fn key(byte: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

/// One replica process.
pub struct Replica {
    /// Its `REPLICA_NAME` (r1, r2, r3).
    pub name: String,
    /// Its own port (HAProxy's backend).
    pub port: u16,
    child: Option<Child>,
}

/// The load balancer, the replicas, Redis.
pub struct Cluster {
    /// The shared Redis (stop and restart it at will).
    pub redis: RedisServer,
    /// The replicas, in HAProxy's order.
    pub replicas: Vec<Replica>,
    haproxy: Option<Child>,
    lb_port: u16,
    dir: PathBuf,
}

impl Cluster {
    /// Starts Redis, three replicas sharing the keys `keys` (written to the key file), then
    /// HAProxy; `None` (skip) when haproxy or redis-server is missing outside CI.
    pub async fn start(keys: &str) -> Option<Cluster> {
        if !installed("haproxy", "-v") {
            return None;
        }
        let redis = RedisServer::start().await?;
        let dir = scratch_dir();
        std::fs::write(dir.join("keys"), keys).expect("the key file is written");
        let mut cluster = Cluster {
            redis,
            replicas: Vec::new(),
            haproxy: None,
            lb_port: free_port(),
            dir,
        };
        for i in 1..=3 {
            let replica = cluster.spawn_replica(&format!("r{i}"), free_port());
            cluster.replicas.push(replica);
        }
        for replica in &cluster.replicas {
            wait_listening(
                replica.port,
                &cluster.dir.join(format!("{}.log", replica.name)),
            )
            .await;
        }
        cluster.spawn_haproxy();
        wait_listening(cluster.lb_port, &cluster.dir.join("haproxy.log")).await;
        Some(cluster)
    }

    /// Starts replica `name` on `port` (its log appended to `NAME.log`).
    fn spawn_replica(&self, name: &str, port: u16) -> Replica {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("{name}.log")))
            .expect("a log file");
        let child = Command::new(&*REPLICA_BINARY)
            .env("PORT", port.to_string())
            .env("REPLICA_NAME", name)
            .env("MCP_REQUEST_STATE_KEYS_FILE", self.dir.join("keys"))
            .env("REDIS_URL", self.redis.url())
            // A killed replica's tasks are failed once their lease runs out: 2 s here.
            .env("TASK_LEASE_MS", TASK_LEASE.as_millis().to_string())
            // On SIGTERM, calls in flight and tasks under way get this long to finish.
            .env("DRAIN_TIMEOUT_MS", DRAIN_TIMEOUT.as_millis().to_string())
            // ... and it keeps accepting this long (none here) once readiness says 503.
            .env("DRAIN_DELAY_MS", DRAIN_DELAY.as_millis().to_string())
            .env_remove("MCP_REQUEST_STATE_KEYS")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("examples/replica starts");
        Replica {
            name: name.to_owned(),
            port,
            child: Some(child),
        }
    }

    fn spawn_haproxy(&mut self) {
        let log = std::fs::File::create(self.dir.join("haproxy.log")).expect("a log file");
        let mut command = Command::new("haproxy");
        command.args(["-db", "-f", HAPROXY_CFG]);
        command.env("LB_PORT", self.lb_port.to_string());
        for (i, replica) in self.replicas.iter().enumerate() {
            command.env(format!("REPLICA{}_PORT", i + 1), replica.port.to_string());
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("haproxy starts");
        self.haproxy = Some(child);
    }

    /// The MCP endpoint behind the load balancer.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.lb_port)
    }

    /// Replica `i`'s own endpoint (bypassing the load balancer).
    pub fn replica_url(&self, i: usize) -> String {
        format!("http://127.0.0.1:{}/mcp", self.replicas[i].port)
    }

    /// Where the processes' logs are.
    pub fn logs(&self) -> &Path {
        &self.dir
    }

    /// Writes `keys` to the key file and signals every replica (`SIGHUP`) to read it again;
    /// returns once each replica says (tool `whoami`, asked directly) that its keys are these,
    /// in this order (a bounded wait).
    pub async fn set_keys(&self, keys: &str) {
        let expected = RequestStateKeys::parse(keys)
            .expect("valid test keys")
            .fingerprints()
            .join(",");
        std::fs::write(self.dir.join("keys"), keys).expect("the key file is written");
        for replica in &self.replicas {
            let Some(child) = &replica.child else {
                continue;
            };
            let status = Command::new("kill")
                .args(["-HUP", &child.id().to_string()])
                .status()
                .expect("kill runs");
            assert!(status.success(), "SIGHUP to {}", replica.name);
        }
        for (i, replica) in self.replicas.iter().enumerate() {
            if replica.child.is_none() {
                continue;
            }
            let client = super::peers::connect(&self.replica_url(i)).await;
            let deadline = tokio::time::Instant::now() + WAIT;
            loop {
                let said = super::peers::whoami(&client).await;
                if said.ends_with(&format!(" {expected}")) {
                    break;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "{} still has keys {said:?}, not {expected} (logs: {})",
                    replica.name,
                    self.dir.display()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            client.close().await;
        }
    }

    /// Restarts replica `i` as an orchestrator's rolling deploy does: `SIGTERM` (it drains),
    /// its exit awaited, a new process on the same port, and its readiness route answering
    /// `200` (each wait bounded). Returns how the old process exited.
    pub async fn restart_replica(&mut self, i: usize) -> std::process::ExitStatus {
        let (name, port) = (self.replicas[i].name.clone(), self.replicas[i].port);
        let mut child = self.replicas[i].child.take().expect("the replica runs");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "SIGTERM to {name}");
        let deadline = tokio::time::Instant::now() + WAIT;
        let exited = loop {
            if let Some(exited) = child.try_wait().expect("the replica's status reads") {
                break exited;
            }
            if tokio::time::Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{name} did not exit within {WAIT:?} of SIGTERM (logs: {})",
                    self.dir.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        self.replicas[i] = self.spawn_replica(&name, port);
        self.wait_ready(i).await;
        exited
    }

    /// Until replica `i`'s readiness route (`GET /readyz`, asked directly) answers `200` (a
    /// bounded wait).
    pub async fn wait_ready(&self, i: usize) {
        let replica = &self.replicas[i];
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if ready(replica.port).await {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} is not ready after {WAIT:?} (logs: {})",
                replica.name,
                self.dir.display()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Kills replica `i` (SIGKILL: as a crash would).
    pub fn kill_replica(&mut self, i: usize) {
        if let Some(mut child) = self.replicas[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(mut haproxy) = self.haproxy.take() {
            let _ = haproxy.kill();
            let _ = haproxy.wait();
        }
        for i in 0..self.replicas.len() {
            self.kill_replica(i);
        }
    }
}

/// Whether `program` runs; outside CI, a missing one skips the test (with a note), under CI
/// it fails it.
fn installed(program: &str, version_flag: &str) -> bool {
    if Command::new(program).arg(version_flag).output().is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{program} is not installed; .ci/run installs it (apt-get install {program})"
    );
    eprintln!("skipped: {program} is not installed (apt-get install {program})");
    false
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A fresh directory under target/ for this cluster's key file and logs.
fn scratch_dir() -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| format!("{}/target", env!("CARGO_MANIFEST_DIR")));
    let dir = PathBuf::from(target).join("replicas-lb").join(format!(
        "{}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&dir).expect("a scratch directory under target/");
    dir
}

/// examples/replica, built once per test run (cargo does nothing when it is up to date).
static REPLICA_BINARY: LazyLock<PathBuf> =
    LazyLock::new(|| crate::common::examples::example("replica"));

/// Whether `GET /readyz` on 127.0.0.1:`port` answers `200`.
async fn ready(port: u16) -> bool {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        stream
            .write_all(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await?;
        std::io::Result::Ok(answer.starts_with(b"HTTP/1.1 200"))
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(10), probe).await,
        Ok(Ok(true))
    )
}

/// Until 127.0.0.1:`port` accepts connections (a bounded wait); the log is shown otherwise.
async fn wait_listening(port: u16, log: &Path) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if tokio::time::Instant::now() >= deadline {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            panic!("nothing listens on port {port} after {WAIT:?}; its log:\n{log}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
