//! Indexing progress on stderr, for people and for machines.
//!
//! On a terminal a progress bar is redrawn in place. When stderr is not a
//! terminal (an agent, a script, an MCP client's log) a redrawn bar would be
//! noise, and silence during a long index looks like a hang: a long run gets
//! one line when it starts and one when it ends (files, seconds), and a
//! short run prints nothing.

use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

/// Fewest files worth a progress bar on a terminal.
const BAR_MIN_FILES: usize = 50;

/// A run of at least this many files is announced when it starts.
pub const LONG_RUN_FILES: usize = 1000;

/// A smaller run is announced once it has taken this long.
pub const LONG_RUN: Duration = Duration::from_secs(2);

enum Mode {
    Bar { last: Option<usize> },
    Lines { announced: bool },
}

/// Progress of one indexing run.
pub(crate) struct Progress {
    label: &'static str,
    total: usize,
    started: Instant,
    mode: Mode,
}

impl Progress {
    /// Progress of `total` files, or `None` when it is not to be shown.
    pub(crate) fn start(label: &'static str, total: usize, enabled: bool) -> Option<Progress> {
        if !enabled || total == 0 {
            return None;
        }
        let mode = if std::io::stderr().is_terminal() {
            if total < BAR_MIN_FILES {
                return None;
            }
            Mode::Bar { last: None }
        } else {
            Mode::Lines { announced: false }
        };
        let mut progress = Progress {
            label,
            total,
            started: Instant::now(),
            mode,
        };
        progress.tick(0);
        Some(progress)
    }

    /// `done` files are finished.
    pub(crate) fn tick(&mut self, done: usize) {
        let elapsed = self.started.elapsed();
        match &mut self.mode {
            Mode::Bar { last } => {
                if *last != Some(done) {
                    *last = Some(done);
                    draw_bar(self.label, done, self.total, elapsed);
                }
            }
            Mode::Lines { announced } => {
                if !*announced && (self.total >= LONG_RUN_FILES || elapsed >= LONG_RUN) {
                    *announced = true;
                    line(format_args!(
                        "{}: indexing {} files",
                        self.label, self.total
                    ));
                }
            }
        }
    }

    /// The run is over after `done` files.
    pub(crate) fn finish(mut self, done: usize) {
        self.tick(done);
        let secs = self.started.elapsed().as_secs_f64();
        match self.mode {
            Mode::Bar { .. } => line(format_args!("")),
            Mode::Lines { announced: true } => line(format_args!(
                "{}: indexed {done} files in {secs:.1} s",
                self.label
            )),
            Mode::Lines { announced: false } => {}
        }
    }
}

/// One line on stderr; a closed stderr is not a reason to fail indexing.
fn line(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

fn draw_bar(label: &str, done: usize, total: usize, elapsed: Duration) {
    let width = 30;
    let filled = (done * width)
        .checked_div(total)
        .unwrap_or(width)
        .min(width);
    let rate = done as f64 / elapsed.as_secs_f64().max(0.001);
    let _ = write!(
        std::io::stderr(),
        "\r{label}: indexing [{}{}] {done}/{total} files ({rate:.0}/s)",
        "#".repeat(filled),
        ".".repeat(width - filled),
    );
}
