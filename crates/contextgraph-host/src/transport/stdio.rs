//! Spawning a provider process: scrubbed environment, own process group,
//! bounded stderr capture, and a group kill on drop.
//!
//! This is transport only — bytes and processes, no protocol and no policy.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Notify;
use tokio::time::{timeout_at, Instant};

use contextgraph_types::display_text::bounded;

/// Environment variables a provider inherits by default. Everything else is
/// scrubbed: a provider has no business seeing the host's API keys, tokens
/// or session secrets unless the embedder passes them on deliberately.
pub const DEFAULT_ENV_ALLOW_LIST: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ",
];

/// How to start a stdio provider.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Variables passed through from the host's environment when set
    /// (default: [`DEFAULT_ENV_ALLOW_LIST`]).
    pub env_allow: Vec<OsString>,
    /// Variables set explicitly, after the pass-through.
    pub env_set: Vec<(OsString, OsString)>,
    /// Working directory (default: the host's).
    pub current_dir: Option<PathBuf>,
    /// How much of the provider's stderr is kept for crash reports (default
    /// 8 KiB, the most recent bytes). Stderr is never copied to the host's terminal.
    pub stderr_tail_bytes: usize,
}

impl StdioCommand {
    /// `program` with no arguments and the default allow-list.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        StdioCommand {
            program: program.into(),
            args: Vec::new(),
            env_allow: DEFAULT_ENV_ALLOW_LIST.iter().map(OsString::from).collect(),
            env_set: Vec::new(),
            current_dir: None,
            stderr_tail_bytes: 8 * 1024,
        }
    }

    /// Add an argument.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Add arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Pass `name` through from the host's environment too.
    #[must_use]
    pub fn allow_env(mut self, name: impl AsRef<OsStr>) -> Self {
        self.env_allow.push(name.as_ref().to_owned());
        self
    }

    /// Set `name=value` in the provider's environment.
    #[must_use]
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env_set
            .push((name.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// A short label for errors: the program's file name.
    pub fn label(&self) -> String {
        let name = self
            .program
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.program.display().to_string());
        bounded(&name, 80)
    }

    /// The `PATH` the provider will see: an explicit one, else the host's
    /// when it is on the allow-list, else none.
    fn child_path(&self) -> Option<OsString> {
        if let Some((_, value)) = self.env_set.iter().rev().find(|(n, _)| n == "PATH") {
            return Some(value.clone());
        }
        self.env_allow
            .iter()
            .any(|n| n == "PATH")
            .then(|| std::env::var_os("PATH"))
            .flatten()
    }

    /// Start the process with piped stdio in its own process group.
    ///
    /// The spawn stays on the standard library's `posix_spawn` path (a
    /// `vfork`-style clone, whose cost does not grow with the host's memory)
    /// rather than `fork` + `exec`: no `pre_exec` hook, the process group set
    /// through `process_group`, and a bare program name looked up here, in
    /// the `PATH` the provider gets — with a scrubbed environment the
    /// standard library would otherwise fall back to `fork` to let `execvp`
    /// search the child's `PATH`.
    pub fn spawn(&self) -> Result<(ChildProcess, ChildStdin, ChildStdout), std::io::Error> {
        let resolved = if self.program.as_os_str().as_bytes().contains(&b'/') {
            None
        } else {
            self.child_path()
                .and_then(|path| resolve_in_path(&self.program, &path))
        };
        let mut cmd = Command::new(resolved.as_deref().unwrap_or(&self.program));
        if resolved.is_some() {
            // argv[0] stays the name as given, as `execvp` would pass it.
            cmd.arg0(&self.program);
        }
        cmd.args(&self.args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for name in &self.env_allow {
            if let Some(value) = std::env::var_os(name) {
                cmd.env(name, value);
            }
        }
        for (name, value) in &self.env_set {
            cmd.env(name, value);
        }
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        // Its own group, so that killing the group also ends anything the
        // provider spawned, and a Ctrl-C aimed at the host's group is the
        // host's to handle.
        cmd.process_group(0);
        let mut child = cmd.spawn()?;
        let missing = || std::io::Error::other("child stdio was not piped");
        let stdin = child.stdin.take().ok_or_else(missing)?;
        let stdout = child.stdout.take().ok_or_else(missing)?;
        let stderr = child.stderr.take().ok_or_else(missing)?;
        let pgid = child.id().and_then(|id| i32::try_from(id).ok());
        let tail = Arc::new(StderrTail::new(self.stderr_tail_bytes));
        tokio::spawn(capture_stderr(stderr, Arc::clone(&tail)));
        Ok((
            ChildProcess {
                child: Mutex::new(child),
                pgid,
                tail,
                reaped: AtomicBool::new(false),
            },
            stdin,
            stdout,
        ))
    }
}

/// Where `execvp` would find `program` along `path` (a `PATH` value): the
/// first executable regular file. `None` when it is not found, or when an
/// entry is relative (empty entries are the working directory) before any
/// match, so that those cases keep the standard library's own search.
fn resolve_in_path(program: &Path, path: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    for dir in std::env::split_paths(path) {
        if !dir.is_absolute() {
            return None;
        }
        let candidate = dir.join(program);
        if let Ok(meta) = std::fs::metadata(&candidate) {
            if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
                return Some(candidate);
            }
        }
    }
    None
}

