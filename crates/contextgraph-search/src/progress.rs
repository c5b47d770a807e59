//! Indexing progress on stderr, for people and for machines.
//!
//! On a terminal a progress bar is redrawn in place. When stderr is not a
//! terminal (an agent, a script, an MCP client's log) a redrawn bar would be
//! noise, and silence during a long index looks like a hang: a long run gets
//! one line when it starts, an estimate of the time left once the rate is
//! known (then one every [`ESTIMATE_EVERY`]), and one when it ends (files,
//! seconds); a short run prints nothing.
//!
//! The bar fits the terminal: at most `$COLUMNS` columns (80 when it is not
//! set, what a terminal has at the least), the label shortened first, then
//! the bar, so a redraw never wraps onto a second line and scrolls.

use std::io::{IsTerminal as _, Write as _};
use std::time::{Duration, Instant};

/// Fewest files worth a progress bar on a terminal.
const BAR_MIN_FILES: usize = 50;

/// A run of at least this many files is announced when it starts.
pub const LONG_RUN_FILES: usize = 1000;

/// A smaller run is announced once it has taken this long.
pub const LONG_RUN: Duration = Duration::from_secs(2);

/// The rate is trusted for an estimate after this long (the first files
/// include the walk's warm-up).
pub const ESTIMATE_AFTER: Duration = Duration::from_secs(3);

/// Without a terminal, how often a long run repeats its estimate.
pub const ESTIMATE_EVERY: Duration = Duration::from_secs(20);

enum Mode {
    Bar {
        last: Option<usize>,
        last_draw: Option<Duration>,
    },
    Lines {
        announced: bool,
        estimated: Option<Duration>,
    },
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
            Mode::Bar {
                last: None,
                last_draw: None,
            }
        } else {
            Mode::Lines {
                announced: false,
                estimated: None,
            }
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
            Mode::Bar { last, last_draw } => {
                // Redrawn when the count moves, at most ten times a second
                // (the first and the last count always).
                let due = last_draw.is_none_or(|t| elapsed >= t + Duration::from_millis(100));
                if *last != Some(done) && (due || done == self.total) {
                    *last = Some(done);
                    *last_draw = Some(elapsed);
                    let line = bar_line(
                        self.label,
                        done,
                        self.total,
                        elapsed,
                        terminal_columns(std::env::var("COLUMNS").ok().as_deref()),
                    );
                    let _ = write!(std::io::stderr(), "\r{line}\x1b[K");
                }
            }
            Mode::Lines {
                announced,
                estimated,
            } => {
                if !*announced && (self.total >= LONG_RUN_FILES || elapsed >= LONG_RUN) {
                    *announced = true;
                    line(format_args!(
                        "{}: indexing {} files",
                        self.label, self.total
                    ));
                }
                let due = match estimated {
                    None => elapsed >= ESTIMATE_AFTER,
                    Some(at) => elapsed >= *at + ESTIMATE_EVERY,
                };
                if *announced && due && done > 0 && done < self.total {
                    *estimated = Some(elapsed);
                    if let Some(left) = remaining(done, self.total, elapsed) {
                        line(format_args!(
                            "{}: {done} of {} files in {}, about {} left",
                            self.label,
                            self.total,
                            human_duration(elapsed),
                            human_duration(left)
                        ));
                    }
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
            Mode::Lines {
                announced: true, ..
            } => line(format_args!(
                "{}: indexed {done} files in {secs:.1} s",
                self.label
            )),
            Mode::Lines {
                announced: false, ..
            } => {}
        }
    }
}

/// One line on stderr; a closed stderr is not a reason to fail indexing.
fn line(text: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The width to fit: `$COLUMNS` when it is a sensible number, else 80.
pub fn terminal_columns(columns: Option<&str>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| (20..=1000).contains(c))
        .unwrap_or(80)
}

