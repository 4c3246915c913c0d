//! UTC time as the run store writes it: RFC 3339 stamps and the compact form used in run ids.
//!
//! `GIT_PAIR_NOW` (unix seconds) pins the clock so tests are reproducible; nothing else reads
//! the environment here.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch, from `GIT_PAIR_NOW` when set (tests), else the system clock.
pub fn now_unix() -> i64 {
    if let Some(secs) = std::env::var("GIT_PAIR_NOW")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
    {
        return secs;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
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

/// Converts unix seconds to a UTC civil time (Howard Hinnant's `civil_from_days`).
pub fn civil(unix: i64) -> Civil {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    Civil {
        year,
        month,
        day,
        hour: (secs / 3600) as u32,
        minute: (secs % 3600 / 60) as u32,
        second: (secs % 60) as u32,
    }
}

/// Converts a UTC civil time back to unix seconds (`days_from_civil`).
pub fn unix_from_civil(c: Civil) -> i64 {
    let y = c.year - i64::from(c.month <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(c.month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(c.day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    days * 86_400 + i64::from(c.hour) * 3600 + i64::from(c.minute) * 60 + i64::from(c.second)
}

/// Formats unix seconds as `2026-11-29T23:15:00Z`.
pub fn rfc3339(unix: i64) -> String {
    let c = civil(unix);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    )
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

/// Parses an RFC 3339 stamp (`Z` or `±hh:mm` offset, optional fraction) into unix seconds.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    let civil = Civil {
        year: num(0..4)?,
        month: num(5..7)? as u32,
        day: num(8..10)? as u32,
        hour: num(11..13)? as u32,
        minute: num(14..16)? as u32,
        second: num(17..19)? as u32,
    };
    if !(1..=12).contains(&civil.month) || !(1..=31).contains(&civil.day) || civil.hour > 23 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-')) => {
            let h: i64 = rest.get(1..3)?.parse().ok()?;
            let m: i64 = rest.get(4..6)?.parse().ok()?;
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return None,
    };
    Some(unix_from_civil(civil) - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_round_trip() {
        let t = 1_796_080_500; // 2026-12-01T...
        assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t));
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(compact(1_764_458_100), "20251129-231500");
    }

    #[test]
    fn parses_offsets_and_fractions() {
        assert_eq!(
            parse_rfc3339("2025-11-29T23:15:00.123Z"),
            Some(1_764_458_100)
        );
        assert_eq!(
            parse_rfc3339("2025-11-30T00:15:00+01:00"),
            Some(1_764_458_100)
        );
        assert_eq!(parse_rfc3339("not a time"), None);
        assert_eq!(parse_rfc3339("2025-13-29T23:15:00Z"), None);
    }
}
