//! UTC time for the whole crate: RFC 3339 timestamps (milliseconds), the half-open windows
//! coder sessions are counted in, and the stamps the run store writes (RFC 3339 seconds, the
//! compact form in run ids). The calendar is jiff's (civil dates, leap years, epoch days);
//! the RFC 3339 grammar is read here, by fixed positions, because the cost readers parse a
//! stamp per log line and jiff's general ISO 8601 parser is both slower (about 25 ns against
//! 18 ns a stamp, `cargo bench --bench cost -- timestamps`) and more permissive (`+0200`,
//! basic format, annotations) than the stamps we accept.
//!
//! `GIT_PAIR_NOW` (unix seconds, optionally fractional) pins the clock so tests are reproducible; nothing else here
//! reads the environment.

use std::fmt;

use jiff::SignedDuration;
use jiff::civil::{Date, DateTime};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// 1970-01-01T00:00:00, the civil time of the Unix epoch in UTC.
const EPOCH: DateTime = DateTime::constant(1970, 1, 1, 0, 0, 0, 0);

/// A point in time: milliseconds since the Unix epoch, UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Parses an RFC 3339 date-time (`2026-09-01T10:00:02.123Z`, `…+02:00`); fractions beyond
    /// milliseconds are truncated. Returns `None` for anything else.
    pub fn parse(text: &str) -> Option<Timestamp> {
        parse_rfc3339(text.as_bytes())
    }

    /// The UTC civil time, clamped to the years jiff knows (-9999 to 9999).
    fn to_civil(self) -> DateTime {
        EPOCH
            .checked_add(SignedDuration::from_millis(self.0))
            .unwrap_or(if self.0 < 0 {
                DateTime::MIN
            } else {
                DateTime::MAX
            })
    }

    /// Converts a `SystemTime` (file modification times) to a timestamp.
    pub fn from_system_time(time: std::time::SystemTime) -> Timestamp {
        match time.duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => Timestamp(i64::try_from(after.as_millis()).unwrap_or(i64::MAX)),
            Err(before) => {
                Timestamp(-i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX))
            }
        }
    }
}

impl fmt::Display for Timestamp {
    /// Formats as `YYYY-MM-DDTHH:MM:SS[.mmm]Z` (milliseconds only when non-zero).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.to_civil();
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            t.year(),
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        )?;
        if t.millisecond() != 0 {
            write!(f, ".{:03}", t.millisecond())?;
        }
        f.write_str("Z")
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Timestamp::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("not an RFC 3339 timestamp: {text}")))
    }
}

/// The part of a session that belongs to a run: lines with `from <= timestamp < to`. An open
/// end is unbounded. Half-open so that consecutive rounds never count a line twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TimeWindow {
    /// Inclusive start; `None` means since the beginning.
    pub from: Option<Timestamp>,
    /// Exclusive end; `None` means up to now.
    pub to: Option<Timestamp>,
}

impl TimeWindow {
    /// Whether a line stamped `at` is counted. A line without a timestamp cannot be placed in
    /// a window, so it counts only when the window is unbounded on both sides.
    pub fn contains(&self, at: Option<Timestamp>) -> bool {
        match at {
            Some(at) => self.from.is_none_or(|from| at >= from) && self.to.is_none_or(|to| at < to),
            None => self.from.is_none() && self.to.is_none(),
        }
    }
}

/// Seconds since the Unix epoch, from `GIT_PAIR_NOW` when set (tests), else the system clock.
pub fn now_unix() -> i64 {
    now_unix_ms().div_euclid(1000)
}

/// Milliseconds since the Unix epoch, from `GIT_PAIR_NOW` when set (tests: seconds, with an
/// optional fraction, `1795994100.25`), else the system clock.
pub fn now_unix_ms() -> i64 {
    if let Some(secs) = std::env::var("GIT_PAIR_NOW")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite())
    {
        return (secs * 1000.0).round() as i64;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

/// Converts unix seconds to a UTC civil time.
pub fn civil(unix: i64) -> Civil {
    let t = Timestamp(unix.saturating_mul(1000)).to_civil();
    Civil {
        year: i64::from(t.year()),
        month: t.month().unsigned_abs().into(),
        day: t.day().unsigned_abs().into(),
        hour: t.hour().unsigned_abs().into(),
        minute: t.minute().unsigned_abs().into(),
        second: t.second().unsigned_abs().into(),
    }
}

/// Formats unix seconds as `2026-11-29T23:15:00Z`.
pub fn rfc3339(unix: i64) -> String {
    Timestamp(unix.saturating_mul(1000)).to_string()
}

/// Formats unix seconds as `20261129-231500`, the time part of a run id.
pub fn compact(unix: i64) -> String {
    let c = civil(unix);
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
}

/// Formats unix seconds for people: `2026-11-29 23:15 UTC`.
pub fn human(unix: i64) -> String {
    let c = civil(unix);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02} UTC",
        c.year, c.month, c.day, c.hour, c.minute
    )
}

