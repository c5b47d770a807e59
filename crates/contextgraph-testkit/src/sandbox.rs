//! A sandbox for end-to-end tests of a command-line program (`cgp`): a
//! workspace (with `.git`, so the cgp.toml walk stops there) and a home,
//! config dir, data dir and cache of its own, so the user's real
//! configuration and consent store are never read or written.
//!
//! The program is passed in (`env!("CARGO_BIN_EXE_cgp")` in the calling
//! crate's tests): this crate cannot name another crate's binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temporary root holding `ws/` (the workspace), `home/` (created empty),
/// `data/` and `cache/`; removed when dropped.
pub struct Sandbox {
    root: tempfile::TempDir,
    program: PathBuf,
}

impl Sandbox {
    /// A sandbox running `program`, with a workspace holding one Rust file
    /// about retries.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        let s = Sandbox {
            root,
            program: program.into(),
        };
        s.write("ws/.git/HEAD", "ref: refs/heads/main\n");
        s.write(
            "ws/src/retry.rs",
            "/// Retries a request with exponential backoff.\npub fn retry_with_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n",
        );
        std::fs::create_dir_all(s.path("home")).expect("create the home folder");
        s
    }

    /// `rel` under the sandbox root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    /// The workspace folder (the programs' working directory).
    pub fn ws(&self) -> PathBuf {
        self.path("ws")
    }

    /// Write `text` to `rel` (folders created); returns the path. The
    /// workspace's own `ws/cgp.toml` is the user's own project's file, so it
    /// is trusted as `cgp trust` records it (an invalid one is not).
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.write_untrusted(rel, text);
        if rel == "ws/cgp.toml" {
            let _ = self.command(&["trust", &path.to_string_lossy()]).output();
        }
        path
    }

    /// Write `text` to `rel` (folders created) and trust nothing: how a
    /// hostile repository's files arrive, for tests of the trust boundary.
    pub fn write_untrusted(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("a file under the root"))
            .expect("create folders");
        std::fs::write(&path, text).expect("write a file");
        path
    }

    /// An executable script at `rel` with `body` (untrusted, like any file
    /// a repository brings).
    pub fn script(&self, rel: &str, body: &str) -> PathBuf {
        let path = self.write_untrusted(rel, body);
        make_executable(&path);
        path
    }

    /// The program with `args`, run in the workspace with the sandbox's
    /// home, config, data and cache, colour off and no `CGP_CONFIG`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(args)
            .current_dir(self.ws())
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("home/.config"))
            .env("XDG_DATA_HOME", self.path("home/.local/share"))
            .env("CGP_DATA_DIR", self.path("data"))
            .env("CONTEXTGRAPH_WORKSPACE_CACHE", self.path("cache"))
            .env("NO_COLOR", "1")
            .env_remove("CGP_CONFIG")
            .env_remove("CLICOLOR_FORCE");
        cmd
    }

    /// Run [`command`](Self::command) to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("the program runs")
    }

    /// A stdio provider as a shell script: acks the handshake declaring
    /// `data_flow`, answers queries with no frames, logs what it receives
    /// (see [`queries_received`](Self::queries_received)).
    pub fn script_provider(&self, name: &str, data_flow: &str) -> PathBuf {
        let log = self.path(&format!("{name}.log"));
        let ack = format!(
            r#"{{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{{"name":"{name}","version":"1.0.0","data_flow":{data_flow}}},"capabilities":{{"query":{{"kinds":["doc"]}}}}}}"#
        );
        let body = format!(
            "#!/bin/sh\nwhile IFS= read -r line; do\n  printf '%s\\n' \"$line\" >> '{}'\n  case \"$line\" in\n    *'\"type\":\"handshake\"'*) printf '%s\\n' '{ack}' ;;\n    *'\"type\":\"query\"'*) printf '%s\\n' '{{\"type\":\"frames\",\"result\":{{\"frames\":[],\"truncated\":false}}}}' ;;\n    *'\"type\":\"shutdown\"'*) exit 0 ;;\n  esac\ndone\n",
            log.display()
        );
        self.script(&format!("{name}.sh"), &body)
    }

    /// How many queries the script provider `name` has received.
    pub fn queries_received(&self, name: &str) -> usize {
        std::fs::read_to_string(self.path(&format!("{name}.log")))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"type\":\"query\""))
            .count()
    }
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = std::fs::metadata(path).expect("metadata").permissions();
    perms.set_mode(0o755);
    std::fs::set_permissions(path, perms).expect("chmod");
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) {}
