//! A reviewer's answer, any bytes: `review::parse_answer` never panics; a verdict it reads
//! survives the text contract's round trip (`render_contract` → `parse_text`); an APPROVED
//! verdict comes only from where the answer ends (a last line that is a verdict line or a
//! closing fence, or an answer that is one JSON object); and a line of prose after any answer
//! leaves no verdict at all (SPEC §6.3: the verdict is the last non-empty line and nothing
//! else).
#![no_main]

use git_pair::review::parse::{Parsed, Verdict, parse_text, render_contract};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Parsed::Verdict {
        verdict, findings, ..
    } = git_pair::review::parse_answer(data)
    {
        let again = parse_text(&render_contract(verdict, &findings));
        let Parsed::Verdict { verdict: v2, .. } = again else {
            panic!("a rendered contract always has a verdict line: {again:?}");
        };
        assert_eq!(v2, verdict);
        if verdict == Verdict::Approved {
            let text = String::from_utf8_lossy(data);
            let trimmed = text.trim();
            let last = trimmed.lines().next_back().unwrap_or("").trim();
            let plain: String = last
                .chars()
                .filter(|c| !"*`#_ .".contains(*c))
                .collect::<String>()
                .to_ascii_uppercase();
            let ends_a_fence = last.starts_with("```") || last.starts_with("~~~");
            assert!(
                trimmed.starts_with('{') || ends_a_fence || plain.ends_with("APPROVED"),
                "APPROVED read from an answer whose last line is {last:?}"
            );
        }
    }
    let mut more = data.to_vec();
    more.extend_from_slice(b"\nOne more thing to say.\n");
    let after = git_pair::review::parse_answer(&more);
    assert!(
        matches!(after, Parsed::NoVerdict { .. }),
        "prose after the answer left a verdict: {after:?}"
    );
});
