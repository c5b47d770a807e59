//! The stdio guarantees, against real child processes running the
//! misbehaving provider's modes: crash isolation, wire noise, correlation
//! ids (H4), the line cap and shutdown (R2). (Deadlines are checked on
//! scripted pipe peers, see `peer`, so that no process must sleep.)

use std::sync::Arc;
use std::time::{Duration, Instant};

use contextgraph_host::{
    ConnectionOptions, Host, HostOptions, ProviderClient, RespawnPolicy, StdioOptions,
    StdioProvider,
};
use contextgraph_types::ContextQuery;

use super::adversary::{answer, honest_frames, Scripted};
use super::bridge::seen;
use super::seen::Seen;
use super::{pair, AdversaryCommand, HostSuiteOptions};
use contextgraph_conformance::outcome::{Evidence, Outcome};

/// The line cap the suite's host runs with: small, so the misbehaving
/// provider's 17 MiB noise line and its endless line are both over it.
const LINE_CAP: usize = 1024 * 1024;

fn query() -> ContextQuery {
    ContextQuery::new("retry policy, backoff and timeouts", 8, 8000)
}

fn stdio_options(options: &HostSuiteOptions) -> StdioOptions {
    let mut connection = ConnectionOptions::default();
    connection.max_line_bytes = LINE_CAP;
    connection.handshake_timeout = options.request_timeout;
    StdioOptions {
        connection,
        respawn: RespawnPolicy {
            enabled: false,
            ..RespawnPolicy::default()
        },
        shutdown_grace: options.shutdown_grace,
    }
}

fn adversary(options: &HostSuiteOptions) -> Result<&AdversaryCommand, Outcome> {
    options
        .adversary
        .as_ref()
        .ok_or_else(|| Outcome::skipped("no stdio adversary program"))
}

/// A host with stdio providers `(mode, name, extra args)`, each added
/// (spawned and handshaken) now; the clients are returned for diagnostics.
async fn stdio_host(
    options: &HostSuiteOptions,
    modes: &[(&str, &str, &[&str])],
) -> Result<(Host, Vec<Arc<StdioProvider>>), Outcome> {
    let cmd = adversary(options)?;
    let mut host = Host::new(HostOptions::default());
    let mut clients = Vec::new();
    for (mode, name, extra) in modes {
        let client = Arc::new(StdioProvider::new(
            cmd.command(mode, name, extra),
            stdio_options(options),
        ));
        let dyn_client: Arc<dyn ProviderClient> = client.clone();
        if let Err(e) = host.add(dyn_client, options.request_timeout).await {
            host.shutdown().await;
            return Err(Outcome::fail(format!(
                "the {mode} adversary ({name}) could not be added: {e}; is the adversary program a misbehaving provider?"
            )));
        }
        clients.push(client);
    }
    Ok((host, clients))
}

/// Crash decision: the crasher is reported crashed with its stderr tail;
/// both twins keep the same accepted frames across two fan-outs.
pub(crate) fn decide_crash(twins: &[(&str, Seen, Seen)], crasher: &Seen) -> Outcome {
    let mut e = Evidence::default();
    for (name, first, second) in twins {
        if first.accepted_some() && first.ids() == second.ids() {
            e.note(format!(
                "twin {name}: {first} in both fan-outs, the same frames"
            ));
        } else {
            e.fail(format!(
                "twin {name}: {first}, then {second}; a crash beside it must not cost it its frames"
            ));
        }
    }
    match crasher {
        Seen::Crashed { stderr_tail } if !stderr_tail.is_empty() => {
            e.note(format!("adversary crash-on-query: {crasher}"))
        }
        other => e.fail(format!(
            "adversary crash-on-query: {other}; a correct host reports it crashed, with its stderr tail"
        )),
    }
    e.finish()
}

