//! `cgp inspect http` against an authenticated, TLS-protected provider, end
//! to end with the real binary: `cgp serve docs <DIR> --http 127.0.0.1:0
//! --tls-cert … --tls-key … --token-env VAR` with a certificate from a CA
//! generated here, and `cgp inspect http <https-url> --strict` passing with
//! `--token-env`/`--token-file` and `--ca-cert`; failing (exit 1) without the
//! token, with a wrong one, or without the CA (naming the certificate
//! problem). The token never appears on any stdout or stderr (C8).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::serve_http::{sigterm, spawn_announced};

const CGP: &str = env!("CARGO_BIN_EXE_cgp");
const PATIENCE: Duration = Duration::from_secs(60);

/// The token the server requires, and the variables the tests pass it in.
const TOKEN: &str = "inspect-auth-secret-5f3a9c0e1d2b";
const WRONG: &str = "guessed-but-wrong-77e1c4a0";
const SERVER_VAR: &str = "CGP_TEST_SERVE_AUTH_TOKEN";
const CLIENT_VAR: &str = "CGP_TEST_INSPECT_AUTH_TOKEN";

fn docs_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("retry.md"),
        "# Retry policy\n\nRequests are retried with exponential backoff.\n\n## Timeouts\n\nEach attempt has a 30 second timeout.\n",
    )
    .unwrap();
    dir
}

