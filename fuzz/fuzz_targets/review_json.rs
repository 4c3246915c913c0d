//! The JSON contract (`review::schema::Answer`) on any JSON value: never panics; an
//! accepted answer holds at most `MAX_FINDINGS` findings, numbered 1, 2, 3….
#![no_main]

use git_pair::review::schema::{Answer, MAX_FINDINGS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(answer) = Answer::from_value(&value) {
        let findings = answer.into_findings();
        assert!(findings.len() <= MAX_FINDINGS);
        assert!(findings.iter().zip(1..).all(|(f, n)| f.n == n));
    }
    // The same text through the answer parser's JSON path.
    let _ = git_pair::review::parse::parse_json(&String::from_utf8_lossy(data));
});