pub(crate) async fn crash_isolation(options: &HostSuiteOptions) -> Outcome {
    let (mut host, _clients) = match stdio_host(
        options,
        &[
            ("normal", "stdio-twin", &[]),
            ("crash-on-query", "crasher", &[]),
        ],
    )
    .await
    {
        Ok(h) => h,
        Err(o) => return o,
    };
    if let Err(e) = host
        .add_in_process(Scripted::new("in-process-twin", |_| {
            answer(honest_frames("twin", 2))
        }))
        .await
    {
        return Outcome::fail(format!("adding the in-process twin: {e}"));
    }
    let first = host.query_all(&query(), options.request_timeout).await;
    let second = host.query_all(&query(), options.request_timeout).await;
    host.shutdown().await;
    decide_crash(
        &[
            (
                "stdio-twin",
                seen(&first, "stdio-twin"),
                seen(&second, "stdio-twin"),
            ),
            (
                "in-process-twin",
                seen(&first, "in-process-twin"),
                seen(&second, "in-process-twin"),
            ),
        ],
        &seen(&first, "crasher"),
    )
}

/// What the host's reader counted on one connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Noise {
    pub garbage: u64,
    pub oversized: u64,
    pub unknown: u64,
}

/// Noise decision: both answered twice with the same frames; the noise was
/// seen (so it really was on the wire) and survived.
pub(crate) fn decide_noise(twin: (&Seen, &Seen), noisy: (&Seen, &Seen), noise: Noise) -> Outcome {
    let mut e = Evidence::default();
    pair(
        &mut e,
        "normal",
        twin.0,
        Seen::accepted_some,
        "accepts the clean provider's frames",
        "garbage-lines (first query)",
        noisy.0,
        |s| s.accepted_some() && s.ids() == twin.0.ids(),
        "skips the noise and accepts the same frames as the clean twin",
    );
    if noisy.1.accepted_some() && noisy.1.ids() == noisy.0.ids() {
        e.note("garbage-lines (second query): answered again, the session survived");
    } else {
        e.fail(format!(
            "garbage-lines (second query): {}; noise must not kill the connection or hang later requests",
            noisy.1
        ));
    }
    if noise.garbage > 0 && noise.oversized > 0 && noise.unknown > 0 {
        e.note(format!(
            "the host counted {} garbage, {} oversized, {} unknown-type line(s) and ignored them",
            noise.garbage, noise.oversized, noise.unknown
        ));
    } else {
        e.fail(format!(
            "the host's diagnostics show {noise:?}: the noise was not recognised as such"
        ));
    }
    e.finish()
}

pub(crate) async fn wire_noise(options: &HostSuiteOptions) -> Outcome {
    let (host, clients) = match stdio_host(
        options,
        &[("normal", "clean", &[]), ("garbage-lines", "noisy", &[])],
    )
    .await
    {
        Ok(h) => h,
        Err(o) => return o,
    };
    let first = host.query_all(&query(), options.request_timeout).await;
    let second = host.query_all(&query(), options.request_timeout).await;
    let noise = clients
        .get(1)
        .and_then(|c| c.diagnostics())
        .map(|d| Noise {
            garbage: d.garbage_lines,
            oversized: d.oversized_lines,
            unknown: d.unknown_envelopes,
        })
        .unwrap_or_default();
    host.shutdown().await;
    decide_noise(
        (&seen(&first, "clean"), &seen(&second, "clean")),
        (&seen(&first, "noisy"), &seen(&second, "noisy")),
        noise,
    )
}

/// H4 decision: each id-breaking adversary gets a typed correlation error
/// (not a timeout), the twin its frames.
pub(crate) fn decide_correlation(twin: &Seen, adversaries: &[(&str, Seen)]) -> Outcome {
    let mut e = Evidence::default();
    for (name, s) in adversaries {
        pair(
            &mut e,
            "normal",
            twin,
            Seen::accepted_some,
            "accepts a correlating provider that echoes ids",
            name,
            s,
            |s| *s == Seen::CorrelationError,
            "fails the request at once with a typed H4 error, not a timeout nor an accepted answer",
        );
    }
    e.finish()
}

