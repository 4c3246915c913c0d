//! The review answer's JSON contract: the schema shipped as `data/review.schema.json` (handed
//! to vendors as their structured-output schema) and [`Answer`], the serde type that reads it
//! strictly — no unknown keys, every key required, enums as declared. A unit test keeps the two
//! in agreement. Pure; errors name the JSON pointer of what was wrong.

use std::fmt;
use std::sync::OnceLock;

use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
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

/// A reviewer's answer under the JSON contract.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    #[serde(deserialize_with = "verdict_at")]
    pub verdict: Verdict,
    #[serde(deserialize_with = "findings_at")]
    pub findings: Vec<AnswerFinding>,
}

/// One finding as the JSON contract spells it: every key present, `severity` possibly null,
/// `location` possibly empty.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerFinding {
    #[serde(deserialize_with = "category_at")]
    pub category: String,
    /// Required, but nullable: `deserialize_with` keeps serde from defaulting a missing key.
    #[serde(deserialize_with = "severity_at")]
    pub severity: Option<Severity>,
    #[serde(deserialize_with = "location_at")]
    pub location: String,
    #[serde(deserialize_with = "text_at")]
    pub text: String,
}

impl Answer {
    /// Reads an answer from parsed JSON; the error says where and what was wrong
    /// (`/findings/0/severity: unknown variant `urgent`, expected one of …`).
    pub fn from_value(value: &Value) -> Result<Answer, String> {
        object(value)
            .and_then(|()| Answer::deserialize(value).map_err(|e| e.to_string()))
            .map_err(|e| located("", &e))
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
        for (what, instance, valid) in cases {
            let read = Answer::from_value(&instance);
            assert_eq!(read.is_ok(), valid, "{what}: {instance} -> {read:?}");
        }
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
                Err("/: unknown field `extra`, expected `verdict` or `findings`"),
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
                json!({"verdict": "APPROVED", "findings": [{"category": "x", "location": "", "text": "t"}]}),
                Err("/findings/0: missing field `severity`"),
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
