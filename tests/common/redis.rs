//! A real `redis-server` for the tests of state shared across replicas: started on a free
//! loopback port with nothing persisted, stopped (killed) when dropped, restartable on the
//! same port.
//!
//! Without `redis-server` on `PATH`, [`RedisServer::start`] returns `None` and the test says
//! it was skipped, except under CI (`CI` set), where it fails: `.ci/run` installs Redis.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `redis-server` child process.
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts one, or `None` (skip) when Redis is not installed outside CI.
    pub async fn start() -> Option<Self> {
        if Command::new("redis-server")
            .arg("--version")
            .output()
            .is_err()
        {
            assert!(
                std::env::var_os("CI").is_none(),
                "redis-server is not installed; .ci/run installs it (apt-get install redis-server)"
            );
            eprintln!("skipped: redis-server is not installed (apt-get install redis-server)");
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut server = Self { port, child: None };
        server.spawn().await;
        Some(server)
    }

    /// The URL to give `Redis::new`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Runs `args` with `redis-cli` against this server; its output.
    fn cli(&self, args: &[&str]) -> String {
        let output = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli runs (it comes with redis-server)");
        assert!(output.status.success(), "redis-cli {args:?} failed");
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Zeroes the server's command counts ([`calls`](Self::calls)).
    pub fn reset_counts(&self) {
        self.cli(&["CONFIG", "RESETSTAT"]);
    }

    /// How many times the server ran `command` (lower case, e.g. `mget`) since the last
    /// [`reset_counts`](Self::reset_counts).
    pub fn calls(&self, command: &str) -> u64 {
        let stats = self.cli(&["INFO", "commandstats"]);
        let prefix = format!("cmdstat_{command}:calls=");
        stats
            .lines()
            .find_map(|line| line.strip_prefix(prefix.as_str()))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |calls| calls.parse().expect("a count"))
    }

    /// Stops the server (as a crash would: SIGKILL, nothing saved).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the server and starts a new, empty one on the same port.
    pub async fn restart(&mut self) {
        self.stop();
        self.spawn().await;
    }

    async fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        // Bounded wait for it to accept connections (generous: a loaded machine).
        for _ in 0..600 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "redis-server did not listen on port {} within 30 s",
            self.port
        );
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
