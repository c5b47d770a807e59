//! `cgp serve workspace DIR --index ARTIFACT --read-only [--http ADDR]`: a
//! replica. The checkout is served from the artifact (refused when it is
//! damaged or DIR is at another commit), nothing is written, and a drift
//! check on its own thread says which files differ from the artifact (a
//! warning on stderr, and `drifted` in `GET /healthz`). Health answers 503
//! until the index is loaded, 200 after, with the commit, the artifact id
//! and the counts.

use std::path::Path;
use std::sync::{Arc, Mutex};

use contextgraph_provider_sdk::serve_stdio;
use contextgraph_provider_workspace::serve::ServeArgs;
use contextgraph_provider_workspace::{WorkspaceProvider, PROVIDER_NAME};

use super::diag;
use super::http::{serve_http_with, HttpFlags};
use crate::commands::CommandError;

/// What the health probe reports.
#[derive(Default)]
struct Health {
    ready: bool,
    commit: Option<String>,
    artifact: String,
    files: u64,
    chunks: u64,
    /// `None` until the drift check has run.
    drifted: Option<usize>,
}

impl Health {
    fn json(&self) -> String {
        serde_json::json!({
            "ready": self.ready,
            "commit": self.commit,
            "artifact": self.artifact,
            "files": self.files,
            "chunks": self.chunks,
            "drifted": self.drifted,
            "read_only": true,
        })
        .to_string()
    }
}

/// Serve `args.dir` read-only from `artifact`, over stdio or HTTP.
pub fn run(args: &ServeArgs, artifact: &Path, http: &HttpFlags) -> Result<(), CommandError> {
    let health = Arc::new(Mutex::new(Health::default()));
    let (provider, info) = WorkspaceProvider::open_artifact(&args.dir, artifact, args.options()?)?;
    {
        let mut h = health.lock().unwrap_or_else(|p| p.into_inner());
        h.ready = true;
        h.commit = info.commit().id().map(str::to_owned);
        h.artifact = info.id.clone();
        h.files = info.manifest.files;
        h.chunks = info.manifest.chunks;
    }
    if !args.quiet {
        diag(format_args!(
            "{PROVIDER_NAME}: serving {} read-only from artifact {} ({}, {} files, {} chunks)",
            provider.root().display(),
            info.id,
            info.commit(),
            info.manifest.files,
            info.manifest.chunks
        ));
    }
    let checker = provider.clone();
    let drift_health = Arc::clone(&health);
    std::thread::Builder::new()
        .name("cgp-drift".into())
        .spawn(move || {
            let drift = checker.workspace().drift();
            if !drift.is_empty() {
                diag(format_args!(
                    "{PROVIDER_NAME}: warning: {} file(s) differ from the artifact and are not re-indexed (read-only): {}",
                    drift.len(),
                    // One line, whatever the names hold.
                    crate::terminal::for_terminal(&drift.summary(10))
                ));
            }
            drift_health
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .drifted = Some(drift.len());
        })?;
    match &http.http {
        None => serve_stdio(provider).map_err(|e| format!("{PROVIDER_NAME}: {e}").into()),
        Some(addr) => serve_http_with(provider, addr, http, |o| {
            let probe = Arc::clone(&health);
            o.with_replica(true).with_health(Arc::new(move || {
                let h = probe.lock().unwrap_or_else(|p| p.into_inner());
                (h.ready, h.json())
            }))
        }),
    }
}
