//! The JSON contract on any bytes: `schema::parse_unique` agrees with serde_json except that
//! it refuses a key named twice (and only that); `schema::Answer` never panics, and an
//! accepted answer holds at most `MAX_FINDINGS` findings, numbered 1, 2, 3…, with an
//! ignored-keys note exactly when it has unknown keys.
#![no_main]

use git_pair::review::schema::{Answer, MAX_FINDINGS, parse_unique};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let plain = serde_json::from_str::<serde_json::Value>(&text);
    let value = match (parse_unique(&text), plain) {
        (Ok(unique), Ok(plain)) => {
            assert_eq!(unique, plain, "the same value as serde_json reads");
            unique
        }
        (Ok(unique), Err(e)) => panic!("parse_unique read {unique} where serde_json says {e}"),
        (Err(e), Ok(_)) => {
            assert!(e.contains("duplicate key"), "refused valid JSON: {e}");
            return;
        }
        (Err(_), Err(_)) => return,
    };
    if let Ok(answer) = Answer::from_value(&value) {
        assert_eq!(answer.ignored_note().is_some(), !answer.ignored_keys().is_empty());
        let findings = answer.into_findings();
        assert!(findings.len() <= MAX_FINDINGS);
        assert!(findings.iter().zip(1..).all(|(f, n)| f.n == n));
    }
    // The same text through the answer parser's JSON path.
    let _ = git_pair::review::parse::parse_json(&text);
});
