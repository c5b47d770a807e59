//! Output that reads well: `--explain` and `--json` list frames best first
//! with rank and score, and what `cgp` writes for a terminal fits an
//! 80-column one — the `--explain` table, `cgp providers`, and the indexing
//! progress bar drawn on a real pseudo-terminal of 80 columns.

use contextgraph_testkit::sandbox::Sandbox;
use std::io::Read;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::pty::open_pty;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A workspace with many files about retries, so several frames compete.
fn many_files(s: &Sandbox, n: usize) {
    for i in 0..n {
        s.write(
            &format!("ws/src/module_with_a_rather_long_name_{i}/retry_policy_{i}.rs"),
            &format!(
                "/// Retries with backoff, variant {i}.\npub fn retry_with_backoff_variant_{i}(attempts: u32) -> u32 {{\n    attempts * {}\n}}\n",
                i + 2
            ),
        );
    }
}

#[test]
fn explain_lists_frames_best_first_and_fits_80_columns() {
    let s = Sandbox::new(crate::CGP);
    many_files(&s, 12);
    let out = s
        .command(&[
            "context",
            "retry backoff variant",
            "--explain",
            "--budget",
            "400",
        ])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    for line in err.lines() {
        assert!(
            line.chars().count() < 80,
            "{} columns: {line:?}",
            line.chars().count()
        );
    }
    let header = err
        .lines()
        .position(|l| l.trim_start().starts_with("rank score"))
        .unwrap_or_else(|| panic!("a table header: {err}"));
    let rows: Vec<(u32, f64)> = err
        .lines()
        .skip(header + 1)
        .filter_map(|l| {
            let mut cells = l.split_whitespace();
            Some((cells.next()?.parse().ok()?, cells.next()?.parse().ok()?))
        })
        .collect();
    assert!(rows.len() >= 2, "{err}");
    assert!(
        err.contains("excluded") && err.contains("included"),
        "{err}"
    );
    let ranks: Vec<u32> = rows.iter().map(|r| r.0).collect();
    assert_eq!(ranks, (1..=rows.len() as u32).collect::<Vec<_>>(), "{err}");
    assert!(
        rows.windows(2).all(|w| w[0].1 >= w[1].1),
        "scores descend: {err}"
    );
}

#[test]
fn json_frames_carry_rank_and_score_sorted_by_rank() {
    let s = Sandbox::new(crate::CGP);
    many_files(&s, 8);
    let out = s.run(&["context", "retry backoff variant", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let frames = v["audit"]["frames"].as_array().unwrap();
    assert!(frames.len() >= 2, "{v}");
    for (n, f) in frames.iter().enumerate() {
        assert_eq!(f["rank"], n + 1, "{f}");
        assert!(f["score"].is_f64(), "{f}");
    }
    let scores: Vec<f64> = frames
        .iter()
        .map(|f| f["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

#[test]
fn providers_fit_80_columns_without_losing_a_word() {
    let s = Sandbox::new(crate::CGP);
    let script = s.script_provider(
        "remote-provider-with-a-long-name",
        r#"{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-model"]}"#,
    );
    s.write(
        "ws/cgp.toml",
        &format!(
            "[providers.remote-provider-with-a-long-name]\ncommand = \"{}\"\n",
            script.display()
        ),
    );
    let out = s
        .command(&["providers"])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!text.is_empty(), "{}", stderr(&out));
    for line in text.lines() {
        assert!(
            line.chars().count() < 80,
            "{} columns: {line:?}",
            line.chars().count()
        );
    }
    let words: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("cgp consent grant"), "{text}");
    assert!(words.contains("third-party-model"), "{text}");
    // Wide enough, the one-line-per-provider table is kept.
    let wide = s
        .command(&["providers"])
        .env("COLUMNS", "400")
        .output()
        .unwrap();
    let wide = String::from_utf8_lossy(&wide.stdout).into_owned();
    assert!(wide.starts_with("NAME"), "{wide}");
}

/// The indexing progress bar on an 80-column terminal: every redraw (the
/// text between carriage returns and newlines) fits in 79 columns.
#[test]
fn the_progress_bar_fits_an_80_column_terminal() {
    let s = Sandbox::new(crate::CGP);
    many_files(&s, 150);
    let pty = open_pty();
    pty.set_size(80, 24);
    let mut cmd = s.command(&["context", "retry backoff variant", "--no-input"]);
    cmd.env_remove("COLUMNS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(pty.slave.try_clone().unwrap()));
    let mut child = cmd.spawn().expect("cgp starts");
    drop(cmd);
    drop(pty.slave);
    let mut master = pty.master;
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let _ = master.read_to_end(&mut seen); // ends with EIO when cgp exits
        seen
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "cgp did not finish (hang guard)");
        std::thread::sleep(Duration::from_millis(20));
    };
    let seen = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(0), "{seen}");
    assert!(seen.contains("indexing ["), "a bar was drawn: {seen:?}");
    for piece in seen.split(['\r', '\n']) {
        let shown = piece.replace("\x1b[K", "");
        assert!(
            shown.chars().count() < 80,
            "{} columns on an 80-column terminal: {shown:?}",
            shown.chars().count()
        );
    }
}