/// PEM files for the server and the client.
struct Pems {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

/// A self-signed CA and a leaf for `localhost`/`127.0.0.1` signed by it,
/// written into `dir`.
fn pems(dir: &Path) -> Pems {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    let pems = Pems {
        ca: dir.join("ca.pem"),
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    };
    std::fs::write(&pems.ca, ca.pem()).unwrap();
    std::fs::write(&pems.cert, leaf.pem()).unwrap();
    std::fs::write(&pems.key, leaf_key.serialize_pem()).unwrap();
    pems
}

/// `cgp serve docs DIR --http 127.0.0.1:0` over TLS, requiring `TOKEN`;
/// the child, its announced URL, and the rest of its stderr.
fn start(dir: &Path, pems: &Pems) -> (Child, String, mpsc::Receiver<String>) {
    let mut command = Command::new(CGP);
    command
        .args(["serve", "docs"])
        .arg(dir)
        .args(["--http", "127.0.0.1:0", "--token-env", SERVER_VAR])
        .arg("--tls-cert")
        .arg(&pems.cert)
        .arg("--tls-key")
        .arg(&pems.key)
        .env(SERVER_VAR, TOKEN);
    spawn_announced(command)
}

/// `cgp inspect http URL --timeout-ms 10000 EXTRA…`, with `CLIENT_VAR` set
/// to `token` (or removed).
fn inspect(url: &str, token: Option<&str>, extra: &[&std::ffi::OsStr]) -> Output {
    let mut command = Command::new(CGP);
    command
        .args(["inspect", "http", url, "--timeout-ms", "10000"])
        .args(extra)
        .env_remove(SERVER_VAR);
    match token {
        Some(t) => command.env(CLIENT_VAR, t),
        None => command.env_remove(CLIENT_VAR),
    };
    command.output().unwrap()
}

/// Stdout and stderr together, checked to carry neither token (C8).
fn text_without_tokens(what: &str, out: &Output) -> String {
    let text = format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for secret in [TOKEN, WRONG] {
        assert!(
            !text.contains(secret),
            "{what}: C8: a token leaked into the output:\n{text}"
        );
    }
    text
}

#[test]
fn inspect_http_passes_strict_against_a_tls_and_token_protected_server_and_never_shows_the_token() {
    let dir = docs_folder();
    let pem_dir = tempfile::tempdir().unwrap();
    let pems = pems(pem_dir.path());
    let (mut child, url, rest) = start(dir.path(), &pems);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let ca = pems.ca.as_os_str();
    let flag = |s: &'static str| std::ffi::OsStr::new(s);

    // Token from a variable and the test CA: green under --strict.
    let strict_with_env_token_and_ca = [
        flag("--strict"),
        flag("--json"),
        flag("--token-env"),
        flag(CLIENT_VAR),
        flag("--ca-cert"),
        ca,
    ];
    let ok = inspect(&url, Some(TOKEN), &strict_with_env_token_and_ca);
    let text = text_without_tokens("token-env", &ok);
    assert_eq!(ok.status.code(), Some(0), "{text}");
    let report: serde_json::Value = serde_json::from_slice(&ok.stdout).expect("a JSON report");
    let target = report["target"].as_str().unwrap_or_default();
    assert!(
        target.contains(&url) && target.contains("bearer token [redacted]"),
        "the report says a token was sent, not which: {target}"
    );

    // Only the test CA trusted (no web roots): still green, and the report
    // says which roots were trusted.
    let only_ca = [&strict_with_env_token_and_ca[..], &[flag("--only-ca-cert")]].concat();
    let ok = inspect(&url, Some(TOKEN), &only_ca);
    let text = text_without_tokens("only-ca-cert", &ok);
    assert_eq!(ok.status.code(), Some(0), "{text}");
    let report: serde_json::Value = serde_json::from_slice(&ok.stdout).expect("a JSON report");
    let target = report["target"].as_str().unwrap_or_default();
    assert!(target.contains("only extra roots"), "{target}");
    // --only-ca-cert without a CA is a usage error (exit 2), not a run
    // that could trust nothing.
    let usage = inspect(&url, None, &[flag("--only-ca-cert")]);
    assert_eq!(
        usage.status.code(),
        Some(2),
        "{}",
        text_without_tokens("usage", &usage)
    );

    // Token from a file with a trailing newline: trimmed as the server trims it.
    let token_file = pem_dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let ok = inspect(
        &url,
        None,
        &[
            flag("--strict"),
            flag("--token-file"),
            token_file.as_os_str(),
            flag("--ca-cert"),
            ca,
        ],
    );
    let text = text_without_tokens("token-file", &ok);
    assert_eq!(ok.status.code(), Some(0), "{text}");

    // No token: refused, and the report says why.
    let out = inspect(&url, None, &[flag("--strict"), flag("--ca-cert"), ca]);
    let text = text_without_tokens("no token", &out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("401") && text.contains("none was sent"),
        "{text}"
    );

    // A wrong token: refused, the token named nowhere.
    let out = inspect(
        &url,
        Some(WRONG),
        &[
            flag("--strict"),
            flag("--token-env"),
            flag(CLIENT_VAR),
            flag("--ca-cert"),
            ca,
        ],
    );
    let text = text_without_tokens("wrong token", &out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("401") && text.contains("refused"), "{text}");

    // The right token but not the CA: the certificate is not trusted, and
    // the failure says it is a certificate problem.
    let out = inspect(
        &url,
        Some(TOKEN),
        &[flag("--strict"), flag("--token-env"), flag(CLIENT_VAR)],
    );
    let text = text_without_tokens("no CA", &out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("certificate") && text.contains("--ca-cert"),
        "a TLS/certificate reason and the flag that fixes it: {text}"
    );

    sigterm(&child);
    assert!(child.wait().unwrap().success(), "SIGTERM is a clean stop");
    let log = rest.recv_timeout(PATIENCE).unwrap();
    assert!(
        log.contains("status=200") && log.contains("status=401"),
        "{log}"
    );
    for secret in [TOKEN, WRONG] {
        assert!(!log.contains(secret), "the server log has no token: {log}");
    }
}

#[test]
fn unusable_token_flags_exit_1_naming_the_variable_or_file_but_not_the_token() {
    // Nothing listens here: these fail before any request is made.
    let url = "https://127.0.0.1:9/cgp";
    let flag = std::ffi::OsStr::new;

    let out = inspect(url, None, &[flag("--token-env"), flag(CLIENT_VAR)]);
    let text = text_without_tokens("unset", &out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(CLIENT_VAR) && text.contains("not set"),
        "{text}"
    );

    let out = inspect(url, Some(" \n"), &[flag("--token-env"), flag(CLIENT_VAR)]);
    let text = text_without_tokens("empty", &out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(CLIENT_VAR) && text.contains("empty"),
        "{text}"
    );

    let out = inspect(
        url,
        Some(&format!("{TOKEN} {WRONG}")),
        &[flag("--token-env"), flag(CLIENT_VAR)],
    );
    let text = text_without_tokens("not header-safe", &out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains(CLIENT_VAR), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-token-file");
    let out = inspect(url, None, &[flag("--token-file"), missing.as_os_str()]);
    let text = text_without_tokens("missing file", &out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("no-such-token-file"), "{text}");

    let not_pem = dir.path().join("not-a-ca.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    let out = inspect(url, None, &[flag("--ca-cert"), not_pem.as_os_str()]);
    let text = text_without_tokens("bad CA", &out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("not-a-ca.pem"), "{text}");

    let out = inspect(
        url,
        Some(TOKEN),
        &[
            flag("--token-env"),
            flag(CLIENT_VAR),
            flag("--token-file"),
            missing.as_os_str(),
        ],
    );
    let text = text_without_tokens("both", &out);
    assert_eq!(out.status.code(), Some(2), "one token source only: {text}");
}
