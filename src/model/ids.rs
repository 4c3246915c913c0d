//! Typed ids: the git object ids records and reports hold ([`CommitId`], [`TreeId`]), stored
//! as today's lowercase 40-hex text and parsed once, where they are read; and run ids
//! (`YYYYMMDD-HHMMSS-xxxxxx`), validated before they reach a ref name or a path. The one
//! place in `model` that names a gix item (the id type it wraps).

use std::fmt;

/// Why a string is not an object id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed {what} id '{given}': expected 40 lowercase hex digits")]
pub struct ObjectIdError {
    /// What the id should have named (`commit`, `tree`).
    pub what: &'static str,
    /// The rejected input, with control characters escaped so the message stays one line.
    pub given: String,
}

/// Parses exactly the form git pair writes (40 lowercase hex digits), so that what is read
/// writes back byte for byte.
fn parse_object_id(what: &'static str, s: &str) -> Result<gix::ObjectId, ObjectIdError> {
    let error = || ObjectIdError {
        what,
        given: s.escape_debug().to_string(),
    };
    let lowercase_hex = s.len() == 40
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c));
    if !lowercase_hex {
        return Err(error());
    }
    gix::ObjectId::from_hex(s.as_bytes()).map_err(|_| error())
}

/// Declares a typed object id: a `gix::ObjectId` that says what it points to.
macro_rules! object_id {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(gix::ObjectId);

        impl $name {
            /// Parses the stored form: 40 lowercase hex digits.
            pub fn parse(s: &str) -> Result<Self, ObjectIdError> {
                parse_object_id($what, s).map($name)
            }

            /// The id as gix knows it.
            pub fn object_id(self) -> gix::ObjectId {
                self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = ObjectIdError;
            fn from_str(s: &str) -> Result<Self, ObjectIdError> {
                $name::parse(s)
            }
        }

        impl From<gix::ObjectId> for $name {
            fn from(id: gix::ObjectId) -> Self {
                $name(id)
            }
        }

        impl From<$name> for gix::ObjectId {
            fn from(id: $name) -> Self {
                id.0
            }
        }

        impl PartialEq<gix::ObjectId> for $name {
            fn eq(&self, other: &gix::ObjectId) -> bool {
                self.0 == *other
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            /// A malformed id is an error (the record is corrupt), never a default.
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_str(Parsed(std::marker::PhantomData::<$name>))
            }
        }
    };
}

object_id!(
    /// The id of a commit, such as a run's base.
    CommitId,
    "commit"
);

object_id!(
    /// The id of a tree, such as a reviewed work-tree snapshot.
    TreeId,
    "tree"
);

/// A serde visitor that parses a string in place (no copy of it is made): ids are read by
/// the thousand (every record, every trailer `verify` reads).
struct Parsed<T>(std::marker::PhantomData<T>);

impl<T> serde::de::Visitor<'_> for Parsed<T>
where
    T: std::str::FromStr,
    T::Err: fmt::Display,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
        text.parse().map_err(E::custom)
    }
}

/// Serde for an optional id stored as `""` when absent (a review that reviewed no snapshot,
/// written that way since before ids were typed): `""` reads as `None` and writes back as
/// `""`; any other text must be a well-formed id.
pub mod empty_is_none {
    use serde::{Deserializer, Serialize, Serializer};

    /// Writes `None` as `""`, an id as its hex.
    pub fn serialize<T: Serialize, S: Serializer>(id: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => id.serialize(s),
            None => s.serialize_str(""),
        }
    }

    /// Reads `""` as `None`; anything else as an id, or an error naming it.
    pub fn deserialize<'de, T, D>(d: D) -> Result<Option<T>, D::Error>
    where
        T: std::str::FromStr,
        T::Err: std::fmt::Display,
        D: Deserializer<'de>,
    {
        d.deserialize_str(crate::model::ids::Parsed(
            std::marker::PhantomData::<EmptyIsNone<T>>,
        ))
        .map(|read| read.0)
    }

    /// `""` as `None`, any other text as `T`.
    struct EmptyIsNone<T>(Option<T>);

    impl<T: std::str::FromStr> std::str::FromStr for EmptyIsNone<T> {
        type Err = T::Err;

        fn from_str(text: &str) -> Result<Self, T::Err> {
            match text {
                "" => Ok(EmptyIsNone(None)),
                text => text.parse().map(|id| EmptyIsNone(Some(id))),
            }
        }
    }
}

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
    fn object_ids_read_and_write_as_lowercase_hex() {
        let hex = "0123456789abcdef0123456789abcdef01234567";
        let json = format!("\"{hex}\"");
        let tree: TreeId = serde_json::from_str(&json).expect("a tree id");
        assert_eq!(tree.to_string(), hex);
        assert_eq!(serde_json::to_string(&tree).expect("serializes"), json);
        let commit = CommitId::parse(hex).expect("a commit id");
        assert_eq!(gix::ObjectId::from(commit), tree.object_id());
        for bad in [
            "",
            "0123456789ABCDEF0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef0123456",
            "0123456789abcdef0123456789abcdef012345678",
            "g123456789abcdef0123456789abcdef01234567",
            "tree",
        ] {
            assert!(TreeId::parse(bad).is_err(), "{bad:?}");
            let json = serde_json::to_string(bad).expect("a string");
            assert!(serde_json::from_str::<CommitId>(&json).is_err(), "{bad:?}");
        }
        let err = TreeId::parse("bad\nid").expect_err("malformed");
        assert_eq!(
            err.to_string(),
            "malformed tree id 'bad\\nid': expected 40 lowercase hex digits"
        );
    }

    #[test]
    fn an_empty_optional_id_is_none_and_writes_back_empty() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct Holder {
            #[serde(default, with = "empty_is_none")]
            snapshot: Option<TreeId>,
        }
        for json in [
            r#"{"snapshot":""}"#,
            r#"{"snapshot":"0123456789abcdef0123456789abcdef01234567"}"#,
        ] {
            let holder: Holder = serde_json::from_str(json).expect("reads");
            assert_eq!(serde_json::to_string(&holder).expect("writes"), json);
        }
        let missing: Holder = serde_json::from_str("{}").expect("reads");
        assert_eq!(missing, Holder { snapshot: None });
        assert!(serde_json::from_str::<Holder>(r#"{"snapshot":"tree"}"#).is_err());
    }

    #[test]
    fn error_message_stays_on_one_line() {
        let err = RunId::parse("bad\nid").expect_err("malformed");
        assert!(!err.to_string().contains('\n'));
    }
}
