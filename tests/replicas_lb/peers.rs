//! The clients that drive the cluster: this crate's (`mcp_registry::client`, in-process
//! tasks) and the Python SDK's (tests/e2e/replicas_client.py, a child process). Either runs
//! a [`Load`]: calls made in a loop until told to stop, then a [`Report`] of what happened.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_registry::client::Client;
use mcp_registry::protocol::{ElicitResult, ProtocolVersion};
use serde::Deserialize;
use serde_json::{Map, json};
use tokio::io::AsyncBufReadExt as _;
use tokio::task::JoinHandle;

use super::cluster::WAIT;

/// What a load calls.
#[derive(Debug, Clone, Copy)]
pub enum Work {
    /// `whoami`: a stateless call; the report counts the replicas that served.
    Whoami,
    /// `confirm_order`: a multi round-trip request (the elicitation answered, the call
    /// retried); the report counts those finished on another replica than the one that asked.
    Order,
}

impl Work {
    fn name(self) -> &'static str {
        match self {
            Work::Whoami => "whoami",
            Work::Order => "order",
        }
    }
}

/// What a load did.
#[derive(Debug, Default, Deserialize)]
pub struct Report {
    /// Calls made.
    pub done: usize,
    /// The calls that failed, each said.
    pub failures: Vec<String>,
    /// Calls (or last rounds) served, by replica name.
    pub served_by: BTreeMap<String, usize>,
    /// Multi round-trip requests asked on one replica and finished on another.
    pub elsewhere: usize,
}

/// Which client drives the cluster.
#[derive(Debug, Clone)]
pub enum Peer {
    /// `mcp_registry::client`, 2026-07-28 (stateless).
    Ours,
    /// `mcp_registry::client` speaking 2025-11-25: one legacy session, its requests spread
    /// over the replicas (the session shared through Redis).
    OursLegacy,
    /// The Python SDK, run by this Python (with `mcp` >= 2 installed), 2026-07-28.
    PythonSdk(String),
    /// The same, in a legacy session (`mode="legacy"`: the initialize handshake).
    PythonSdkLegacy(String),
}

/// A load under way.
pub struct Load {
    done: Arc<AtomicUsize>,
    stop: Box<dyn FnOnce() + Send>,
    report: JoinHandle<Report>,
}

impl Load {
    /// Calls completed so far (failed or not).
    pub fn done(&self) -> usize {
        self.done.load(Ordering::SeqCst)
    }

