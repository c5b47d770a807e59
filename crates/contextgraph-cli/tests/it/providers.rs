//! `cgp providers` end to end: real providers (the built-in workspace
//! provider, `cgp serve docs` over stdio, a shell-script egress provider),
//! the table and the JSON, consent state and health.

use contextgraph_testkit::sandbox::Sandbox;

const EGRESS: &str = r#"{"reads":true,"writes":false,"egress":true}"#;

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
    let s = Sandbox::new(crate::CGP);
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
    let s = Sandbox::new(crate::CGP);
    let script = s.script_provider("egress-test", EGRESS);
    let file = s.write(
        "conf/cgp.toml",
        &format!("[providers.remote]\ncommand = {}\n", toml_str(&script)),
    );
    let out = s.run(&["providers", "--json", "--config", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format_version"], 1, "{v}");
    let remote = v["providers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "remote")
        .unwrap();
    // Keyed by its cgp.toml name; the announced name beside it.
    assert_eq!(remote["provider_id"], "remote");
    assert_eq!(remote["announced_name"], "egress-test");
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
    let s = Sandbox::new(crate::CGP);
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
        ghost.contains("DOWN:") && ghost.contains("cannot run `/nonexistent/provider`"),
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
    let s = Sandbox::new(crate::CGP);
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
    let s = Sandbox::new(crate::CGP);
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
    assert_eq!(v["providers"][0]["health"]["status"], "ok", "{v}");
    assert_eq!(
        v["providers"][0]["transport"],
        format!("http ({})", server.url)
    );
    // Loopback and egress: false: no consent needed (C4 applies to remote hosts only).
    assert_eq!(v["providers"][0]["consent"]["state"], "not_required", "{v}");
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
