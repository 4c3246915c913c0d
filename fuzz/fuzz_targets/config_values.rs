//! `pair.*` configuration with any values: each input line is one occurrence, `key=value`
//! or a bare `key` (git's valueless form), where a line not naming a known key picks one by
//! its first byte. `Options::from_lookup` never panics, and what it accepts is in range.
#![no_main]

use git_pair::config::{KEYS, Options};
use libfuzzer_sys::fuzz_target;

fn occurrence(line: &str) -> Option<(&'static str, Option<String>)> {
    let (name, value) = match line.split_once('=') {
        Some((name, value)) => (name, Some(value.to_owned())),
        None => (line, None),
    };
    match KEYS.iter().find(|k| k.eq_ignore_ascii_case(name.trim())) {
        Some(key) => Some((key, value)),
        None => {
            let key = KEYS[usize::from(*line.as_bytes().first()?) % KEYS.len()];
            Some((key, line.get(1..).map(str::to_owned)))
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let occurrences: Vec<_> = text.lines().filter_map(occurrence).collect();
    let lookup = |key: &str| {
        occurrences
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
            .collect()
    };
    if let Ok(o) = Options::from_lookup(lookup) {
        assert!(o.max_rounds > 0 && o.review_timeout_secs > 0 && o.diff_budget_bytes > 0);
        assert!(o.budget_usd.is_none_or(|b| b.is_finite() && b >= 0.0));
        for ratio in [o.budget_warn_ratio, o.handoff_threshold] {
            assert!(ratio > 0.0 && ratio <= 1.0, "{ratio}");
        }
        assert!(o.max_parallel != Some(0) && o.quorum != Some(0));
        assert!(
            o.reviewer_command
                .as_ref()
                .is_none_or(|argv| !argv.is_empty())
        );
        let _ = o.to_record();
    }
});
