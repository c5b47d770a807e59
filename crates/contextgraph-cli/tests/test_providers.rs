//! `cgp providers` end to end: real providers (the built-in workspace
//! provider, `cgp serve docs` over stdio, a shell-script egress provider),
//! the table and the JSON, consent state and health.
#![allow(dead_code)]

/// A sandbox: a workspace (with `.git`, so the cgp.toml walk stops there),
/// and a home, config dir and data dir of its own, so the user's real
/// configuration and consent store are never read or written.
struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        let s = Sandbox { root };
        s.write("ws/.git/HEAD", "ref: refs/heads/main\n");
        s.write(
            "ws/src/retry.rs",
            "/// Retries a request with exponential backoff.\npub fn retry_with_backoff(attempts: u32) -> u32 {\n    attempts * 2\n}\n",
        );
        s
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.root.path().join(rel)
    }

    fn ws(&self) -> std::path::PathBuf {
        self.path("ws")
    }

    fn write(&self, rel: &str, text: &str) -> std::path::PathBuf {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        // The workspace cgp.toml a test writes is the user's own project's:
        // trusted, as `cgp trust` records it (an invalid one is not).
        if rel == "ws/cgp.toml" {
            let _ = self.command(&["trust", path.to_str().unwrap()]).output();
        }
        path
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cgp"));
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

    fn run(&self, args: &[&str]) -> std::process::Output {
        self.command(args).output().expect("cgp runs")
    }

    /// A stdio provider as a shell script: acks the handshake declaring
    /// `data_flow`, answers queries with no frames, logs what it receives.
    fn script_provider(&self, name: &str, data_flow: &str) -> std::path::PathBuf {
        let log = self.path(&format!("{name}.log"));
        let ack = format!(
            r#"{{"type":"handshake_ack","protocol_version":"contextgraph/1.0-draft","provider":{{"name":"{name}","version":"1.0.0","data_flow":{data_flow}}},"capabilities":{{"query":{{"kinds":["doc"]}}}}}}"#
        );
        let body = format!(
            "#!/bin/sh\nwhile IFS= read -r line; do\n  printf '%s\\n' \"$line\" >> '{}'\n  case \"$line\" in\n    *'\"type\":\"handshake\"'*) printf '%s\\n' '{ack}' ;;\n    *'\"type\":\"query\"'*) printf '%s\\n' '{{\"type\":\"frames\",\"result\":{{\"frames\":[],\"truncated\":false}}}}' ;;\n    *'\"type\":\"shutdown\"'*) exit 0 ;;\n  esac\ndone\n",
            log.display()
        );
        let path = self.write(&format!("{name}.sh"), &body);
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
        path
    }

    fn queries_received(&self, name: &str) -> usize {
        std::fs::read_to_string(self.path(&format!("{name}.log")))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains("\"type\":\"query\""))
            .count()
    }
}

const EGRESS: &str = r#"{"reads":true,"writes":false,"egress":true}"#;
const SCOPED: &str =
    r#"{"reads":true,"writes":false,"egress":true,"egress_scopes":["third-party-model"]}"#;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn toml_str(p: &std::path::Path) -> String {
    format!("{:?}", p.display().to_string())
}

fn docs_over_stdio(s: &Sandbox) -> String {
    s.write(
        "ws/docs/retry.md",
        "# Retry policy\n\nThe client doubles the delay.\n",
    );
    format!(
        "[providers.notes]\ncommand = {}\nargs = [\"serve\", \"docs\", {}]\n",
        toml_str(std::path::Path::new(env!("CARGO_BIN_EXE_cgp"))),
        toml_str(&s.path("ws/docs"))
    )
}

