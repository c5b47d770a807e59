//! `cgp inspect stdio -- <program> [args…]` and `cgp inspect http <url>`:
//! run the conformance suite against a provider and print the report.
//! `cgp inspect host`: run the host-side suite — this build's host and
//! composer against adversarial providers — and print the same report
//! (`target` = `"host"`). Its stdio adversaries are this binary re-run
//! with `contextgraph_conformance_host`'s adversary variable set (see
//! `main`), so nothing outside `cgp` is needed and no command exposes them.
//!
//! Exit codes: 0 when no check failed (with `--strict`, none was skipped
//! either), 1 when something failed (the report says what; stderr repeats
//! the count), 2 on a usage error. With `--json` stdout carries only the
//! JSON report, whose shape is documented in `contextgraph_conformance::report`.
//! A closed stdout is not an error: the verdict is still the exit code.
//! `cgp inspect http` reaches an authenticated, TLS-protected provider with
//! `--token-env`/`--token-file` and `--ca-cert` (see [`http`]); an unusable
//! token or CA flag exits 1 before anything is sent.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use contextgraph_conformance::{run_suite, Report, SuiteOptions, Target};
use contextgraph_conformance_host::{run_host_suite, AdversaryCommand, HostSuiteOptions};

use super::CommandError;

pub mod http;

use http::HttpAuthArgs;

/// Arguments of `cgp inspect`.
#[derive(Debug, Args)]
#[command(subcommand_required = true, arg_required_else_help = true)]
pub struct InspectArgs {
    /// How to reach the provider.
    #[command(subcommand)]
    pub target: InspectTarget,
}

/// The targets `cgp inspect` can check.
#[derive(Debug, Subcommand)]
pub enum InspectTarget {
    /// Spawn a provider and check it over its stdin/stdout.
    #[command(
        after_help = "Examples:\n  cgp inspect stdio -- contextgraph-provider-docs ./docs\n  cgp inspect stdio --strict --json -- cgp serve docs ./docs > report.json"
    )]
    Stdio(StdioArgs),
    /// Check a provider served over HTTP (one envelope per POST).
    #[command(
        after_help = "Examples:\n  cgp inspect http http://127.0.0.1:8700/cgp --strict\n  cgp inspect http https://127.0.0.1:8700/cgp --strict --token-env CGP_TOKEN --ca-cert ca.pem\n  cgp inspect http https://cgp.internal:8700/cgp --ca-cert corp-ca.pem --only-ca-cert\n  cgp inspect http https://cgp.example.org/cgp --token-file ~/.config/cgp/token --json > report.json\n\nThe token is read from a variable or a file, never from the command line; it is sent as\n`Authorization: Bearer …` on every request and never printed. Redirects are not followed.\n\nExit codes: 0 no check failed (with --strict: none skipped), 1 a check failed or a token/CA\nflag is unusable, 2 usage error."
    )]
    Http(HttpArgs),
    /// Check this build's host and composer against adversarial providers,
    /// each paired with a well-behaved twin.
    #[command(
        after_help = "Examples:\n  cgp inspect host\n  cgp inspect host --strict --json > host-report.json\n\nExit codes: 0 no check failed (with --strict: none skipped), 1 a check failed, 2 usage error."
    )]
    Host(HostArgs),
}

/// Arguments of `cgp inspect host`.
#[derive(Debug, Args)]
pub struct HostArgs {
    /// Print only the JSON report on stdout.
    #[arg(long)]
    pub json: bool,

    /// Fail when a check is skipped, not only when one fails (for CI).
    #[arg(long)]
    pub strict: bool,

    /// Deadline of the requests that should succeed, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub timeout_ms: u64,
}

