//! Issue 27: what the built-in history provider adds to a default
//! `cgp context` on this repository (a git working tree): `Engine::start`
//! plus one `context` for the README's default goal, warm indexes, with
//! the history provider on (the default) and off (`[providers.history]
//! enabled = false`), alternating, medians of 7; and whether the prompt
//! for that goal is the same (a plain goal gets no history frame).
//! `cargo bench -p contextgraph-engine --bench history_overhead`.

use std::path::Path;
use std::time::{Duration, Instant};

use contextgraph_config::{Config, Environment};
use contextgraph_engine::{ContextRequest, Engine};

const GOALS: &[&str] = &[
    "how is the config loaded?",
    "why does the consent store lock its file",
];

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let on = Config::default();
    let off = Config::from_toml_str(
        "[providers.history]\nenabled = false\n",
        &root.join("cgp.toml"),
        &Environment::default(),
    )
    .expect("config");
    for goal in GOALS {
        // Warm both indexes first.
        let (p_on, _) = rt.block_on(run(&on, &root, goal));
        let (p_off, _) = rt.block_on(run(&off, &root, goal));
        let mut t_on = Vec::new();
        let mut t_off = Vec::new();
        for _ in 0..7 {
            t_on.push(rt.block_on(run(&on, &root, goal)).1);
            t_off.push(rt.block_on(run(&off, &root, goal)).1);
        }
        t_on.sort();
        t_off.sort();
        let (m_on, m_off) = (t_on[3], t_off[3]);
        println!(
            "{goal:?}: history on {:.1} ms, off {:.1} ms, ratio {:.2}; same prompt: {}",
            ms(m_on),
            ms(m_off),
            m_on.as_secs_f64() / m_off.as_secs_f64(),
            p_on == p_off
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Start an engine with `config` on `root`, answer `goal`, stop it.
async fn run(config: &Config, root: &Path, goal: &str) -> (String, Duration) {
    let began = Instant::now();
    let engine = Engine::start(config, root).await.expect("start");
    let answer = engine
        .context(&ContextRequest {
            goal: goal.into(),
            ..ContextRequest::default()
        })
        .await
        .expect("context");
    let took = began.elapsed();
    engine.shutdown().await;
    (answer.composition.prompt, took)
}
