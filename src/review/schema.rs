//! The review answer's JSON Schema (shipped as `data/review.schema.json`, also handed to
//! vendors as their structured-output schema) and a small validator for the subset of JSON
//! Schema it uses. Pure; a keyword the validator does not implement fails validation rather
//! than being silently ignored.

use std::sync::OnceLock;

use serde_json::Value;

/// The shipped review answer schema, as text.
pub const REVIEW_SCHEMA_TEXT: &str = include_str!("../../data/review.schema.json");

/// Keywords that describe but never constrain; skipped.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "$schema",
    "$id",
    "$comment",
    "default",
    "examples",
];

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

/// One way an instance breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where in the instance, as a JSON pointer (`/findings/0/severity`; `` for the root).
    pub at: String,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.at.is_empty() { "/" } else { &self.at };
        write!(f, "{at}: {}", self.message)
    }
}

/// Validates `instance` against `schema`; returns every violation found (empty when valid).
/// Supports `type` (a name or a list), `enum`, `required`, `properties`,
/// `additionalProperties` (boolean or schema), `items`, `maxLength` (in characters) and
/// `maxItems`.
pub fn validate(schema: &Value, instance: &Value) -> Vec<Violation> {
    let mut out = Vec::new();
    check(schema, instance, &mut String::new(), &mut out);
    out
}

fn check(schema: &Value, instance: &Value, at: &mut String, out: &mut Vec<Violation>) {
    let mut fail = |at: &str, message: String| {
        out.push(Violation {
            at: at.to_owned(),
            message,
        })
    };
    let schema = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return fail(at, "no value is allowed here".into()),
        Value::Object(o) => o,
        _ => return fail(at, "schema is neither an object nor a boolean".into()),
    };
    for key in schema.keys() {
        let known = matches!(
            key.as_str(),
            "type"
                | "enum"
                | "required"
                | "properties"
                | "additionalProperties"
                | "items"
                | "maxLength"
                | "maxItems"
        );
        if !known && !ANNOTATIONS.contains(&key.as_str()) {
            fail(
                at,
                format!("schema keyword `{key}` is not supported by this validator"),
            );
        }
    }
    if let Some(ty) = schema.get("type") {
        let names: Vec<&str> = match ty {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !names.iter().any(|n| has_type(instance, n)) {
            fail(
                at,
                format!(
                    "expected {}, found {}",
                    names.join(" or "),
                    type_name(instance)
                ),
            );
            // Nothing below makes sense for a value of the wrong type.
            return;
        }
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(instance)
    {
        let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
        fail(at, format!("{instance} is not one of {}", list.join(", ")));
    }
    match instance {
        Value::String(s) => {
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
                let len = s.chars().count() as u64;
                if len > max {
                    fail(
                        at,
                        format!("string of {len} characters exceeds maxLength {max}"),
                    );
                }
            }
        }
        Value::Array(items) => {
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                fail(at, format!("{} items exceed maxItems {max}", items.len()));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    check(item_schema, item, at, out);
                    at.truncate(len);
                }
            }
        }
        Value::Object(object) => {
            if let Some(Value::Array(required)) = schema.get("required") {
                for name in required.iter().filter_map(Value::as_str) {
                    if !object.contains_key(name) {
                        fail(at, format!("required property `{name}` is missing"));
                    }
                }
            }
            let properties = schema.get("properties").and_then(Value::as_object);
            for (key, value) in object {
                let len = at.len();
                at.push('/');
                at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                match properties.and_then(|p| p.get(key)) {
                    Some(property_schema) => check(property_schema, value, at, out),
                    None => match schema.get("additionalProperties") {
                        Some(Value::Bool(false)) => out.push(Violation {
                            at: at.clone(),
                            message: format!("property `{key}` is not allowed"),
                        }),
                        Some(extra @ Value::Object(_)) => check(extra, value, at, out),
                        _ => {}
                    },
                }
                at.truncate(len);
            }
        }
        _ => {}
    }
}

fn has_type(v: &Value, name: &str) -> bool {
    match name {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: &Value, instance: &Value) -> Vec<String> {
        validate(schema, instance)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

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
    fn table_of_instances_against_the_shipped_schema() {
        let finding =
            json!({"category": "bug", "severity": "high", "location": "a.rs:1", "text": "t"});
        let cases: Vec<(Value, &[&str])> = vec![
            (json!({"verdict": "APPROVED", "findings": []}), &[]),
            (
                json!({"verdict": "CHANGES_REQUESTED", "findings": [finding]}),
                &[],
            ),
            (
                json!({"verdict": "CHANGES_REQUESTED", "findings": [
                    {"category": "bug", "severity": null, "location": "", "text": "t"}]}),
                &[],
            ),
            (
                json!({"verdict": "approve", "findings": []}),
                &["/verdict: \"approve\" is not one of \"APPROVED\", \"CHANGES_REQUESTED\""],
            ),
            (
                json!({"findings": []}),
                &["/: required property `verdict` is missing"],
            ),
            (
                json!({"verdict": "APPROVED", "findings": [], "extra": 1}),
                &["/extra: property `extra` is not allowed"],
            ),
            (
                json!({"verdict": "APPROVED", "findings": [{"category": "x", "severity": "urgent", "location": "", "text": "t"}]}),
                &[
                    "/findings/0/severity: \"urgent\" is not one of \"critical\", \"high\", \"medium\", \"low\", null",
                ],
            ),
            (
                json!({"verdict": "APPROVED", "findings": [{"category": 3, "severity": null, "location": "", "text": "t"}]}),
                &["/findings/0/category: expected string, found number"],
            ),
            (json!([1]), &["/: expected object, found array"]),
        ];
        for (instance, want) in cases {
            assert_eq!(messages(review_schema(), &instance), want, "{instance}");
        }
    }

    #[test]
    fn max_length_and_max_items_count_characters_and_items() {
        let schema =
            json!({"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 3}});
        assert!(validate(&schema, &json!(["äöü", "abc"])).is_empty());
        assert_eq!(
            messages(&schema, &json!(["abcd", "a", "b"])),
            [
                "/: 3 items exceed maxItems 2",
                "/0: string of 4 characters exceeds maxLength 3"
            ]
        );
    }

    #[test]
    fn unsupported_keywords_fail_closed_and_annotations_pass() {
        let schema = json!({"type": "string", "pattern": "^a$", "description": "d"});
        assert_eq!(
            messages(&schema, &json!("a")),
            ["/: schema keyword `pattern` is not supported by this validator"]
        );
        assert!(validate(&json!({"title": "t", "type": "integer"}), &json!(3)).is_empty());
        assert!(!validate(&json!(false), &json!(3)).is_empty());
    }

    #[test]
    fn additional_properties_schema_applies_to_unlisted_keys() {
        let schema = json!({"type": "object", "additionalProperties": {"type": "number"}});
        assert!(validate(&schema, &json!({"a": 1})).is_empty());
        assert_eq!(
            messages(&schema, &json!({"a/b": "x"})),
            ["/a~1b: expected number, found string"]
        );
    }
}
