//! The review answer's JSON contract: the schema shipped as `data/review.schema.json` (handed
//! to vendors as their strict structured-output schema) and [`Answer`], the serde type that
//! reads answers as SPEC §6.3 says — types and enums as declared, a finding's `severity` and
//! `location` optional, unknown keys ignored and noted, a key named twice refused
//! ([`parse_unique`]). A unit test keeps the two in agreement. Pure; errors name the JSON
//! pointer of what was wrong.

use std::fmt;
use std::sync::OnceLock;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::model::{Finding, Severity, Verdict};

/// The shipped review answer schema, as text.
pub const REVIEW_SCHEMA_TEXT: &str = include_str!("../../data/review.schema.json");

/// The most findings an answer may hold (the schema's `maxItems`).
pub const MAX_FINDINGS: usize = 200;

/// The shipped review answer schema, parsed once.
pub fn review_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(REVIEW_SCHEMA_TEXT)
            .expect("data/review.schema.json is valid JSON (checked by a unit test)")
    })
}

/// The shipped schema re-serialized on one line, for vendors that take it inline.
pub fn review_schema_compact() -> String {
    review_schema().to_string()
}

/// The most unknown keys an ignored-keys note names; the rest are counted.
const MAX_NOTED_KEYS: usize = 10;

/// A reviewer's answer under the JSON contract.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Answer {
    #[serde(deserialize_with = "verdict_at")]
    pub verdict: Verdict,
    #[serde(deserialize_with = "findings_at")]
    pub findings: Vec<AnswerFinding>,
    /// Keys the contract does not know: ignored, and noted ([`Answer::ignored_note`]).
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, Value>,
}

/// One finding as the JSON contract spells it: `category` and `text` required, `severity`
/// null or missing when none, `location` empty or missing when none.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct AnswerFinding {
    #[serde(deserialize_with = "category_at")]
    pub category: String,
    #[serde(default, deserialize_with = "severity_at")]
    pub severity: Option<Severity>,
    #[serde(default, deserialize_with = "location_at")]
    pub location: String,
    #[serde(deserialize_with = "text_at")]
    pub text: String,
    /// Keys the contract does not know: ignored, and noted.
    #[serde(flatten)]
    pub unknown: serde_json::Map<String, Value>,
}

/// Parses JSON text into a value, refusing an object that names a key twice: serde_json
/// keeps the last one silently, and an answer whose meaning depends on which copy a reader
/// keeps is no answer. Nesting stays bounded by serde_json's recursion limit.
pub fn parse_unique(text: &str) -> Result<Value, String> {
    struct Unique(Value);
    struct UniqueVisitor;
    impl<'de> Deserialize<'de> for Unique {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Unique, D::Error> {
            d.deserialize_any(UniqueVisitor).map(Unique)
        }
    }
    impl<'de> Visitor<'de> for UniqueVisitor {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut items = Vec::new();
            while let Some(Unique(item)) = seq.next_element()? {
                items.push(item);
            }
            Ok(Value::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut object = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                if object.contains_key(&key) {
                    let shown: String = key.escape_debug().take(64).collect();
                    return Err(de::Error::custom(format!("duplicate key \"{shown}\"")));
                }
                let Unique(value) = map.next_value()?;
                object.insert(key, value);
            }
            Ok(Value::Object(object))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let Unique(value) = Unique::deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

impl Answer {
    /// Reads an answer from parsed JSON; the error says where and what was wrong
    /// (`/findings/0/severity: unknown variant `urgent`, expected one of …`).
    pub fn from_value(value: &Value) -> Result<Answer, String> {
        object(value)
            .and_then(|()| Answer::deserialize(value).map_err(|e| e.to_string()))
            .map_err(|e| located("", &e))
    }

    /// The JSON pointers of the keys the contract does not know, in answer order.
    pub fn ignored_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .unknown
            .keys()
            .map(|k| format!("/{}", pointer_segment(k)))
            .collect();
        for (i, f) in self.findings.iter().enumerate() {
            keys.extend(
                f.unknown
                    .keys()
                    .map(|k| format!("/findings/{i}/{}", pointer_segment(k))),
            );
        }
        keys
    }

    /// One line naming the ignored keys (at most [`MAX_NOTED_KEYS`] of them), when there are
    /// any: the note the parser keeps with the answer.
    pub fn ignored_note(&self) -> Option<String> {
        let keys = self.ignored_keys();
        if keys.is_empty() {
            return None;
        }
        let shown: Vec<String> = keys
            .iter()
            .take(MAX_NOTED_KEYS)
            .map(|k| k.escape_debug().take(80).collect())
            .collect();
        let more = match keys.len().saturating_sub(MAX_NOTED_KEYS) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        Some(format!(
            "the JSON answer has keys the contract does not know, ignored: {}{more}",
            shown.join(", ")
        ))
    }

    /// The findings numbered 1, 2, 3… in order, with surrounding whitespace trimmed.
    pub fn into_findings(self) -> Vec<Finding> {
        self.findings
            .into_iter()
            .zip(1u32..)
            .map(|(f, n)| Finding {
                n,
                category: f.category.trim().to_owned(),
                severity: f.severity,
                location: f.location.trim().to_owned(),
                text: f.text.trim().to_owned(),
            })
            .collect()
    }
}

/// `key` as one JSON pointer segment (RFC 6901: `~` → `~0`, `/` → `~1`).
fn pointer_segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// serde reads a struct from an array of its fields in order too; the schema says object.
fn object(value: &Value) -> Result<(), String> {
    match value {
        Value::Object(_) => Ok(()),
        Value::Array(_) => Err("invalid type: array, expected an object".to_owned()),
        other => Err(format!("invalid type: {other}, expected an object")),
    }
}

/// Puts the JSON pointer segment `at` in front of an error message that has no location
/// yet, or in front of the location it has.
fn located(at: &str, message: &str) -> String {
    if message.starts_with('/') {
        format!("{at}{message}")
    } else {
        format!("{}: {message}", if at.is_empty() { "/" } else { at })
    }
}

/// Deserializes a `T` at `at`, prefixing errors with that location.
fn at<'de, T: Deserialize<'de>, D: Deserializer<'de>>(at: &str, d: D) -> Result<T, D::Error> {
    T::deserialize(d).map_err(|e| de::Error::custom(located(at, &e.to_string())))
}

