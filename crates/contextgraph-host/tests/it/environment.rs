//! Stdio processes: a scrubbed environment the embedder can extend, stderr
//! kept for reports (not poured onto the terminal), and the whole process
//! group killed on shutdown or drop.

use std::time::Duration;

use crate::common::{misbehaving_binary, stdio_options, PATIENCE};
use contextgraph_host::{
    HandshakeError, ProviderClient, RequestError, StdioCommand, StdioProvider,
};
use tokio::time::Instant;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn environment_is_scrubbed_to_the_allow_list() {
    std::env::set_var("CGP_TEST_SECRET_TOKEN", "hunter2");
    std::env::set_var("CGP_TEST_ALLOWED", "visible");
    let command = StdioCommand::new("/bin/sh")
        .args(["-c", "env >&2; exit 1"])
        .allow_env("CGP_TEST_ALLOWED")
        .env("CGP_TEST_SET", "explicit");
    let provider = StdioProvider::new(command, stdio_options());
    let result = provider.ready(Instant::now() + PATIENCE).await;
    let tail = match result {
        Err(RequestError::Handshake(HandshakeError::Closed { stderr_tail, .. })) => stderr_tail,
        other => panic!("{other:?}"),
    };
    assert!(tail.contains("CGP_TEST_ALLOWED=visible"), "{tail}");
    assert!(tail.contains("CGP_TEST_SET=explicit"), "{tail}");
    assert!(tail.contains("PATH="), "{tail}");
    assert!(
        !tail.contains("hunter2"),
        "a secret leaked into the provider's environment"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn process_group_is_killed_with_the_provider() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    // The provider leaves a grandchild behind, then serves normally.
    let script = format!(
        "sleep 300 & echo $! > {}; exec \"$0\" --mode hang-on-shutdown --name grouped",
        pid_file.display()
    );
    let command = StdioCommand::new("/bin/sh")
        .args(["-c", &script])
        .arg(misbehaving_binary());
    let mut options = stdio_options();
    options.shutdown_grace = Duration::from_millis(100);
    let provider = StdioProvider::new(command, options);
    provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("handshake");
    let grandchild: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(grandchild));
    // hang-on-shutdown ignores `shutdown`: the grace runs out and the group is killed.
    provider.shutdown().await;
    let deadline = std::time::Instant::now() + PATIENCE;
    while alive(grandchild) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !alive(grandchild),
        "the provider's grandchild survived the group kill"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_program_name_is_found_in_the_providers_path() {
    // The program is on the PATH given to the provider, not on the host's:
    // the lookup must use the environment the provider runs with.
    let dir = tempfile::tempdir().unwrap();
    let name = "cgp-test-provider-on-path";
    std::os::unix::fs::symlink(misbehaving_binary(), dir.path().join(name)).unwrap();
    let command = StdioCommand::new(name)
        .args(["--mode", "normal", "--name", "on-path"])
        .env("PATH", dir.path());
    let provider = StdioProvider::new(command, stdio_options());
    let descriptor = provider
        .ready(Instant::now() + PATIENCE)
        .await
        .expect("found through the provider's PATH and handshaken");
    assert_eq!(descriptor.id, "on-path");
    provider.shutdown().await;

    // Not on the provider's PATH: a spawn error naming the program.
    let empty = tempfile::tempdir().unwrap();
    let command = StdioCommand::new(name).env("PATH", empty.path());
    let provider = StdioProvider::new(command, stdio_options());
    match provider.ready(Instant::now() + PATIENCE).await {
        Err(RequestError::Spawn { program, .. }) => assert_eq!(program, name),
        other => panic!("{other:?}"),
    }
}

fn alive(pid: i32) -> bool {
    // A zombie has no /proc/<pid>/cmdline content; a reaped one no directory.
    std::fs::read(format!("/proc/{pid}/stat"))
        .map(|s| !String::from_utf8_lossy(&s).contains(") Z "))
        .unwrap_or(false)
}