pub(crate) async fn correlation_ids(options: &HostSuiteOptions) -> Outcome {
    let (host, _clients) = match stdio_host(
        options,
        &[
            ("normal", "echoes-ids", &[]),
            ("wrong-id", "wrong-id", &[]),
            ("dropped-id", "dropped-id", &[]),
        ],
    )
    .await
    {
        Ok(h) => h,
        Err(o) => return o,
    };
    let report = host.query_all(&query(), options.request_timeout).await;
    host.shutdown().await;
    decide_correlation(
        &seen(&report, "echoes-ids"),
        &[
            ("wrong-id", seen(&report, "wrong-id")),
            ("dropped-id", seen(&report, "dropped-id")),
        ],
    )
}

/// A fan-out under `deadline`, waited for no longer than the deadline plus
/// `slack`: a host that never gives up fails the check instead of hanging
/// it. `None` when it had not returned by then.
pub(crate) async fn bounded_fan_out<T>(
    fan_out: impl std::future::Future<Output = T>,
    deadline: Duration,
    slack: Duration,
) -> (Option<T>, Duration) {
    let t = Instant::now();
    let report = tokio::time::timeout(deadline + slack, fan_out).await.ok();
    (report, t.elapsed())
}

/// Deadline decision: the silent provider times out, the twin is served,
/// and the fan-out returned within the deadline (plus `slack`, the
/// machine's scheduling).
pub(crate) fn decide_deadline(
    twin: &Seen,
    name: &str,
    adversary: &Seen,
    elapsed: Duration,
    deadline: Duration,
    slack: Duration,
) -> Outcome {
    let mut e = Evidence::default();
    pair(
        &mut e,
        "normal",
        twin,
        Seen::accepted_some,
        "accepts the prompt provider's frames",
        name,
        adversary,
        |s| matches!(s, Seen::TimedOut | Seen::Failed { .. }),
        "reports it timed out (or failed) by the deadline, never accepting",
    );
    if elapsed <= deadline + slack {
        e.note(format!(
            "the fan-out returned after {} ms (deadline {} ms, slack {} ms)",
            elapsed.as_millis(),
            deadline.as_millis(),
            slack.as_millis()
        ));
    } else {
        e.fail(format!(
            "the fan-out returned after {} ms, past the {} ms deadline and {} ms of slack: a silent provider held the host",
            elapsed.as_millis(),
            deadline.as_millis(),
            slack.as_millis()
        ));
    }
    e.finish()
}

/// The outcome when a fan-out under `deadline` had not returned after `waited`.
pub(crate) fn never_returned(waited: Duration, deadline: Duration) -> Outcome {
    Outcome::fail(format!(
        "the fan-out had not returned after {} ms, past its {} ms deadline: the host waits for a provider that will never answer",
        waited.as_millis(),
        deadline.as_millis()
    ))
}

/// Resident memory of this process, in bytes (Linux), for the line-cap check.
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Most this process may grow while a provider streams an endless line.
const MAX_GROWTH: u64 = 256 * 1024 * 1024;

pub(crate) async fn line_cap(options: &HostSuiteOptions) -> Outcome {
    let (host, _clients) = match stdio_host(
        options,
        &[("normal", "bounded", &[]), ("endless-line", "endless", &[])],
    )
    .await
    {
        Ok(h) => h,
        Err(o) => return o,
    };
    let before = resident_bytes();
    let deadline = options.hang_deadline;
    let (report, elapsed) = bounded_fan_out(
        host.query_all(&query(), deadline),
        deadline,
        options.deadline_slack,
    )
    .await;
    let after = resident_bytes();
    host.shutdown().await;
    let outcome = match report {
        Some(report) => decide_deadline(
            &seen(&report, "bounded"),
            "endless-line",
            &seen(&report, "endless"),
            elapsed,
            deadline,
            options.deadline_slack,
        ),
        None => never_returned(elapsed, deadline),
    };
    let memory = match (before, after) {
        (Some(b), Some(a)) if a.saturating_sub(b) <= MAX_GROWTH => Outcome {
            kind: contextgraph_conformance::outcome::Kind::Pass,
            evidence: vec![format!(
                "resident memory grew by {} KiB while the line streamed (line cap {} KiB)",
                a.saturating_sub(b) / 1024,
                LINE_CAP / 1024
            )],
        },
        (Some(b), Some(a)) => Outcome::fail(format!(
            "resident memory grew by {} MiB while the line streamed: the host buffers past its line cap",
            a.saturating_sub(b) / (1024 * 1024)
        )),
        _ => Outcome {
            kind: contextgraph_conformance::outcome::Kind::Pass,
            evidence: vec!["resident memory not measurable on this platform".to_owned()],
        },
    };
    super::consent::merge(outcome, memory)
}