fn verdict_at<'de, D: Deserializer<'de>>(d: D) -> Result<Verdict, D::Error> {
    at("/verdict", d)
}

fn category_at<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    at("/category", d)
}

fn severity_at<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Severity>, D::Error> {
    at("/severity", d)
}

fn location_at<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    at("/location", d)
}

fn text_at<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    at("/text", d)
}

/// The findings array: each item's errors carry its index, and more than [`MAX_FINDINGS`]
/// items are refused.
fn findings_at<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<AnswerFinding>, D::Error> {
    struct Items;
    impl<'de> Visitor<'de> for Items {
        type Value = Vec<AnswerFinding>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array of findings")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut items = Vec::new();
            loop {
                let index = items.len();
                let item = match seq.next_element::<Value>()? {
                    None => return Ok(items),
                    Some(_) if index == MAX_FINDINGS => {
                        let message = format!("more than {MAX_FINDINGS} findings");
                        return Err(de::Error::custom(message));
                    }
                    Some(item) => item,
                };
                let finding = object(&item)
                    .and_then(|()| AnswerFinding::deserialize(&item).map_err(|e| e.to_string()))
                    .map_err(|e| de::Error::custom(located(&format!("/{index}"), &e)))?;
                items.push(finding);
            }
        }
    }
    d.deserialize_seq(Items)
        .map_err(|e| de::Error::custom(located("/findings", &e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shipped_schema_is_strict_structured_output_compatible() {
        // Strict structured output (codex sends `strict: true`) requires every object to
        // list all of its properties as required and to forbid additional ones.
        fn walk(s: &Value, path: &str) {
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                let required: Vec<&str> = s["required"]
                    .as_array()
                    .expect("required list")
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                for k in props.keys() {
                    assert!(required.contains(&k.as_str()), "{path}/{k} not required");
                }
                assert_eq!(s["additionalProperties"], json!(false), "{path}");
                for (k, v) in props {
                    walk(v, &format!("{path}/{k}"));
                }
            }
            if let Some(items) = s.get("items") {
                walk(items, &format!("{path}/items"));
            }
        }
        walk(review_schema(), "");
        assert!(!review_schema_compact().contains('\n'));
    }

    #[test]
    fn schema_enums_and_limits_are_the_rust_types() {
        let schema = review_schema();
        let verdicts: Vec<Value> = [Verdict::Approved, Verdict::ChangesRequested]
            .iter()
            .map(|v| json!(v.as_str()))
            .collect();
        assert_eq!(schema["properties"]["verdict"]["enum"], json!(verdicts));
        let finding = &schema["properties"]["findings"]["items"];
        let mut severities: Vec<Value> = Severity::ALL.iter().map(|s| json!(s.as_str())).collect();
        severities.push(Value::Null);
        assert_eq!(finding["properties"]["severity"]["enum"], json!(severities));
        assert_eq!(
            schema["properties"]["findings"]["maxItems"],
            json!(MAX_FINDINGS)
        );
    }

    /// A valid instance of `schema`: every property, the first enum value, `"x"` for strings.
    fn example(schema: &Value) -> Value {
        if let Some(first) = schema.get("enum").and_then(|e| e.get(0)) {
            return first.clone();
        }
        match schema["type"].as_str() {
            Some("object") => Value::Object(
                schema["properties"]
                    .as_object()
                    .expect("properties")
                    .iter()
                    .map(|(k, v)| (k.clone(), example(v)))
                    .collect(),
            ),
            Some("array") => json!([example(&schema["items"])]),
            Some("string") => json!("x"),
            other => panic!("no example for type {other:?}"),
        }
    }

    /// Instances that differ from the example `root` in one place (`at`, a JSON pointer into
    /// `root`), each with whether `schema` (the schema at `at`) accepts it.
    fn variations(schema: &Value, at: &str, root: &Value, out: &mut Vec<(String, Value, bool)>) {
        let replaced = |replacement: Value| {
            let mut instance = root.clone();
            *instance.pointer_mut(at).expect("pointer into the example") = replacement;
            instance
        };
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
            for value in allowed {
                out.push((format!("{at} = {value}"), replaced(value.clone()), true));
            }
            out.push((
                format!("{at} off the enum"),
                replaced(json!("bogus")),
                false,
            ));
        }
        let types: Vec<&str> = match &schema["type"] {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let others = [
            (json!(3), "number"),
            (json!(true), "boolean"),
            (json!(null), "null"),
            (json!("s"), "string"),
            (json!([]), "array"),
            (json!({}), "object"),
        ];
        for (wrong, name) in others {
            if !types.contains(&name) {
                out.push((format!("{at} as a {name}"), replaced(wrong), false));
            }
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let example_object = root.pointer(at).expect("object").clone();
            for (key, property) in properties {
                let mut without = example_object.clone();
                without.as_object_mut().expect("object").remove(key);
                let optional = !required.contains(&key.as_str());
                out.push((format!("{at}/{key} missing"), replaced(without), optional));
                variations(property, &format!("{at}/{key}"), root, out);
            }
            let mut extra = example_object.clone();
            extra
                .as_object_mut()
                .expect("object")
                .insert("extra".into(), json!(1));
            let open = schema["additionalProperties"] != json!(false);
            out.push((format!("{at}/extra added"), replaced(extra), open));
            let fields: Vec<Value> = example_object
                .as_object()
                .expect("object")
                .values()
                .cloned()
                .collect();
            out.push((
                format!("{at} as an array of its fields"),
                replaced(json!(fields)),
                false,
            ));
        }
        if let Some(items) = schema.get("items") {
            let max = schema["maxItems"].as_u64().expect("maxItems") as usize;
            let one = root.pointer(at).expect("array")[0].clone();
            for (count, valid) in [(0, true), (max, true), (max + 1, false)] {
                let items = json!(vec![one.clone(); count]);
                out.push((format!("{at} with {count} items"), replaced(items), valid));
            }
            variations(items, &format!("{at}/0"), root, out);
        }
    }

    #[test]
    fn the_serde_type_accepts_exactly_what_the_schema_does() {
        let schema = review_schema();
        let root = json!({"": example(schema)});
        let mut cases = vec![("the example".to_owned(), root.clone(), true)];
        variations(schema, "/", &root, &mut cases);
        let cases: Vec<(String, Value, bool)> = cases
            .into_iter()
            .map(|(what, instance, valid)| (what, instance[""].clone(), valid))
            .collect();
        assert!(cases.len() > 30, "{}", cases.len());
        // Where the reader is lenient on purpose (SPEC §6.3), and the schema vendors get stays
        // strict: a finding's severity and location may be missing, unknown keys are ignored.
        let lenient = |what: &str| {
            [
                "/findings/0/severity missing",
                "/findings/0/location missing",
                "/extra added",
            ]
            .iter()
            .any(|end| what.ends_with(end))
        };
        let mut leniencies = 0;
        for (what, instance, valid) in cases {
            let read = Answer::from_value(&instance);
            let expected = valid || lenient(&what);
            leniencies += usize::from(expected != valid);
            assert_eq!(read.is_ok(), expected, "{what}: {instance} -> {read:?}");
        }
        assert_eq!(
            leniencies, 4,
            "severity, location, and an extra key at two levels"
        );
    }

    #[test]
    fn parse_unique_refuses_a_key_named_twice_at_any_depth() {
        assert_eq!(
            parse_unique(r#"{"a":[1,{"b":null}],"c":"d"}"#),
            Ok(json!({"a": [1, {"b": null}], "c": "d"})),
        );
        for text in [
            r#"{"a":1,"a":1}"#,
            r#"[{"x":{"y":1,"y":2}}]"#,
            r#"{"a\u0062":1,"ab":2}"#,
        ] {
            let got = parse_unique(text);
            assert!(
                got.as_ref().is_err_and(|e| e.contains("duplicate key")),
                "{text}: {got:?}"
            );
        }
        assert!(parse_unique(r#"{"a":1} x"#).is_err());
        let deep = "[".repeat(10_000);
        assert!(parse_unique(&deep).is_err_and(|e| e.contains("recursion limit")));
    }

    #[test]
    fn errors_say_where_and_what() {
        let finding =
            json!({"category": "bug", "severity": "high", "location": "a.rs:1", "text": "t"});
        let cases: Vec<(Value, Result<usize, &str>)> = vec![
            (json!({"verdict": "APPROVED", "findings": []}), Ok(0)),
            (
                json!({"verdict": "CHANGES_REQUESTED", "findings": [finding]}),
                Ok(1),
            ),
            (
                json!({"verdict": "CHANGES_REQUESTED", "findings": [
                    {"category": "bug", "severity": null, "location": "", "text": "t"}]}),
                Ok(1),
            ),
            (
                json!({"verdict": "approve", "findings": []}),
                Err(
                    "/verdict: unknown variant `approve`, expected `APPROVED` or `CHANGES_REQUESTED`",
                ),
            ),
            (json!({"findings": []}), Err("/: missing field `verdict`")),
            (
                json!({"verdict": "APPROVED", "findings": [], "extra": 1}),
                Ok(0),
            ),
            (
                json!({"verdict": "APPROVED", "findings": [{"category": "x", "severity": "urgent", "location": "", "text": "t"}]}),
                Err(
                    "/findings/0/severity: unknown variant `urgent`, expected one of `critical`, `high`, `medium`, `low`",
                ),
            ),
            (
                json!({"verdict": "APPROVED", "findings": [finding, {"category": 3, "severity": null, "location": "", "text": "t"}]}),
                Err("/findings/1/category: invalid type: integer `3`, expected a string"),
            ),
            (
                json!({"verdict": "APPROVED", "findings": [{"category": "x", "text": "t"}]}),
                Ok(1),
            ),
            (
                json!({"verdict": "APPROVED", "findings": [{"category": "x", "severity": "low"}]}),
                Err("/findings/0: missing field `text`"),
            ),
            (
                json!({"verdict": "APPROVED", "findings": vec![finding.clone(); MAX_FINDINGS + 1]}),
                Err("/findings: more than 200 findings"),
            ),
            (
                json!([1]),
                Err("/: invalid type: array, expected an object"),
            ),
            (
                json!(["APPROVED", []]),
                Err("/: invalid type: array, expected an object"),
            ),
            (
                json!({"verdict": "APPROVED", "findings": [["bug", null, "", "t"]]}),
                Err("/findings/0: invalid type: array, expected an object"),
            ),
            (
                json!({"verdict": "APPROVED", "findings": [7]}),
                Err("/findings/0: invalid type: 7, expected an object"),
            ),
        ];
        for (instance, want) in cases {
            let got = Answer::from_value(&instance).map(|a| a.findings.len());
            assert_eq!(got, want.map_err(str::to_owned), "{instance}");
        }
    }
}