/// Options shared by every target.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Print only the JSON report on stdout.
    #[arg(long)]
    pub json: bool,

    /// Fail when a check is skipped, not only when one fails (for CI).
    #[arg(long)]
    pub strict: bool,

    /// Longest wait for any one reply, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 2000)]
    pub timeout_ms: u64,

    /// Time the provider gets to exit after `shutdown`, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1500)]
    pub shutdown_grace_ms: u64,

    /// A goal the provider's content matches, tried before the built-in ones
    /// (repeatable). Checks that judge frames need an answer with frames.
    #[arg(long, value_name = "TEXT")]
    pub goal: Vec<String>,
}

/// Arguments of `cgp inspect stdio`.
#[derive(Debug, Args)]
pub struct StdioArgs {
    /// Suite options.
    #[command(flatten)]
    pub suite: SuiteArgs,

    /// The provider command line, after `--`.
    #[arg(last = true, required = true, value_name = "PROGRAM [ARGS]...")]
    pub command: Vec<OsString>,
}

/// Arguments of `cgp inspect http`.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// The provider's endpoint (http:// or https://).
    #[arg(value_name = "URL")]
    pub url: String,

    /// Suite options.
    #[command(flatten)]
    pub suite: SuiteArgs,

    /// Bearer token and trusted CAs.
    #[command(flatten)]
    pub auth: HttpAuthArgs,
}

/// The suite found problems; the report on stdout has the details.
#[derive(Debug, thiserror::Error)]
#[error("{target}: {failed} check(s) failed{skipped}; see the report above for the evidence and the rule each one breaks")]
struct InspectFailed {
    target: String,
    failed: usize,
    skipped: String,
}

/// Run `cgp inspect …`.
pub fn run(args: InspectArgs) -> Result<(), CommandError> {
    let (target, suite) = match args.target {
        InspectTarget::Host(a) => return run_host(&a),
        InspectTarget::Stdio(a) => {
            let mut words = a.command.into_iter();
            let program = PathBuf::from(words.next().unwrap_or_default());
            (Target::stdio(program, words), a.suite)
        }
        InspectTarget::Http(a) => (Target::http_with(a.url, a.auth.options()?), a.suite),
    };
    let mut options = SuiteOptions::default()
        .strict(suite.strict)
        .with_request_timeout(Duration::from_millis(suite.timeout_ms.max(1)))
        .with_shutdown_grace(Duration::from_millis(suite.shutdown_grace_ms));
    for goal in suite.goal.into_iter().rev() {
        options = options.with_goal_first(goal);
    }
    let report = run_suite(&target, &options);
    print_report(&report, suite.json);
    verdict(&report)
}

/// `cgp inspect host`: the stdio adversaries are this very binary, re-run
/// as one (`main` serves it before parsing any arguments).
fn run_host(args: &HostArgs) -> Result<(), CommandError> {
    let exe = std::env::current_exe().map_err(|e| {
        format!("cannot locate the cgp binary to run the host suite's adversaries: {e}")
    })?;
    let options = HostSuiteOptions::default()
        .strict(args.strict)
        .with_request_timeout(Duration::from_millis(args.timeout_ms.max(1)))
        .with_adversary(AdversaryCommand::reexec(exe));
    let report = run_host_suite(&options);
    print_report(&report, args.json);
    verdict(&report)
}

/// Exit 0 on a passing report, otherwise an error naming what failed.
fn verdict(report: &Report) -> Result<(), CommandError> {
    if report.passed() {
        return Ok(());
    }
    let skipped = if report.strict && report.summary.skipped > 0 {
        format!(
            " and {} were skipped under --strict",
            report.summary.skipped
        )
    } else {
        String::new()
    };
    Err(Box::new(InspectFailed {
        target: report.target.clone(),
        failed: report.summary.failed,
        skipped,
    }))
}

/// Print the report; a closed stdout (`cgp inspect … | head`) is ignored.
fn print_report(report: &Report, json: bool) {
    let text = if json {
        let value = serde_json::to_value(report)
            .map(|v| crate::output::json_document("checks", v))
            .and_then(|v| serde_json::to_string_pretty(&v));
        let mut t = value.unwrap_or_else(|_| report.to_json());
        t.push('\n');
        t
    } else {
        report.render_text()
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