/// Parses an RFC 3339 stamp into unix seconds.
pub fn parse_rfc3339_secs(s: &str) -> Option<i64> {
    Timestamp::parse(s).map(|t| t.0.div_euclid(1000))
}

fn digits(bytes: &[u8], at: usize, count: usize) -> Option<i64> {
    let field = bytes.get(at..at + count)?;
    field.iter().try_fold(0i64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

/// Reads `YYYY-MM-DD(T|t| )HH:MM:SS[.fraction](Z|z|±HH:MM)`; jiff checks the date (month
/// lengths, leap years) and counts the days since the epoch.
fn parse_rfc3339(b: &[u8]) -> Option<Timestamp> {
    let year = digits(b, 0, 4)?;
    let month = digits(b, 5, 2)?;
    let day = digits(b, 8, 2)?;
    let hour = digits(b, 11, 2)?;
    let minute = digits(b, 14, 2)?;
    let second = digits(b, 17, 2)?;
    let separators_ok = b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !separators_ok || second > 60 {
        return None;
    }
    let mut at = 19;
    let mut millis = 0i64;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 3 {
                millis = millis * 10 + i64::from(b[at] - b'0');
            }
            at += 1;
        }
        if at == start {
            return None;
        }
        for _ in (at - start)..3 {
            millis *= 10;
        }
    }
    let offset_minutes = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && b[at + 3] == b':' => {
            let (oh, om) = (digits(b, at + 1, 2)?, digits(b, at + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let minutes = oh * 60 + om;
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return None,
    };
    if hour > 23 || minute > 59 {
        return None;
    }
    // Narrowing cannot fail: the fields have two and four digits.
    let narrow = |n: i64| i8::try_from(n).ok();
    let date = Date::new(i16::try_from(year).ok()?, narrow(month)?, narrow(day)?).ok()?;
    let days = date.duration_since(EPOCH.date()).as_secs() / 86_400;
    // Leap seconds (:60) are folded onto :59 rather than rejected.
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second.min(59) - offset_minutes * 60;
    Some(Timestamp(seconds * 1000 + millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_stamps_format_and_parse_round_trip() {
        let t = 1_796_080_500;
        assert_eq!(parse_rfc3339_secs(&rfc3339(t)), Some(t));
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(compact(1_764_458_100), "20251129-231500");
        assert_eq!(human(1_764_458_100), "2025-11-29 23:15 UTC");
        assert_eq!(
            parse_rfc3339_secs("2025-11-30T00:15:00+01:00"),
            Some(1_764_458_100)
        );
    }

    #[test]
    fn parses_rfc3339_forms() {
        // Expected values checked with `date -u -d <text> +%s%3N`.
        let cases: &[(&str, Option<i64>)] = &[
            ("1970-01-01T00:00:00Z", Some(0)),
            ("2026-09-01T10:00:02.000Z", Some(1_788_256_802_000)),
            ("2026-09-01T10:00:02.5Z", Some(1_788_256_802_500)),
            ("2026-09-01T10:00:02.123456789Z", Some(1_788_256_802_123)),
            ("2026-09-01T12:00:02+02:00", Some(1_788_256_802_000)),
            ("2026-09-01T05:30:02-04:30", Some(1_788_256_802_000)),
            ("2026-09-01 10:00:02z", Some(1_788_256_802_000)),
            ("2024-02-29T00:00:00Z", Some(1_709_164_800_000)),
            ("1969-12-31T23:59:59.999Z", Some(-1)),
            ("2023-02-29T00:00:00Z", None),
            ("2026-13-01T00:00:00Z", None),
            ("2026-09-01T10:00:02", None),
            ("2026-09-01T10:00:02.Z", None),
            ("2026-09-01T10:00:02Zjunk", None),
            ("2026-09-01T24:00:00Z", None),
            ("2026-09-01", None),
            ("", None),
            ("2026-09-01T10:00:02+0200", None),
        ];
        for (text, want) in cases {
            assert_eq!(Timestamp::parse(text).map(|t| t.0), *want, "{text}");
        }
    }

    #[test]
    fn formats_round_trip() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (1_788_256_802_000, "2026-09-01T10:00:02Z"),
            (1_788_256_802_123, "2026-09-01T10:00:02.123Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (1_709_164_800_000, "2024-02-29T00:00:00Z"),
            (253_402_300_799_000, "9999-12-31T23:59:59Z"),
        ];
        for (ms, text) in cases {
            assert_eq!(Timestamp(ms).to_string(), text);
            assert_eq!(Timestamp::parse(text), Some(Timestamp(ms)));
        }
    }

    #[test]
    fn agrees_with_jiffs_own_timestamps() {
        // Pseudo-random instants from 1900 to 2100, whole seconds and not.
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let ms = (x % 6_311_433_600_000) as i64 - 2_208_988_800_000;
            let ms = if x.is_multiple_of(3) {
                ms - ms.rem_euclid(1000)
            } else {
                ms
            };
            let text = Timestamp(ms).to_string();
            let by_jiff: jiff::Timestamp = text.parse().expect("jiff reads our stamps");
            assert_eq!(by_jiff.as_millisecond(), ms, "{text}");
            assert_eq!(Timestamp::parse(&text), Some(Timestamp(ms)), "{text}");
            let offset = format!("{}+05:30", &text[..text.len() - 1]);
            assert_eq!(
                Timestamp::parse(&offset).map(|t| t.0),
                Some(ms - 19_800_000),
                "{offset}"
            );
        }
    }

    #[test]
    fn the_calendar_edges() {
        assert_eq!(
            Timestamp::parse("0000-01-01T00:00:00Z").map(|t| t.0),
            Some(-62_167_219_200_000)
        );
        assert_eq!(Timestamp::parse("1900-02-29T00:00:00Z"), None);
        assert_eq!(
            Timestamp::parse("2000-02-29T00:00:00Z").map(|t| t.0),
            Some(951_782_400_000)
        );
        assert_eq!(Timestamp::parse("2026-04-31T00:00:00Z"), None);
        assert_eq!(
            Timestamp::parse("2016-12-31T23:59:60Z"),
            Timestamp::parse("2016-12-31T23:59:59Z")
        );
        assert_eq!(Timestamp::parse("2016-12-31T23:59:61Z"), None);
        assert_eq!(
            Timestamp(-62_167_219_200_000).to_string(),
            "0000-01-01T00:00:00Z"
        );
        // Beyond the years jiff knows, formatting clamps instead of failing.
        assert_eq!(Timestamp(i64::MAX).to_string(), "9999-12-31T23:59:59.999Z");
        assert_eq!(Timestamp(i64::MIN).to_string(), "-9999-01-01T00:00:00Z");
        let c = civil(1_764_458_100);
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute, c.second),
            (2025, 11, 29, 23, 15, 0)
        );
    }

    #[test]
    fn window_is_half_open() {
        let t = |s| Timestamp::parse(s);
        let w = TimeWindow {
            from: t("2026-09-01T10:00:00Z"),
            to: t("2026-09-01T11:00:00Z"),
        };
        let cases = [
            (t("2026-09-01T09:59:59.999Z"), false),
            (t("2026-09-01T10:00:00Z"), true),
            (t("2026-09-01T10:59:59.999Z"), true),
            (t("2026-09-01T11:00:00Z"), false),
            (None, false),
        ];
        for (at, want) in cases {
            assert_eq!(w.contains(at), want, "{at:?}");
        }
        assert!(TimeWindow::default().contains(None));
        let open_end = TimeWindow {
            from: t("2026-09-01T10:00:00Z"),
            to: None,
        };
        assert!(open_end.contains(t("2099-01-01T00:00:00Z")));
    }

    #[test]
    fn serializes_as_string() {
        let w = TimeWindow {
            from: Some(Timestamp(0)),
            to: None,
        };
        let json = serde_json::to_string(&w).unwrap();
        assert_eq!(json, r#"{"from":"1970-01-01T00:00:00Z","to":null}"#);
        assert_eq!(serde_json::from_str::<TimeWindow>(&json).unwrap(), w);
    }
}