/// Whether process `pid` has ended (gone, or a zombie awaiting reaping).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

async fn ended_soon(pid: Option<u32>) -> bool {
    let Some(pid) = pid else { return false };
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        if ended(pid) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// One provider's shutdown as observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Teardown {
    pub ended: bool,
    pub took: Duration,
}

/// R2 decision: the clean provider ends before the grace period is up (it
/// exited by itself); the one ignoring `shutdown` ends too (killed) and the
/// host waited no longer than the grace period plus `slack`.
pub(crate) fn decide_shutdown(
    polite: Teardown,
    stubborn: Teardown,
    grace: Duration,
    slack: Duration,
) -> Outcome {
    let mut e = Evidence::default();
    if polite.ended && polite.took < grace {
        e.note(format!(
            "twin normal: exited by itself {} ms after shutdown",
            polite.took.as_millis()
        ));
    } else {
        e.fail(format!(
            "twin normal: ended {}, after {} ms; a correct host sends shutdown and lets it exit within the {} ms grace",
            polite.ended,
            polite.took.as_millis(),
            grace.as_millis()
        ));
    }
    if stubborn.ended && stubborn.took <= grace + slack {
        e.note(format!(
            "adversary hang-on-shutdown: killed after the grace period ({} ms)",
            stubborn.took.as_millis()
        ));
    } else {
        e.fail(format!(
            "adversary hang-on-shutdown: ended {}, host waited {} ms; a correct host kills it after the {} ms grace",
            stubborn.ended,
            stubborn.took.as_millis(),
            grace.as_millis()
        ));
    }
    e.finish()
}

