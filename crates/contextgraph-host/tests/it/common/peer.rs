//! A scripted provider on an in-memory pipe, for rules that need exact
//! control of what the peer writes and when.

use std::time::Duration;

use contextgraph_host::{Connection, ConnectionOptions, HandshakeError, TransportKind};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// What the peer writes in answer to one line: `(delay before, line)` pairs.
pub type Script = Box<dyn FnMut(&Value) -> Vec<(Duration, String)> + Send>;

/// A `handshake_ack` line.
pub fn ack(name: &str, correlation: bool, verify: bool) -> String {
    json!({
        "type": "handshake_ack",
        "protocol_version": "contextgraph/1.0-draft",
        "provider": {"name": name, "version": "1.0.0",
                     "data_flow": {"reads": true, "writes": false, "egress": false}},
        "capabilities": {"query": {"kinds": ["doc"]}, "correlation": correlation,
                         "graph": false, "verify": verify}
    })
    .to_string()
}

/// A `frames` line with one honest frame titled `title`.
pub fn frames(id: Option<&str>, title: &str) -> String {
    let content = format!("content of {title}");
    let cost = content.len().div_ceil(4);
    let mut v = json!({
        "type": "frames",
        "result": {"frames": [{"id": title, "kind": "doc", "title": title, "content": content,
                               "score": 0.5, "token_cost": cost, "citation_label": title}],
                   "truncated": false}
    });
    if let Some(id) = id {
        v["id"] = json!(id);
    }
    v.to_string()
}

/// The goal of a query line, if it is one.
pub fn goal(v: &Value) -> Option<String> {
    (v["type"] == "query").then(|| v["query"]["goal"].as_str().unwrap_or_default().to_owned())
}

/// The id of a line.
pub fn id(v: &Value) -> Option<String> {
    v["id"].as_str().map(str::to_owned)
}

/// Start `script` as the peer and open a connection to it.
pub async fn connect(
    script: Script,
    options: ConnectionOptions,
) -> Result<Connection, HandshakeError> {
    connect_through(script, options, 1 << 20).await
}

/// [`connect`] through a pipe that holds at most `pipe_bytes`, so that
/// writes are partial and wait for the peer to read.
pub async fn connect_through(
    script: Script,
    options: ConnectionOptions,
    pipe_bytes: usize,
) -> Result<Connection, HandshakeError> {
    let (host_side, peer_side) = tokio::io::duplex(pipe_bytes);
    tokio::spawn(run(peer_side, script));
    let (read, write) = tokio::io::split(host_side);
    Connection::open(
        read,
        write,
        "scripted",
        TransportKind::Stdio {
            program: "scripted".into(),
        },
        options,
    )
    .await
}

async fn run(io: tokio::io::DuplexStream, mut script: Script) {
    let (read, mut write) = tokio::io::split(io);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let value: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        for (delay, out) in script(&value) {
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if write.write_all(out.as_bytes()).await.is_err()
                || write.write_all(b"\n").await.is_err()
            {
                return;
            }
        }
    }
}

/// A script that answers the handshake with `ack_line` and everything else with `then`.
pub fn script(
    ack_line: String,
    mut then: impl FnMut(&Value) -> Vec<(Duration, String)> + Send + 'static,
) -> Script {
    Box::new(move |v: &Value| {
        if v["type"] == "handshake" {
            vec![(Duration::ZERO, ack_line.clone())]
        } else {
            then(v)
        }
    })
}
