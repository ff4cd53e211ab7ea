//! The HTTP transport against the crate's own server.

use super::*;
use crate::client::transport::{Inbound, Outbound, OutboundKind};
use crate::protocol::RequestId;
use crate::sync::MutexExt;
use crate::transport::http::{HttpConfig, serve_listener};
use crate::{Registry, Server};

impl HttpTransport {
    /// How many replies are being read (their abort handles kept).
    fn open_streams(&self) -> usize {
        self.inner.streams.lock_unpoisoned().len()
    }
}

fn ping(id: i64) -> Outbound {
    Outbound {
        message: serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
        kind: OutboundKind::Request {
            id: RequestId::Number(id.into()),
            method: "ping".to_owned(),
            name: None,
            params: Vec::new(),
        },
        protocol_version: None,
    }
}

/// D12: a reply read before the spawner registered its reader's abort handle left the
/// handle behind for good. Every handle is gone once every reply is in.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_abort_handle_is_left_behind_after_fast_replies() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let registry = Registry::builder()
        .server(Server::builder("s").build().unwrap())
        .build();
    let server = tokio::spawn(serve_listener(
        listener,
        registry,
        "s",
        HttpConfig::default(),
    ));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let transport = Arc::new(HttpTransport::new(&url, &[], tx).unwrap());
    const CALLS: i64 = 2000;
    let mut sending = tokio::task::JoinSet::new();
    for worker in 0..8 {
        let transport = transport.clone();
        sending.spawn(async move {
            for id in (worker..CALLS).step_by(8) {
                transport.send(ping(id)).await.unwrap();
            }
        });
    }
    let bound = Duration::from_secs(60);
    tokio::time::timeout(bound, async {
        let mut replies = 0;
        while replies < CALLS {
            match rx.recv().await {
                Some(Inbound::Message(_) | Inbound::Failed { .. }) => replies += 1,
                other => panic!("{other:?}"),
            }
        }
        while sending.join_next().await.is_some() {}
        // A reader removes its handle right after delivering its reply.
        while transport.open_streams() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} abort handles left behind", transport.open_streams()));
    server.abort();
}
