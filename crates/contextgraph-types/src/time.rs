//! Protocol timestamps (F4), parsed into instants.
//!
//! The wire form is exactly `YYYY-MM-DDTHH:MM:SS(.f+)?Z`: uppercase `T` and
//! `Z`, UTC only, real calendar dates. Comparisons are always between parsed
//! instants: as strings, `…:00Z` sorts after `…:00.5Z` even though it is
//! earlier, which is how a receipt that expired half a second ago would pass
//! a string comparison.

use std::cmp::Ordering;
use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// An instant parsed from (or rendered to) the F4 wire form, to the nanosecond.
///
/// Fractional digits beyond the ninth are dropped after validation
/// (truncation toward the past). Ordering is chronological.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z (negative before).
    secs: i64,
    /// Nanoseconds within the second, `0..1_000_000_000`.
    nanos: u32,
}

/// Why a string is not an F4 timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimestampError {
    /// The text does not have the `YYYY-MM-DDTHH:MM:SS(.f+)?Z` shape.
    Shape,
    /// The shape is right but the date or time does not exist (e.g. Feb 30, hour 24).
    NotACalendarInstant,
}

impl fmt::Display for TimestampError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimestampError::Shape => f.write_str(
                "expected YYYY-MM-DDTHH:MM:SS[.fraction]Z (uppercase T and Z, UTC, no offset)",
            ),
            TimestampError::NotACalendarInstant => f.write_str("not a real calendar date and time"),
        }
    }
}

impl std::error::Error for TimestampError {}

impl Timestamp {
    /// Parse the exact F4 form.
    pub fn parse(text: &str) -> Result<Self, TimestampError> {
        let b = text.as_bytes();
        // Fixed part: YYYY-MM-DDTHH:MM:SS = 19 bytes, then optional fraction, then Z.
        if b.len() < 20 || b[b.len() - 1] != b'Z' {
            return Err(TimestampError::Shape);
        }
        let digits = |range: std::ops::Range<usize>| -> Result<u32, TimestampError> {
            let mut v = 0u32;
            for &c in &b[range] {
                if !c.is_ascii_digit() {
                    return Err(TimestampError::Shape);
                }
                v = v * 10 + u32::from(c - b'0');
            }
            Ok(v)
        };
        if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
            return Err(TimestampError::Shape);
        }
        let year = digits(0..4)?;
        let month = digits(5..7)?;
        let day = digits(8..10)?;
        let hour = digits(11..13)?;
        let minute = digits(14..16)?;
        let second = digits(17..19)?;
        let frac = &b[19..b.len() - 1];
        let nanos = if frac.is_empty() {
            0
        } else {
            if frac[0] != b'.' || frac.len() < 2 {
                return Err(TimestampError::Shape);
            }
            let mut nanos = 0u32;
            for (i, &c) in frac[1..].iter().enumerate() {
                if !c.is_ascii_digit() {
                    return Err(TimestampError::Shape);
                }
                if i < 9 {
                    nanos = nanos * 10 + u32::from(c - b'0');
                }
            }
            let kept = (frac.len() - 1).min(9) as u32;
            nanos * 10u32.pow(9 - kept)
        };
        if !(1..=12).contains(&month)
            || day == 0
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 59
        {
            return Err(TimestampError::NotACalendarInstant);
        }
        let days = days_from_civil(i64::from(year), month, day);
        let secs =
            days * 86_400 + i64::from(hour) * 3_600 + i64::from(minute) * 60 + i64::from(second);
        Ok(Timestamp { secs, nanos })
    }

    /// Whether `text` is a valid F4 timestamp.
    pub fn is_valid(text: &str) -> bool {
        Self::parse(text).is_ok()
    }

    /// The instant `secs` seconds and `nanos` nanoseconds after the Unix epoch.
    /// `nanos` beyond a second carries into `secs`.
    pub fn from_unix(secs: i64, nanos: u32) -> Self {
        Timestamp {
            secs: secs.saturating_add(i64::from(nanos / 1_000_000_000)),
            nanos: nanos % 1_000_000_000,
        }
    }

    /// The current instant.
    pub fn now() -> Self {
        Self::from_system_time(SystemTime::now())
    }

    /// Convert a `SystemTime`.
    pub fn from_system_time(t: SystemTime) -> Self {
        match t.duration_since(UNIX_EPOCH) {
            Ok(d) => Timestamp::from_unix(
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                d.subsec_nanos(),
            ),
            Err(e) => {
                let d = e.duration();
                let secs = -i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
                if d.subsec_nanos() == 0 {
                    Timestamp::from_unix(secs, 0)
                } else {
                    Timestamp::from_unix(secs - 1, 1_000_000_000 - d.subsec_nanos())
                }
            }
        }
    }

    /// Seconds since the Unix epoch.
    pub fn unix_seconds(&self) -> i64 {
        self.secs
    }

    /// Nanoseconds within the second.
    pub fn subsec_nanos(&self) -> u32 {
        self.nanos
    }

    /// This instant moved forward by `d` (saturating).
    pub fn add(&self, d: Duration) -> Self {
        let nanos = u64::from(self.nanos) + u64::from(d.subsec_nanos());
        let secs = self
            .secs
            .saturating_add(i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .saturating_add((nanos / 1_000_000_000) as i64);
        Timestamp {
            secs,
            nanos: (nanos % 1_000_000_000) as u32,
        }
    }

    /// Render in the F4 wire form, with a fraction only when non-zero
    /// (trailing zeros trimmed). Years outside 0000–9999 cannot be written in
    /// the grammar and are clamped to its range.
    pub fn to_wire(&self) -> String {
        let min = days_from_civil(0, 1, 1) * 86_400;
        let max = days_from_civil(9999, 12, 31) * 86_400 + 86_399;
        let (secs, nanos) = if self.secs < min {
            (min, 0)
        } else if self.secs > max {
            (max, 999_999_999)
        } else {
            (self.secs, self.nanos)
        };
        let days = secs.div_euclid(86_400);
        let rem = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        let mut out = format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            rem / 3_600,
            (rem % 3_600) / 60,
            rem % 60
        );
        if nanos != 0 {
            let frac = format!("{nanos:09}");
            out.push('.');
            out.push_str(frac.trim_end_matches('0'));
        }
        out.push('Z');
        out
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.secs, self.nanos).cmp(&(other.secs, other.nanos))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_wire())
    }
}

