//! A Codex rollout, any bytes: scanned, walked (cumulative totals to deltas) and priced
//! without a panic, to a finite, non-negative figure, at most one request per line.
#![no_main]

use std::sync::OnceLock;

use git_pair::cost::{Agent, Pricing, price_log_bytes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    static PRICING: OnceLock<Pricing> = OnceLock::new();
    let pricing = PRICING.get_or_init(Pricing::builtin);
    let cost = price_log_bytes(Agent::Codex, data, pricing, None);
    assert!(
        cost.total_usd.is_finite() && cost.total_usd >= 0.0,
        "{cost:?}"
    );
    let lines = data.split(|&b| b == b'\n').count() as u64;
    assert!(
        cost.requests <= lines,
        "{} requests from {lines} lines",
        cost.requests
    );
});
