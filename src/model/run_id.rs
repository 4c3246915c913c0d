//! Run ids: `YYYYMMDD-HHMMSS-xxxxxx`, validated before they reach a ref name or a path.

use std::fmt;

/// A validated run id such as `20261129-231500-a1b2c3`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunId(String);

/// Why a string is not a run id.
#[derive(Debug, thiserror::Error)]
#[error("malformed run id '{given}': expected YYYYMMDD-HHMMSS-xxxxxx (UTC time, 6 lowercase hex)")]
pub struct RunIdError {
    /// The rejected input, with control characters escaped so the message stays one line.
    pub given: String,
}

impl RunId {
    /// Parses and validates `s`; nothing but the exact documented form is accepted.
    pub fn parse(s: &str) -> Result<Self, RunIdError> {
        let b = s.as_bytes();
        let ok = b.len() == 22
            && b[..8].iter().all(u8::is_ascii_digit)
            && b[8] == b'-'
            && b[9..15].iter().all(u8::is_ascii_digit)
            && b[15] == b'-'
            && b[16..]
                .iter()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c));
        if ok {
            Ok(RunId(s.to_owned()))
        } else {
            Err(RunIdError {
                given: s.escape_debug().to_string(),
            })
        }
    }

    /// Makes a fresh id for a run started at `unix` seconds.
    pub fn generate(unix: i64) -> Self {
        Self::generate_ms(unix.saturating_mul(1000))
    }

    /// Makes a fresh id for a run started at `unix_ms` milliseconds. The six hex characters
    /// are the millisecond within the second (three, `000`–`3e7`) and three unique ones, so
    /// ids sort by creation to the millisecond — runs started in the same second are listed
    /// and selected in the order they were started.
    pub fn generate_ms(unix_ms: i64) -> Self {
        let millis = unix_ms.rem_euclid(1000);
        RunId(format!(
            "{}-{millis:03x}{}",
            crate::util::time::compact(unix_ms.div_euclid(1000)),
            crate::util::unique_hex(3)
        ))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl serde::Serialize for RunId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for RunId {
    /// Validated like any id from outside: a malformed one is an error, never a path.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        RunId::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_the_documented_form() {
        for good in ["20261129-231500-a1b2c3", "19991231-000000-000000"] {
            assert!(RunId::parse(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "20261129-231500-A1B2C3",
            "20261129-231500-a1b2c",
            "20261129-231500-a1b2c3d",
            "20261129_231500-a1b2c3",
            "../../../etc/passwd000",
            "20261129-231500-a1b2g3",
            "20261129-231500-a1b2c3\n",
            "refs/heads/main",
        ] {
            assert!(RunId::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn generated_ids_validate() {
        let id = RunId::generate(1_764_458_100);
        assert!(id.as_str().starts_with("20251129-231500-"));
        assert!(RunId::parse(id.as_str()).is_ok());
    }

    #[test]
    fn error_message_stays_on_one_line() {
        let err = RunId::parse("bad\nid").expect_err("malformed");
        assert!(!err.to_string().contains('\n'));
    }
}
