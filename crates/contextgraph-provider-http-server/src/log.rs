//! A minimal `tracing` subscriber writing one `key=value` line per event to
//! stderr, for binaries that serve (`cgp serve … --http`). The server's
//! events carry only method, status, latency, reply type and provider name,
//! never content or credentials, so whatever this prints is safe to keep.
//!
//! Line format: `<RFC 3339 UTC time> <LEVEL> <target>: msg="…" key=value …`.

use std::fmt::{self, Write as _};
use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Writes events at or above a level to stderr. A closed stderr is ignored.
#[derive(Debug, Clone)]
pub struct StderrLog {
    max_level: Level,
    capture: Option<Arc<Mutex<Vec<u8>>>>,
}

impl Default for StderrLog {
    /// INFO and more severe, to stderr: one line per request.
    fn default() -> Self {
        StderrLog::new(Level::INFO)
    }
}

impl StderrLog {
    /// Events at `max_level` and more severe are written to stderr.
    pub fn new(max_level: Level) -> Self {
        StderrLog {
            max_level,
            capture: None,
        }
    }

    /// The same lines appended to `buffer` instead of stderr, so a test can
    /// read exactly what an operator would see.
    pub fn capturing(max_level: Level, buffer: Arc<Mutex<Vec<u8>>>) -> Self {
        StderrLog {
            max_level,
            capture: Some(buffer),
        }
    }

    /// Install as the global default subscriber; `false` if one already was.
    pub fn install(self) -> bool {
        tracing::subscriber::set_global_default(self).is_ok()
    }
}

struct Line(String);

impl Visit for Line {
    fn record_str(&mut self, field: &Field, value: &str) {
        let name = if field.name() == "message" {
            "msg"
        } else {
            field.name()
        };
        let _ = write!(self.0, " {name}={value:?}");
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let text = format!("{value:?}");
        if field.name() == "message" {
            let _ = write!(self.0, " msg={text:?}");
        } else if text.contains([' ', '"', '=']) || text.is_empty() {
            let _ = write!(self.0, " {}={text:?}", field.name());
        } else {
            let _ = write!(self.0, " {}={text}", field.name());
        }
    }
}

impl Subscriber for StderrLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.max_level
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::from_level(
            self.max_level,
        ))
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let meta = event.metadata();
        let mut line = Line(format!("{} {} {}:", utc_now(), meta.level(), meta.target()));
        event.record(&mut line);
        line.0.push('\n');
        match &self.capture {
            Some(buffer) => buffer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend_from_slice(line.0.as_bytes()),
            None => {
                let _ = std::io::stderr().write_all(line.0.as_bytes());
            }
        }
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// The current time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn utc_now() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs();
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        now.subsec_millis()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn civil_dates_are_right_across_leap_years() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
    }
}