impl std::str::FromStr for Timestamp {
    type Err = TimestampError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Timestamp::parse(s)
    }
}

fn is_leap(year: u32) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_exact_wire_form() {
        let t = Timestamp::parse("2026-07-20T18:00:00Z").unwrap();
        assert_eq!(t.unix_seconds(), 1_784_570_400);
        assert_eq!(
            Timestamp::parse("1970-01-01T00:00:00Z")
                .unwrap()
                .unix_seconds(),
            0
        );
        let f = Timestamp::parse("2026-07-20T18:00:00.5Z").unwrap();
        assert_eq!(f.subsec_nanos(), 500_000_000);
        let long = Timestamp::parse("2026-07-20T18:00:00.1234567891234Z").unwrap();
        assert_eq!(long.subsec_nanos(), 123_456_789);
        assert!(Timestamp::is_valid("2024-02-29T23:59:59Z"));
        assert!(Timestamp::is_valid("2000-02-29T00:00:00Z"));
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "2026-07-20t18:00:00Z",
            "2026-07-20T18:00:00z",
            "2026-07-20T18:00:00+00:00",
            "2026-07-20T18:00:00",
            "2026-07-20 18:00:00Z",
            "2026-07-20T18:00:00.Z",
            "2026-07-20T18:00Z",
            "26-07-20T18:00:00Z",
            "2026-7-20T18:00:00Z",
            "2026-07-20T18:00:00.5.5Z",
            "+026-07-20T18:00:00Z",
            "",
        ] {
            assert_eq!(Timestamp::parse(bad), Err(TimestampError::Shape), "{bad}");
        }
        for bad in [
            "2026-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:60Z",
        ] {
            assert_eq!(
                Timestamp::parse(bad),
                Err(TimestampError::NotACalendarInstant),
                "{bad}"
            );
        }
    }

    #[test]
    fn compares_as_instants_not_strings() {
        let whole = Timestamp::parse("2026-01-01T00:00:01Z").unwrap();
        let half = Timestamp::parse("2026-01-01T00:00:00.5Z").unwrap();
        // As strings "…01Z" > "…00.5Z" happens to agree; this pair does not:
        let a = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
        assert!("2026-01-01T00:00:00Z" > "2026-01-01T00:00:00.5Z");
        assert!(a < half);
        assert!(half < whole);
        let same = Timestamp::parse("2026-01-01T00:00:00.500Z").unwrap();
        assert_eq!(half, same);
    }

    #[test]
    fn renders_and_reparses() {
        for s in [
            "2026-07-20T18:00:00Z",
            "1999-12-31T23:59:59.25Z",
            "2400-02-29T12:34:56.000000001Z",
        ] {
            let t = Timestamp::parse(s).unwrap();
            assert_eq!(t.to_wire(), s);
        }
        let t = Timestamp::from_unix(0, 1_500_000_000);
        assert_eq!(t.to_wire(), "1970-01-01T00:00:01.5Z");
        assert_eq!(
            t.add(Duration::from_millis(600)).to_wire(),
            "1970-01-01T00:00:02.1Z"
        );
        let before = Timestamp::from_system_time(UNIX_EPOCH - Duration::from_millis(1500));
        assert_eq!(before.to_wire(), "1969-12-31T23:59:58.5Z");
        assert!(Timestamp::is_valid(&Timestamp::now().to_wire()));
    }
}
