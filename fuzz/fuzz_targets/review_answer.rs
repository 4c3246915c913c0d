//! A reviewer's answer, any bytes: `review::parse_answer` never panics, and a verdict it
//! reads survives the text contract's round trip (`render_contract` → `parse_text`).
#![no_main]

use git_pair::review::parse::{Parsed, parse_text, render_contract};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Parsed::Verdict { verdict, findings } = git_pair::review::parse_answer(data) {
        let again = parse_text(&render_contract(verdict, &findings));
        let Parsed::Verdict { verdict: v2, .. } = again else {
            panic!("a rendered contract always has a verdict line: {again:?}");
        };
        assert_eq!(v2, verdict);
    }
});