/// The last bytes a provider wrote to stderr.
#[derive(Debug)]
pub struct StderrTail {
    cap: usize,
    bytes: Mutex<VecDeque<u8>>,
    done: Mutex<bool>,
    closed: Notify,
}

impl StderrTail {
    fn new(cap: usize) -> Self {
        StderrTail {
            cap,
            bytes: Mutex::new(VecDeque::with_capacity(cap.min(64 * 1024))),
            done: Mutex::new(false),
            closed: Notify::new(),
        }
    }

    fn push(&self, chunk: &[u8]) {
        let mut b = self.bytes.lock().unwrap_or_else(|p| p.into_inner());
        let chunk = &chunk[chunk.len().saturating_sub(self.cap)..];
        let overflow = (b.len() + chunk.len()).saturating_sub(self.cap);
        let len = b.len();
        b.drain(..overflow.min(len));
        b.extend(chunk);
    }

    /// The captured tail as one escaped line (newlines shown as `\n`).
    pub fn text(&self) -> String {
        let b = self.bytes.lock().unwrap_or_else(|p| p.into_inner());
        let (a, c) = b.as_slices();
        let mut all = Vec::with_capacity(a.len() + c.len());
        all.extend_from_slice(a);
        all.extend_from_slice(c);
        bounded(String::from_utf8_lossy(&all).trim_end(), self.cap)
    }

    /// Wait until the provider closed stderr, or `deadline`.
    pub async fn wait_closed(&self, deadline: Instant) {
        let notified = self.closed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if *self.done.lock().unwrap_or_else(|p| p.into_inner()) {
            return;
        }
        let _ = timeout_at(deadline, notified).await;
    }
}

async fn capture_stderr(mut stderr: tokio::process::ChildStderr, tail: Arc<StderrTail>) {
    let mut buf = vec![0u8; 4096];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => tail.push(&buf[..n]),
        }
    }
    *tail.done.lock().unwrap_or_else(|p| p.into_inner()) = true;
    tail.closed.notify_waiters();
}

/// A running provider process. Dropping it kills its whole process group.
#[derive(Debug)]
pub struct ChildProcess {
    child: Mutex<Child>,
    pgid: Option<i32>,
    tail: Arc<StderrTail>,
    /// Set once we reaped the leader: from then on its id may be reused and
    /// must never be signalled.
    reaped: AtomicBool,
}

impl ChildProcess {
    /// The captured stderr.
    pub fn stderr_tail(&self) -> &StderrTail {
        &self.tail
    }

    /// The process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.lock().unwrap_or_else(|p| p.into_inner()).id()
    }

    /// The exit status if the process has exited, polling until `deadline`.
    pub async fn exit_status(&self, deadline: Instant) -> Option<ExitStatus> {
        loop {
            if let Ok(Some(status)) = self
                .child
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .try_wait()
            {
                self.reaped.store(true, Ordering::SeqCst);
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Kill the process group (SIGKILL): the provider and anything it spawned.
    pub fn kill(&self) {
        if self.reaped.load(Ordering::SeqCst) {
            return;
        }
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) with a negative pid signals a process group; it
            // touches no memory of ours. The group was created for this child
            // by `process_group(0)`, so the id is the child's own pid.
            #[allow(unsafe_code)] // one of the crate's three FFI sites
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
        let _ = self
            .child
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .start_kill();
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // Kill the whole group, including anything the provider left
        // behind; `kill` skips a group whose leader we already reaped.
        self.kill();
    }
}

/// Describe an exit status for a crash report.
pub fn describe_exit(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => "still running".to_owned(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => s.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn bare_names_are_found_like_execvp_would() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        file(a.path(), "tool", 0o644); // not executable: skipped, as execvp does
        let exe = file(b.path(), "tool", 0o755);
        let path = std::env::join_paths([a.path(), b.path()]).unwrap();
        assert_eq!(resolve_in_path(Path::new("tool"), &path), Some(exe));
        assert_eq!(resolve_in_path(Path::new("missing"), &path), None);
        // A directory of that name is not a program.
        std::fs::create_dir(a.path().join("dir")).unwrap();
        assert_eq!(resolve_in_path(Path::new("dir"), &path), None);
    }

    #[test]
    fn relative_path_entries_leave_the_search_to_the_standard_library() {
        let b = tempfile::tempdir().unwrap();
        file(b.path(), "tool", 0o755);
        let path = std::env::join_paths([Path::new("rel"), b.path()]).unwrap();
        assert_eq!(resolve_in_path(Path::new("tool"), &path), None);
        let empty_first = format!(":{}", b.path().display());
        assert_eq!(
            resolve_in_path(Path::new("tool"), OsStr::new(&empty_first)),
            None
        );
    }

    #[test]
    fn the_providers_path_wins_over_the_hosts() {
        let cmd = StdioCommand::new("tool").env("PATH", "/opt/one");
        assert_eq!(cmd.child_path(), Some(OsString::from("/opt/one")));
        let mut scrubbed = StdioCommand::new("tool");
        scrubbed.env_allow.clear();
        assert_eq!(scrubbed.child_path(), None);
    }
}