/// The time left at the rate so far, once the rate means something.
fn remaining(done: usize, total: usize, elapsed: Duration) -> Option<Duration> {
    if done == 0 || elapsed < ESTIMATE_AFTER {
        return None;
    }
    let per_file = elapsed.as_secs_f64() / done as f64;
    Some(Duration::from_secs_f64(
        per_file * total.saturating_sub(done) as f64,
    ))
}

/// `7 s`, `1 min 05 s`, `1 h 02 min`.
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

/// One redraw of the bar, at most `columns - 1` characters wide (the last
/// column is left free: some terminals wrap when it is written).
pub fn bar_line(
    label: &str,
    done: usize,
    total: usize,
    elapsed: Duration,
    columns: usize,
) -> String {
    let room = columns.saturating_sub(1);
    let short = format!(" {done}/{total} files");
    // The estimate is dropped before anything else is cut.
    let tail = match remaining(done, total, elapsed) {
        Some(left) if done < total => {
            let long = format!("{short}, ~{} left", human_duration(left));
            if "12345678: indexing".len() + long.chars().count() <= room {
                long
            } else {
                short
            }
        }
        _ => short,
    };
    // The label gives way first (down to 8 characters, cut with `…`), then
    // the bar (down to 10 cells, or none at all on a very narrow terminal).
    let fixed = ": indexing [] ".len() + tail.chars().count();
    let label_chars = label.chars().count();
    let bar_max = 30usize;
    let bar_min = 10usize;
    let label_room = room.saturating_sub(fixed + bar_min);
    let shown_label: String = if label_chars <= label_room {
        label.to_owned()
    } else {
        let keep = label_room.max(8).saturating_sub(1);
        let mut cut: String = label.chars().take(keep).collect();
        cut.push('…');
        cut
    };
    let width = room
        .saturating_sub(fixed + shown_label.chars().count())
        .min(bar_max);
    let text = if width < bar_min {
        format!("{shown_label}: indexing{tail}")
    } else {
        let filled = (done * width)
            .checked_div(total)
            .unwrap_or(width)
            .min(width);
        format!(
            "{shown_label}: indexing [{}{}]{tail}",
            "#".repeat(filled),
            ".".repeat(width - filled),
        )
    };
    text.chars().take(room).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fits_every_terminal_width_from_20_columns() {
        let label = "contextgraph-provider-workspace";
        for columns in [20, 40, 60, 80, 120, 200] {
            for (done, total, secs) in [
                (0, 24_000, 0),
                (1_234, 24_000, 5),
                (23_999, 24_000, 170),
                (24_000, 24_000, 171),
            ] {
                let line = bar_line(label, done, total, Duration::from_secs(secs), columns);
                let width = line.chars().count();
                assert!(width < columns, "{width} ≥ {columns}: {line:?}");
                assert!(
                    line.contains(&format!("{done}/{total}")) || columns < 40,
                    "{line:?}"
                );
            }
        }
        let wide = bar_line(label, 1_234, 24_000, Duration::from_secs(5), 200);
        assert!(wide.starts_with(label), "room for the whole label: {wide}");
        assert!(
            wide.contains("left"),
            "an estimate once the rate is known: {wide}"
        );
    }

    #[test]
    fn the_estimate_waits_for_a_rate_and_reads_as_a_person_says_it() {
        assert_eq!(remaining(0, 10, Duration::from_secs(10)), None);
        assert_eq!(remaining(5, 10, Duration::from_secs(1)), None);
        assert_eq!(
            remaining(1_000, 3_000, Duration::from_secs(10)),
            Some(Duration::from_secs(20))
        );
        assert_eq!(human_duration(Duration::from_secs(7)), "7 s");
        assert_eq!(human_duration(Duration::from_secs(65)), "1 min 05 s");
        assert_eq!(human_duration(Duration::from_secs(3720)), "1 h 02 min");
        assert_eq!(terminal_columns(Some("100")), 100);
        assert_eq!(terminal_columns(Some("wide")), 80);
        assert_eq!(terminal_columns(None), 80);
    }
}
