//! `cgp serve … --http` as a child process, for the tests that talk to it:
//! spawn it, wait for the URL it announces on stderr, collect the rest of
//! its stderr (the request log), and stop it with SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The line prefix `cgp serve --http` announces its URL with.
const PREFIX: &str = "cgp serve: listening on ";

/// How long a loaded CI machine may take to start the server.
const PATIENCE: Duration = Duration::from_secs(60);

/// Spawn `command` (a `cgp serve … --http` invocation); return the child,
/// the URL it announced, and the rest of its stderr, sent once it exits.
pub fn spawn_announced(mut command: Command) -> (Child, String, mpsc::Receiver<String>) {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (url_tx, url_rx) = mpsc::channel();
    let (rest_tx, rest_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut rest = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix(PREFIX) {
                let _ = url_tx.send(url.to_owned());
            }
            rest.push_str(&line);
            rest.push('\n');
        }
        let _ = rest_tx.send(rest);
    });
    let url = url_rx
        .recv_timeout(PATIENCE)
        .expect("the server announces its URL on stderr");
    (child, url, rest_rx)
}

/// Ask the server to stop the way a service manager does.
pub fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