#[test]
fn the_table_shows_each_provider_with_version_transport_data_flow_capabilities_consent_and_health()
{
    let s = Sandbox::new();
    s.write("ws/cgp.toml", &docs_over_stdio(&s));
    let out = s.run(&["providers"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    for col in [
        "NAME",
        "VERSION",
        "TRANSPORT",
        "DATA FLOW",
        "CAPABILITIES",
        "CONSENT",
        "HEALTH",
    ] {
        assert!(lines[0].contains(col), "{text}");
    }
    let notes = lines
        .iter()
        .find(|l| l.starts_with("notes "))
        .expect("a row for notes");
    assert!(
        notes.contains("stdio (") && notes.contains("reads") && notes.contains("doc"),
        "{notes}"
    );
    assert!(
        notes.contains("not needed") && notes.contains("ok ("),
        "{notes}"
    );
    let ws = lines
        .iter()
        .find(|l| l.starts_with("workspace "))
        .expect("a row for workspace");
    assert!(ws.contains("in-process") && ws.contains("ok ("), "{ws}");
}

#[test]
fn c1_json_reports_an_egress_provider_as_needing_consent_with_the_exact_command_and_sends_it_nothing(
) {
    let s = Sandbox::new();
    let script = s.script_provider("egress-test", EGRESS);
    let file = s.write(
        "conf/cgp.toml",
        &format!("[providers.remote]\ncommand = {}\n", toml_str(&script)),
    );
    let out = s.run(&["providers", "--json", "--config", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let remote = v
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "remote")
        .unwrap();
    assert_eq!(remote["provider_id"], "egress-test");
    assert_eq!(remote["version"], "1.0.0");
    assert_eq!(remote["data_flow"]["egress"], true);
    assert_eq!(remote["consent"]["state"], "required");
    assert_eq!(
        remote["consent"]["command"],
        format!("cgp consent grant remote --config {}", file.display())
    );
    assert_eq!(remote["health"]["status"], "ok");
    assert_eq!(
        s.queries_received("egress-test"),
        0,
        "only the handshake is exchanged"
    );
}

#[test]
fn a_provider_that_cannot_start_is_shown_down_with_its_error_and_the_exit_code_is_1() {
    let s = Sandbox::new();
    s.write(
        "ws/cgp.toml",
        "[providers.ghost]\ncommand = \"/nonexistent/provider\"\n",
    );
    let out = s.run(&["providers"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let ghost = text
        .lines()
        .find(|l| l.starts_with("ghost "))
        .expect("a row for ghost");
    assert!(
        ghost.contains("DOWN:") && ghost.contains("could not start"),
        "{ghost}"
    );
    assert!(
        stderr(&out).contains("not healthy: ghost"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn help_has_examples_and_exit_codes() {
    let s = Sandbox::new();
    let out = s.run(&["providers", "--help"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(
        text.contains("Examples:") && text.contains("Exit codes:"),
        "{text}"
    );
    assert!(!text.contains('\x1b'));
}

/// `cgp serve docs --http` on a free loopback port, requiring `token`.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl HttpServer {
    fn start(s: &Sandbox, token: &str) -> Self {
        s.write(
            "ws/docs/retry.md",
            "# Retry policy\n\nThe client doubles the backoff delay.\n",
        );
        let mut child = s
            .command(&[
                "serve",
                "docs",
                "docs",
                "--http",
                "127.0.0.1:0",
                "--token-env",
                "SERVE_TOKEN",
            ])
            .env("SERVE_TOKEN", token)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("cgp serve starts");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(url) = line.strip_prefix("cgp serve: listening on ") {
                    let _ = tx.send(url.trim().to_owned());
                }
            }
        });
        let url = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the server says where it listens");
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn c8_an_http_provider_gets_its_bearer_token_from_the_named_variable_and_it_is_never_shown() {
    let s = Sandbox::new();
    let server = HttpServer::start(&s, "tok-right-123");
    s.write(
        "ws/cgp.toml",
        &format!(
            "[providers.workspace]\nenabled = false\n[providers.remote-docs]\nurl = {:?}\ntoken_env = \"CLIENT_TOKEN\"\n",
            server.url
        ),
    );
    let out = s
        .command(&["providers", "--json"])
        .env("CLIENT_TOKEN", "tok-right-123")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["health"]["status"], "ok", "{v}");
    assert_eq!(v[0]["transport"], format!("http ({})", server.url));
    // Loopback and egress: false: no consent needed (C4 applies to remote hosts only).
    assert_eq!(v[0]["consent"]["state"], "not_required", "{v}");
    let out = s
        .command(&["context", "retry backoff"])
        .env("CLIENT_TOKEN", "tok-right-123")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("doubles the backoff delay"),
        "{}",
        stdout(&out)
    );

    let out = s
        .command(&["providers"])
        .env("CLIENT_TOKEN", "tok-wrong-456")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(all.contains("DOWN:"), "{all}");
    assert!(
        !all.contains("tok-wrong-456") && !all.contains("tok-right-123"),
        "{all}"
    );

    let out = s
        .command(&["providers"])
        .env_remove("CLIENT_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("export CLIENT_TOKEN"),
        "{}",
        stdout(&out)
    );
}
