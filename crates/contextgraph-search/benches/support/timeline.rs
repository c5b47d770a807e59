//! A per-phase timeline of one process, sampled from the outside of the
//! code it measures: every few milliseconds a sampler thread reads each
//! thread's scheduler counters (`/proc/self/task/*/schedstat`: nanoseconds
//! run and nanoseconds waited on a run queue) and a phase name from the
//! caller. Per phase it reports wall time, CPU time, how many threads
//! were runnable on average (running, or ready but waiting for a core
//! another process held), each busy thread's share, and the longest
//! stretch in which fewer threads were runnable than there are cores, and
//! the most resident memory (`VmRSS`) sampled in it.
//!
//! Runnable rather than running: on a machine shared with other work a
//! thread that is ready but preempted is not an idle core of this build;
//! a thread blocked on nothing to do is.
//!
//! Linux only (other systems print no timeline).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One sample: time since start, phase, and per thread (tid) the
/// cumulative (run ns, wait ns).
struct Sample {
    at: Duration,
    phase: &'static str,
    threads: BTreeMap<u32, (u64, u64)>,
    /// Resident memory at the sample, KiB (`VmRSS`).
    rss_kib: u64,
}

/// A running sampler; [`Timeline::finish`] stops it and reports.
pub struct Timeline {
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<Vec<Sample>>>,
}

/// The cumulative scheduler counters of every thread of this process but
/// `skip` (the sampler's own).
fn read_threads(skip: Option<u32>) -> BTreeMap<u32, (u64, u64)> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if Some(tid) == skip {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path().join("schedstat")) else {
            continue;
        };
        let mut it = text
            .split_whitespace()
            .filter_map(|x| x.parse::<u64>().ok());
        if let (Some(run), Some(wait)) = (it.next(), it.next()) {
            out.insert(tid, (run, wait));
        }
    }
    out
}

/// This process's resident memory now, KiB (0 when unknown).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// This thread's id (`/proc/thread-self` names it).
fn own_tid() -> Option<u32> {
    std::fs::read_link("/proc/thread-self")
        .ok()?
        .file_name()?
        .to_str()?
        .parse()
        .ok()
}

impl Timeline {
    /// Starts sampling every `every`, naming each sample's phase with `phase`.
    pub fn start(every: Duration, phase: impl Fn() -> &'static str + Send + 'static) -> Timeline {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let t0 = Instant::now();
        let handle = std::thread::spawn(move || {
            let me = own_tid();
            let mut samples = Vec::new();
            loop {
                let done = flag.load(Ordering::Acquire);
                samples.push(Sample {
                    at: t0.elapsed(),
                    phase: phase(),
                    threads: read_threads(me),
                    rss_kib: rss_kib(),
                });
                if done {
                    return samples;
                }
                std::thread::sleep(every);
            }
        });
        Timeline {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops sampling (one last sample) and prints the per-phase report
    /// for a machine of `cores` cores, each line prefixed by `PHASE`.
    pub fn finish(mut self, cores: usize) -> Vec<String> {
        self.stop.store(true, Ordering::Release);
        let samples = self
            .handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        report(&samples, cores)
    }
}

/// Per-phase figures over consecutive samples (a phase is the run of
/// intervals whose closing sample bears its name).
fn report(samples: &[Sample], cores: usize) -> Vec<String> {
    struct Phase {
        name: &'static str,
        wall: Duration,
        run: u64,
        runnable: u64,
        per_thread: BTreeMap<u32, u64>,
        longest_short: Duration,
        current_short: Duration,
        rss_kib: u64,
    }
    let mut phases: Vec<Phase> = Vec::new();
    // The last value seen of every thread, alive or gone (a thread that
    // ended keeps its last counters: its time is not lost).
    let mut last: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for pair in samples.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        let dt = b.at.saturating_sub(a.at);
        if dt.is_zero() {
            continue;
        }
        for (tid, v) in &a.threads {
            last.entry(*tid).or_insert(*v);
        }
        let mut run = 0u64;
        let mut wait = 0u64;
        let mut per: Vec<(u32, u64)> = Vec::new();
        for (tid, &(r, w)) in &b.threads {
            let (r0, w0) = last.get(tid).copied().unwrap_or((0, 0));
            let dr = r.saturating_sub(r0);
            run += dr;
            wait += w.saturating_sub(w0);
            per.push((*tid, dr));
            last.insert(*tid, (r, w));
        }
        if phases.last().is_none_or(|p| p.name != b.phase) {
            phases.push(Phase {
                name: b.phase,
                wall: Duration::ZERO,
                run: 0,
                runnable: 0,
                per_thread: BTreeMap::new(),
                longest_short: Duration::ZERO,
                current_short: Duration::ZERO,
                rss_kib: 0,
            });
        }
        let Some(p) = phases.last_mut() else { continue };
        p.wall += dt;
        p.rss_kib = p.rss_kib.max(b.rss_kib);
        p.run += run;
        p.runnable += run + wait;
        for (tid, dr) in per {
            *p.per_thread.entry(tid).or_default() += dr;
        }
        // Fewer runnable threads than cores (half a core of slack): a core
        // this build leaves idle over this interval.
        let runnable = (run + wait) as f64 / dt.as_nanos() as f64;
        if runnable < cores as f64 - 0.5 {
            p.current_short += dt;
            p.longest_short = p.longest_short.max(p.current_short);
        } else {
            p.current_short = Duration::ZERO;
        }
    }
    let total_wall: Duration = phases.iter().map(|p| p.wall).sum();
    let total_run: u64 = phases.iter().map(|p| p.run).sum();
    let mut lines = vec![format!(
        "PHASE {:<14} {:>8} {:>8} {:>9} {:>15} {:>8}  busy threads (ms run, share of the phase)",
        "phase", "wall ms", "CPU ms", "runnable", "longest <cores", "RSS MiB"
    )];
    for p in &phases {
        let wall_ns = p.wall.as_nanos().max(1) as f64;
        let mut busy: Vec<(u32, u64)> = p
            .per_thread
            .iter()
            .map(|(t, r)| (*t, *r))
            .filter(|(_, r)| *r as f64 > wall_ns * 0.05)
            .collect();
        busy.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let shown: Vec<String> = busy
            .iter()
            .take(6)
            .map(|(_, r)| {
                format!(
                    "{:.0} ({:.0}%)",
                    *r as f64 / 1e6,
                    *r as f64 / wall_ns * 100.0
                )
            })
            .collect();
        lines.push(format!(
            "PHASE {:<14} {:>8.0} {:>8.0} {:>9.2} {:>12.0} ms {:>8.0}  {} thread(s): {}",
            p.name,
            p.wall.as_secs_f64() * 1000.0,
            p.run as f64 / 1e6,
            p.runnable as f64 / wall_ns,
            p.longest_short.as_secs_f64() * 1000.0,
            p.rss_kib as f64 / 1024.0,
            busy.len(),
            shown.join(", ")
        ));
    }
    lines.push(format!(
        "PHASE {:<14} {:>8.0} {:>8.0} {:>9.2}",
        "total",
        total_wall.as_secs_f64() * 1000.0,
        total_run as f64 / 1e6,
        total_run as f64 / total_wall.as_nanos().max(1) as f64
    ));
    lines
}