pub(crate) async fn shutdown(options: &HostSuiteOptions) -> Outcome {
    let (host, clients) = match stdio_host(
        options,
        &[
            ("normal", "polite", &[]),
            ("hang-on-shutdown", "stubborn", &[]),
        ],
    )
    .await
    {
        Ok(h) => h,
        Err(o) => return o,
    };
    let mut teardowns = Vec::new();
    for client in &clients {
        let pid = client.pid();
        let t = Instant::now();
        // A host that never kills a provider ignoring `shutdown` is stopped
        // waiting for here, and found still running below.
        let bound = options.shutdown_grace + options.deadline_slack;
        let _ = tokio::time::timeout(bound, client.shutdown()).await;
        let took = t.elapsed();
        teardowns.push(Teardown {
            ended: ended_soon(pid).await,
            took,
        });
    }
    host.shutdown().await;
    match teardowns.as_slice() {
        [polite, stubborn] => decide_shutdown(
            *polite,
            *stubborn,
            options.shutdown_grace,
            options.deadline_slack,
        ),
        _ => Outcome::fail(format!(
            "expected two providers, observed {}",
            teardowns.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_conformance::outcome::Kind;

    fn ok() -> Seen {
        Seen::Accepted {
            ids: vec!["a".into(), "b".into()],
            dropped_kinds: vec![],
        }
    }

    #[test]
    fn crash_check_fails_when_the_crash_takes_the_twins_down() {
        let crashed = Seen::Crashed {
            stderr_tail: "boom".into(),
        };
        assert_eq!(
            decide_crash(&[("t", ok(), ok())], &crashed).kind,
            Kind::Pass
        );
        assert_eq!(
            decide_crash(&[("t", ok(), Seen::TimedOut)], &crashed).kind,
            Kind::Fail
        );
        let silent = Seen::Crashed {
            stderr_tail: String::new(),
        };
        assert_eq!(
            decide_crash(&[("t", ok(), ok())], &silent).kind,
            Kind::Fail,
            "a crash report without the stderr tail"
        );
        assert_eq!(
            decide_crash(&[("t", ok(), ok())], &Seen::TimedOut).kind,
            Kind::Fail
        );
    }

    #[test]
    fn noise_check_fails_when_noise_kills_the_session() {
        let noise = Noise {
            garbage: 1,
            oversized: 1,
            unknown: 1,
        };
        assert_eq!(
            decide_noise((&ok(), &ok()), (&ok(), &ok()), noise).kind,
            Kind::Pass
        );
        assert_eq!(
            decide_noise((&ok(), &ok()), (&ok(), &Seen::TimedOut), noise).kind,
            Kind::Fail
        );
        assert_eq!(
            decide_noise((&ok(), &ok()), (&ok(), &ok()), Noise::default()).kind,
            Kind::Fail,
            "no noise seen: the check proved nothing"
        );
    }

    #[test]
    fn h4_check_fails_when_a_wrong_id_times_out_or_is_accepted() {
        assert_eq!(
            decide_correlation(&ok(), &[("w", Seen::CorrelationError)]).kind,
            Kind::Pass
        );
        assert_eq!(
            decide_correlation(&ok(), &[("w", Seen::TimedOut)]).kind,
            Kind::Fail
        );
        assert_eq!(decide_correlation(&ok(), &[("w", ok())]).kind, Kind::Fail);
    }

    #[test]
    fn deadline_check_fails_when_the_host_waits_past_the_deadline() {
        let d = Duration::from_millis(300);
        let slack = Duration::from_millis(1500);
        assert_eq!(
            decide_deadline(&ok(), "s", &Seen::TimedOut, d, d, slack).kind,
            Kind::Pass
        );
        assert_eq!(
            decide_deadline(&ok(), "s", &Seen::TimedOut, d + slack, d, slack).kind,
            Kind::Pass,
            "late by the slack: a loaded machine, not a patient host"
        );
        assert_eq!(
            decide_deadline(
                &ok(),
                "s",
                &Seen::TimedOut,
                d + slack + Duration::from_millis(1),
                d,
                slack
            )
            .kind,
            Kind::Fail
        );
        assert_eq!(
            decide_deadline(
                &ok(),
                "s",
                &Seen::TimedOut,
                Duration::from_secs(60),
                d,
                slack
            )
            .kind,
            Kind::Fail
        );
        assert_eq!(
            decide_deadline(&Seen::TimedOut, "s", &Seen::TimedOut, d, d, slack).kind,
            Kind::Fail,
            "a host that times out everyone cannot tell them apart"
        );
        assert_eq!(never_returned(d + slack, d).kind, Kind::Fail);
    }

    #[test]
    fn a_fan_out_that_never_returns_is_given_up_on_at_the_deadline_plus_slack() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        // Short, and only a lower bound is asserted: no machine is too slow.
        let (d, slack) = (Duration::from_millis(10), Duration::from_millis(20));
        let (report, waited) = rt.block_on(bounded_fan_out(std::future::pending::<()>(), d, slack));
        assert!(report.is_none());
        assert!(waited >= d + slack, "{waited:?}");
        let (report, _) = rt.block_on(bounded_fan_out(async { 7 }, d, slack));
        assert_eq!(report, Some(7));
    }

    #[test]
    fn r2_check_fails_when_a_hanging_provider_is_left_running() {
        let g = Duration::from_millis(300);
        let quick = Teardown {
            ended: true,
            took: Duration::from_millis(5),
        };
        let killed = Teardown {
            ended: true,
            took: g,
        };
        let slack = Duration::from_millis(1500);
        assert_eq!(decide_shutdown(quick, killed, g, slack).kind, Kind::Pass);
        let left = Teardown {
            ended: false,
            took: g,
        };
        assert_eq!(decide_shutdown(quick, left, g, slack).kind, Kind::Fail);
        let late = Teardown {
            ended: true,
            took: g + slack + Duration::from_millis(1),
        };
        assert_eq!(
            decide_shutdown(quick, late, g, slack).kind,
            Kind::Fail,
            "killed, but long after the grace"
        );
        assert_eq!(
            decide_shutdown(killed, killed, g, slack).kind,
            Kind::Fail,
            "the clean provider should exit before the grace is up"
        );
    }
}