    /// Until `n` more calls completed than now (a bounded wait).
    pub async fn advance(&self, n: usize) {
        let target = self.done() + n;
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.done() < target {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the load stalled at {} calls (wanted {target})",
                self.done()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the load and waits for its report (a bounded wait).
    pub async fn finish(self) -> Report {
        (self.stop)();
        tokio::time::timeout(WAIT, self.report)
            .await
            .expect("the load stops within the bound")
            .expect("the load's task ends well")
    }
}

impl Peer {
    /// Starts `workers` loops calling `work` through `url`.
    pub async fn load(&self, url: &str, work: Work, workers: usize) -> Load {
        match self {
            Peer::Ours => ours(url, work, workers, None).await,
            Peer::OursLegacy => {
                ours(url, work, workers, Some(ProtocolVersion::LATEST_LEGACY)).await
            }
            Peer::PythonSdk(python) => python_sdk(python, "2026-07-28", url, work, workers).await,
            Peer::PythonSdkLegacy(python) => python_sdk(python, "legacy", url, work, workers).await,
        }
    }
}

/// Our client, modern era (2026-07-28), answering elicitations with "confirm".
pub async fn connect(url: &str) -> Client {
    connect_asking(url, Arc::default(), None).await
}

/// Our client speaking `version`.
pub async fn connect_version(url: &str, version: ProtocolVersion) -> Client {
    connect_asking(url, Arc::default(), Some(version)).await
}

/// Who asked which item, from the elicitation messages (`rN asks: order ITEM?`).
pub type Askers = Arc<Mutex<HashMap<String, String>>>;

pub async fn connect_asking(url: &str, askers: Askers, version: Option<ProtocolVersion>) -> Client {
    let mut builder = Client::builder();
    if let Some(version) = version {
        builder = builder.protocol_version(version);
    }
    builder
        .info("replicas-lb-test", "0.1")
        .timeout(Some(Duration::from_secs(30)))
        .on_elicitation(move |params| {
            let askers = askers.clone();
            async move {
                if let Some((who, rest)) = params.message.split_once(" asks: order ") {
                    let item = rest.trim_end_matches('?').to_owned();
                    askers
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(item, who.to_owned());
                }
                let mut content = Map::new();
                content.insert("confirm".to_owned(), json!(true));
                Ok(ElicitResult::accept(content))
            }
        })
        .connect_http(url)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"))
}

/// `whoami`'s answer: `NAME FINGERPRINTS`.
pub async fn whoami(client: &Client) -> String {
    let result = client
        .call_tool("whoami", json!({}))
        .await
        .expect("whoami answers");
    result.first_text().unwrap_or_default().to_owned()
}

/// One call of `work` (`i` makes the order's item unique); the replica that served it, and
/// whether a multi round-trip request finished elsewhere than it was asked.
pub async fn one_call(
    client: &Client,
    askers: &Askers,
    work: Work,
    i: usize,
) -> Result<(String, bool), String> {
    let (tool, arguments) = match work {
        Work::Whoami => ("whoami", json!({})),
        Work::Order => ("confirm_order", json!({"item": format!("item-{i}")})),
    };
    let result = client
        .call_tool(tool, arguments)
        .await
        .map_err(|e| format!("{tool}: {e}"))?;
    let text = result.first_text().unwrap_or_default().to_owned();
    if result.is_error == Some(true) {
        return Err(format!("{tool}: {text}"));
    }
    match work {
        Work::Whoami => Ok((text.split(' ').next().unwrap_or_default().to_owned(), false)),
        Work::Order => {
            let finished = text
                .strip_prefix(&format!("ordered item-{i} (finished on "))
                .and_then(|rest| rest.strip_suffix(')'))
                .ok_or_else(|| format!("confirm_order: unexpected answer {text:?}"))?
                .to_owned();
            let asked = askers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&format!("item-{i}"))
                .ok_or_else(|| "confirm_order: the server never asked".to_owned())?;
            let elsewhere = asked != finished;
            Ok((finished, elsewhere))
        }
    }
}

async fn ours(url: &str, work: Work, workers: usize, version: Option<ProtocolVersion>) -> Load {
    let askers = Askers::default();
    let client = connect_asking(url, askers.clone(), version).await;
    let done = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let report = Arc::new(Mutex::new(Report::default()));
    let mut loops = Vec::new();
    for worker in 0..workers {
        let (client, askers, done, stop, report) = (
            client.clone(),
            askers.clone(),
            done.clone(),
            stop.clone(),
            report.clone(),
        );
        loops.push(tokio::spawn(async move {
            let mut i = worker;
            while !stop.load(Ordering::SeqCst) {
                let outcome = one_call(&client, &askers, work, i).await;
                let mut report = report.lock().unwrap_or_else(|e| e.into_inner());
                report.done += 1;
                match outcome {
                    Ok((replica, elsewhere)) => {
                        *report.served_by.entry(replica).or_default() += 1;
                        report.elsewhere += usize::from(elsewhere);
                    }
                    Err(failure) => report.failures.push(failure),
                }
                done.fetch_add(1, Ordering::SeqCst);
                i += workers;
            }
        }));
    }
    let stopper = stop.clone();
    Load {
        done,
        stop: Box::new(move || stopper.store(true, Ordering::SeqCst)),
        report: tokio::spawn(async move {
            for handle in loops {
                handle.await.expect("a load loop ends well");
            }
            client.close().await;
            std::mem::take(&mut *report.lock().unwrap_or_else(|e| e.into_inner()))
        }),
    }
}

/// tests/e2e/replicas_client.py: prints `done N` after each call, reads `stop` on stdin,
/// prints its report (JSON) last.
async fn python_sdk(python: &str, mode: &str, url: &str, work: Work, workers: usize) -> Load {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/replicas_client.py");
    let mut child = tokio::process::Command::new(python)
        .args([script, "--url", url, "--work", work.name()])
        .args(["--workers", &workers.to_string(), "--mode", mode])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{python} {script}: {e}"));
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let done = Arc::new(AtomicUsize::new(0));
    let counter = done.clone();
    let report = tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let mut report = None;
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(n) = line.strip_prefix("done ") {
                counter.store(n.parse().unwrap_or(0), Ordering::SeqCst);
            } else if let Some(json) = line.strip_prefix("report ") {
                report = Some(serde_json::from_str(json).expect("the script's report reads"));
            }
        }
        let status = child.wait().await.expect("the script ends");
        assert!(status.success(), "replicas_client.py exited with {status}");
        report.expect("the script printed its report")
    });
    // Closing stdin is the signal to stop.
    let stdin = Mutex::new(Some(stdin));
    Load {
        done,
        stop: Box::new(move || drop(stdin.lock().unwrap_or_else(|e| e.into_inner()).take())),
        report,
    }
}
