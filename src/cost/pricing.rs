//! The price table: shipped as data (`pricing.json`, embedded), extended or overridden by
//! `pair.pricingFile`, and the model-id matching rule. Knows nothing about logs: it turns
//! token counts of one model into dollars.
//!
//! Matching rule: a model id matches an entry with the same id; otherwise the longest entry
//! that is a prefix of the id followed by a separator (`-`, `@`, `:`, `_`) and a date stamp
//! (`20250929`, `2025-08-07`), so `claude-sonnet-4-5-20250929` is priced as
//! `claude-sonnet-4-5`. A bare prefix is not enough: `claude-opus-4-9` must be reported
//! unknown, not priced as `claude-opus-4`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::CostError;
use super::tokens::TokenCounts;

const BUILTIN: &str = include_str!("pricing.json");
const UNIT: &str = "usd_per_million_tokens";

/// Rates that replace the base ones for a request whose prompt exceeds `above_tokens`
/// (Anthropic's and OpenAI's long-context pricing charge the whole request at them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongContext {
    /// Prompt size (all input kinds of one request) above which these rates apply.
    pub above_tokens: u64,
    /// Uncached input rate; this and every missing rate fall back to the base entry's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<f64>,
    /// Output rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    /// 5-minute cache write rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_5m: Option<f64>,
    /// 1-hour cache write rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<f64>,
    /// Claude cache read rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Codex cached input rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
}

/// One model's prices in USD per million tokens.
///
/// A missing cache price falls back to the closest one given (`cache_write_1h` →
/// `cache_write_5m`, `cache_read` ↔ `cached_input`) and finally to `input`, so a sparse
/// entry never prices tokens at zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    /// Uncached input.
    pub input: f64,
    /// Output (reasoning included).
    pub output: f64,
    /// Prompt-cache writes with the 5-minute lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_5m: Option<f64>,
    /// Prompt-cache writes with the 1-hour lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<f64>,
    /// Claude prompt-cache reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<f64>,
    /// Codex cached input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    /// Factor on the whole request when the log marks it fast / priority; 1 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_multiplier: Option<f64>,
    /// Rates for requests whose prompt is over a threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_context: Option<LongContext>,
}

/// Per-kind rates after fallbacks, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Rates {
    input: f64,
    output: f64,
    cache_write_5m: f64,
    cache_write_1h: f64,
    cache_read: f64,
    cached_input: f64,
}

impl ModelPrice {
    fn rates(&self, long: bool) -> Rates {
        let lc = self.long_context.as_ref().filter(|_| long);
        let pick = |from_lc: Option<f64>, base: Option<f64>| from_lc.or(base);
        let input = pick(lc.and_then(|l| l.input), Some(self.input)).unwrap_or(self.input);
        let output = pick(lc.and_then(|l| l.output), Some(self.output)).unwrap_or(self.output);
        let cw5 = pick(lc.and_then(|l| l.cache_write_5m), self.cache_write_5m);
        let cw1 = pick(lc.and_then(|l| l.cache_write_1h), self.cache_write_1h);
        let read = pick(lc.and_then(|l| l.cache_read), self.cache_read);
        let cached = pick(lc.and_then(|l| l.cached_input), self.cached_input);
        Rates {
            input,
            output,
            cache_write_5m: cw5.unwrap_or(input),
            cache_write_1h: cw1.or(cw5).unwrap_or(input),
            cache_read: read.or(cached).unwrap_or(input),
            cached_input: cached.or(read).unwrap_or(input),
        }
    }

    /// Whether a request with this prompt size is billed at long-context rates.
    pub fn is_long_context(&self, prompt_tokens: u64) -> bool {
        self.long_context
            .as_ref()
            .is_some_and(|lc| prompt_tokens > lc.above_tokens)
    }

    /// The dollar cost of `tokens`, all billed at the same tier (`fast`, `long`).
    pub fn cost(&self, tokens: &TokenCounts, fast: bool, long: bool) -> f64 {
        let r = self.rates(long);
        let per_million = tokens.input as f64 * r.input
            + tokens.output as f64 * r.output
            + tokens.cache_write_5m as f64 * r.cache_write_5m
            + tokens.cache_write_1h as f64 * r.cache_write_1h
            + tokens.cache_read as f64 * r.cache_read
            + tokens.cached_input as f64 * r.cached_input;
        let multiplier = if fast {
            self.fast_multiplier.unwrap_or(1.0)
        } else {
            1.0
        };
        per_million / 1_000_000.0 * multiplier
    }

    fn validate(&self, origin: &str, model: &str) -> Result<(), CostError> {
        let invalid = |reason: String| CostError::InvalidPricing {
            origin: origin.to_owned(),
            model: model.to_owned(),
            reason,
        };
        let lc = self.long_context.as_ref();
        let prices = [
            ("input", Some(self.input)),
            ("output", Some(self.output)),
            ("cache_write_5m", self.cache_write_5m),
            ("cache_write_1h", self.cache_write_1h),
            ("cache_read", self.cache_read),
            ("cached_input", self.cached_input),
            ("long_context.input", lc.and_then(|l| l.input)),
            ("long_context.output", lc.and_then(|l| l.output)),
            (
                "long_context.cache_write_5m",
                lc.and_then(|l| l.cache_write_5m),
            ),
            (
                "long_context.cache_write_1h",
                lc.and_then(|l| l.cache_write_1h),
            ),
            ("long_context.cache_read", lc.and_then(|l| l.cache_read)),
            ("long_context.cached_input", lc.and_then(|l| l.cached_input)),
        ];
        for (field, value) in prices {
            if let Some(v) = value
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(invalid(format!(
                    "{field} must be a non-negative number, got {v}"
                )));
            }
        }
        if let Some(m) = self.fast_multiplier
            && !(m.is_finite() && m > 0.0)
        {
            return Err(invalid(format!(
                "fast_multiplier must be positive, got {m}"
            )));
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct PricingDocument {
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    as_of: Option<String>,
    models: BTreeMap<String, ModelPrice>,
}

/// A price table: the shipped one, possibly extended by an override file.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    as_of: Option<String>,
    models: BTreeMap<String, ModelPrice>,
}

impl Pricing {
    /// The table shipped inside the binary.
    pub fn builtin() -> Pricing {
        Pricing::from_json(BUILTIN, "builtin pricing.json")
            .expect("the shipped pricing.json is valid (checked by a unit test)")
    }

    /// Parses a table (`{"unit": "usd_per_million_tokens", "as_of"?, "models": {id: prices}}`);
    /// `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Pricing, CostError> {
        let doc: PricingDocument =
            serde_json::from_str(text).map_err(|source| CostError::ParsePricing {
                origin: origin.to_owned(),
                source,
            })?;
        if let Some(unit) = doc.unit.as_deref()
            && unit != UNIT
        {
            return Err(CostError::InvalidPricing {
                origin: origin.to_owned(),
                model: String::new(),
                reason: format!("unit must be {UNIT:?}, got {unit:?}"),
            });
        }
        for (model, price) in &doc.models {
            price.validate(origin, model)?;
        }
        Ok(Pricing {
            as_of: doc.as_of,
            models: doc.models,
        })
    }

    /// The shipped table with the entries of the file at `path` (`pair.pricingFile`) added;
    /// an entry for a model already in the table replaces it whole.
    pub fn builtin_with_override_file(path: &Path) -> Result<Pricing, CostError> {
        let text = std::fs::read_to_string(path).map_err(|source| CostError::ReadPricing {
            path: path.to_owned(),
            source,
        })?;
        let overrides = Pricing::from_json(&text, &path.display().to_string())?;
        Ok(Pricing::builtin().with_overrides(overrides))
    }

    /// `self` with `overrides`' entries added or replacing whole entries of the same id.
    pub fn with_overrides(mut self, overrides: Pricing) -> Pricing {
        self.models.extend(overrides.models);
        self
    }

    /// A digest of every entry: two tables price alike when their fingerprints agree (what
    /// remembered session costs are keyed by).
    pub(crate) fn fingerprint(&self) -> String {
        sha1_smol::Sha1::from(format!("{self:?}").as_bytes())
            .digest()
            .to_string()
    }

    /// The date the table's prices were checked (the shipped table's, kept under overrides).
    pub fn as_of(&self) -> Option<&str> {
        self.as_of.as_deref()
    }

    /// The entry pricing `model` and its id, by the module's matching rule.
    pub fn lookup(&self, model: &str) -> Option<(&str, &ModelPrice)> {
        if let Some((id, price)) = self.models.get_key_value(model) {
            return Some((id.as_str(), price));
        }
        // Every proper prefix of `model` sorts before it.
        use std::ops::Bound;
        self.models
            .range::<str, _>((Bound::Unbounded, Bound::Excluded(model)))
            .filter(|(id, _)| model.starts_with(id.as_str()) && is_date_suffix(&model[id.len()..]))
            .map(|(id, price)| (id.as_str(), price))
            .max_by_key(|(id, _)| id.len())
    }
}

/// `-20250929`, `-2025-08-07`, `@20250929`, `-20241022-v2:0`: a separator, then a date stamp.
fn is_date_suffix(rest: &str) -> bool {
    let b = rest.as_bytes();
    if !matches!(b.first(), Some(b'-' | b'@' | b':' | b'_')) {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
    };
    let compact = digits(1..9) && !b.get(9).is_some_and(u8::is_ascii_digit);
    let dashed = digits(1..5)
        && b.get(5) == Some(&b'-')
        && digits(6..8)
        && b.get(8) == Some(&b'-')
        && digits(9..11);
    compact || dashed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn assert_close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-12, "got {got}, want {want}");
    }

    fn fixture_pricing() -> Pricing {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/agent-logs/pricing.json"
        ))
        .unwrap();
        Pricing::from_json(&text, "fixture").unwrap()
    }

    #[test]
    fn builtin_table_parses_and_has_the_families() {
        let p = Pricing::builtin();
        assert!(p.as_of().is_some());
        for model in [
            "claude-opus-4-20250514",
            "claude-opus-4-1-20250805",
            "claude-opus-4-5-20251101",
            "claude-sonnet-4-20250514",
            "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5-20251001",
            "gpt-5",
            "gpt-5-codex",
            "gpt-5.1",
            "gpt-5.1-codex",
            "gpt-5.1-codex-mini",
            "gpt-5.2",
            "gpt-5-2025-08-07",
        ] {
            assert!(p.lookup(model).is_some(), "{model}");
        }
    }

    #[test]
    fn builtin_prices_match_ccusage_offline_table() {
        // Per-million prices observed from ccusage 20.0.24 `--offline` on one-kind probe
        // sessions of 100k tokens each (input, output, 5m write, 1h write, cache read).
        let cases: &[(&str, [f64; 5])] = &[
            ("claude-opus-4-20250514", [15.0, 75.0, 18.75, 30.0, 1.5]),
            ("claude-opus-4-1-20250805", [15.0, 75.0, 18.75, 30.0, 1.5]),
            ("claude-opus-4-5-20251101", [5.0, 25.0, 6.25, 10.0, 0.5]),
            ("claude-opus-4-6", [5.0, 25.0, 6.25, 10.0, 0.5]),
            ("claude-opus-4-7", [5.0, 25.0, 6.25, 10.0, 0.5]),
            ("claude-sonnet-4-20250514", [3.0, 15.0, 3.75, 6.0, 0.3]),
            ("claude-sonnet-4-5-20250929", [3.0, 15.0, 3.75, 6.0, 0.3]),
            ("claude-sonnet-4-6", [3.0, 15.0, 3.75, 6.0, 0.3]),
            ("claude-haiku-4-5-20251001", [1.0, 5.0, 1.25, 2.0, 0.1]),
            ("claude-3-5-haiku-20241022", [0.8, 4.0, 1.0, 1.6, 0.08]),
            ("claude-3-7-sonnet-20250219", [3.0, 15.0, 3.75, 6.0, 0.3]),
        ];
        let p = Pricing::builtin();
        for (model, [i, o, w5, w1, r]) in cases {
            let (_, price) = p.lookup(model).unwrap();
            let one = |t: TokenCounts| price.cost(&t, false, false);
            let m = 1_000_000;
            assert_close(
                one(TokenCounts {
                    input: m,
                    ..Default::default()
                }),
                *i,
            );
            assert_close(
                one(TokenCounts {
                    output: m,
                    ..Default::default()
                }),
                *o,
            );
            assert_close(
                one(TokenCounts {
                    cache_write_5m: m,
                    ..Default::default()
                }),
                *w5,
            );
            assert_close(
                one(TokenCounts {
                    cache_write_1h: m,
                    ..Default::default()
                }),
                *w1,
            );
            assert_close(
                one(TokenCounts {
                    cache_read: m,
                    ..Default::default()
                }),
                *r,
            );
        }
        // Codex models: input, cached input, output.
        let codex: &[(&str, [f64; 3])] = &[
            ("gpt-5", [1.25, 0.125, 10.0]),
            ("gpt-5-codex", [1.25, 0.125, 10.0]),
            ("gpt-5.1", [1.25, 0.125, 10.0]),
            ("gpt-5.1-codex", [1.25, 0.125, 10.0]),
            ("gpt-5.1-codex-max", [1.25, 0.125, 10.0]),
            ("gpt-5.1-codex-mini", [0.25, 0.025, 2.0]),
            ("gpt-5.2", [1.75, 0.175, 14.0]),
            ("gpt-5.2-codex", [1.75, 0.175, 14.0]),
            ("gpt-5.3-codex", [1.75, 0.175, 14.0]),
            ("gpt-5-mini", [0.25, 0.025, 2.0]),
            ("gpt-5-nano", [0.05, 0.005, 0.4]),
            ("gpt-5.4", [2.5, 0.25, 15.0]),
            ("gpt-5.5", [5.0, 0.5, 30.0]),
        ];
        for (model, [i, c, o]) in codex {
            let (_, price) = p.lookup(model).unwrap();
            let m = 1_000_000;
            let one = |t: TokenCounts| price.cost(&t, false, false);
            assert_close(
                one(TokenCounts {
                    input: m,
                    ..Default::default()
                }),
                *i,
            );
            assert_close(
                one(TokenCounts {
                    cached_input: m,
                    ..Default::default()
                }),
                *c,
            );
            assert_close(
                one(TokenCounts {
                    output: m,
                    ..Default::default()
                }),
                *o,
            );
        }
    }

    /// The model each pinned CLI uses when told none (`tests/e2e/package.json` pins them):
    /// Claude Code 2.1.197 names `claude-opus-4-8`; codex-cli 0.171.0 sent `gpt-6.2-sol` in
    /// the `model` field of its first `/v1/responses` request to a capture server. Bumping a
    /// pin means checking its default again and adding it here.
    const PINNED_CLI_DEFAULT_MODELS: &[(&str, &str)] = &[
        ("claude-code 2.1.197", "claude-opus-4-8"),
        ("codex-cli 0.171.0", "gpt-6.2-sol"),
        // Its `auto` routing, as the path of its first streamGenerateContent request named it.
        ("gemini-cli 0.61.0", "gemini-3.1-pro-preview-customtools"),
        ("qwen-code 0.24.4", "qwen3.7-max"),
        // GitHub Copilot CLI 1.0.102 has no default model of its own in BYOK mode (it needs
        // COPILOT_MODEL) and bills premium requests otherwise; OpenCode 1.18.33 uses the
        // user's provider: neither has a list-priced default, and both are not measured.
    ];

    #[test]
    fn every_pinned_cli_default_model_has_a_price_and_a_source() {
        let p = Pricing::builtin();
        let doc: serde_json::Value = serde_json::from_str(BUILTIN).unwrap();
        for (cli, model) in PINNED_CLI_DEFAULT_MODELS {
            let (id, price) = p
                .lookup(model)
                .unwrap_or_else(|| panic!("{cli}'s default model {model} has no price"));
            assert_eq!(id, *model, "{cli}: priced as another entry");
            assert!(price.input > 0.0 && price.output > 0.0, "{model}");
            assert!(
                doc["sources"][model]
                    .as_str()
                    .is_some_and(|s| !s.is_empty()),
                "{model}: the table says where its price comes from"
            );
        }
        // The CLI's own figures for its default (what `total_cost_usd` is computed from).
        let (_, opus) = p.lookup("claude-opus-4-8").unwrap();
        let m = 1_000_000;
        let t = |input, output, w5, w1, r| TokenCounts {
            input,
            output,
            cache_write_5m: w5,
            cache_write_1h: w1,
            cache_read: r,
            ..Default::default()
        };
        assert_close(opus.cost(&t(m, 0, 0, 0, 0), false, false), 5.0);
        assert_close(opus.cost(&t(0, m, 0, 0, 0), false, false), 25.0);
        assert_close(opus.cost(&t(0, 0, m, 0, 0), false, false), 6.25);
        assert_close(opus.cost(&t(0, 0, 0, m, 0), false, false), 10.0);
        assert_close(opus.cost(&t(0, 0, 0, 0, m), false, false), 0.5);
        assert_close(opus.cost(&t(m, m, 0, 0, 0), true, false), 60.0);
        let (_, sol) = p.lookup("gpt-6.2-sol").unwrap();
        let c = |input, cached_input, output| TokenCounts {
            input,
            cached_input,
            output,
            ..Default::default()
        };
        assert_close(sol.cost(&c(m, m, m), false, false), 2.0 + 0.1 + 10.0);
        assert!(sol.is_long_context(272_001) && !sol.is_long_context(272_000));
        assert_close(sol.cost(&c(m, m, m), false, true), 4.0 + 0.2 + 15.0);
    }

    #[test]
    fn lookup_is_exact_then_longest_dated_prefix() {
        let p = Pricing::builtin();
        let cases: &[(&str, Option<&str>)] = &[
            ("claude-sonnet-4-5", Some("claude-sonnet-4-5")),
            ("claude-sonnet-4-5-20250929", Some("claude-sonnet-4-5")),
            ("claude-sonnet-4-20250514", Some("claude-sonnet-4")),
            ("claude-opus-4-1-20250805", Some("claude-opus-4-1")),
            ("claude-3-5-sonnet-20241022-v2:0", Some("claude-3-5-sonnet")),
            ("claude-sonnet-4-5@20250929", Some("claude-sonnet-4-5")),
            ("gpt-5-2025-08-07", Some("gpt-5")),
            ("gpt-5.1-codex-mini", Some("gpt-5.1-codex-mini")),
            ("claude-opus-4-8", Some("claude-opus-4-8")),
            ("claude-opus-4-8-20270101", Some("claude-opus-4-8")),
            ("gpt-6.2-sol", Some("gpt-6.2-sol")),
            // Not a date: a newer model must be reported, not priced as an older one.
            ("claude-opus-4-9", None),
            ("claude-opus-9", None),
            ("gpt-6.2-sol-mini", None),
            ("gpt-6.2-astra", None),
            ("gpt-5.9", None),
            ("gpt-5-codex-preview", None),
            ("claude-sonnet-4-5-2025", None),
            ("<synthetic>", None),
            ("", None),
        ];
        for (model, want) in cases {
            assert_eq!(p.lookup(model).map(|(id, _)| id), *want, "{model}");
        }
    }

    #[test]
    fn missing_cache_prices_fall_back_never_to_zero() {
        let p = fixture_pricing();
        let (_, codex) = p.lookup("gpt-5.3-codex").unwrap();
        // No cache_read in the entry: Claude-style cache reads use cached_input.
        let t = TokenCounts {
            cache_read: 1_000_000,
            cache_write_1h: 1_000_000,
            ..Default::default()
        };
        assert_close(codex.cost(&t, false, false), 0.175 + 1.75);
        let (_, sonnet) = p.lookup("claude-sonnet-4-6").unwrap();
        let t = TokenCounts {
            cached_input: 1_000_000,
            ..Default::default()
        };
        assert_close(sonnet.cost(&t, false, false), 0.30);
    }

    #[test]
    fn fast_and_long_context_tiers() {
        let p = Pricing::builtin();
        let (_, opus) = p.lookup("claude-opus-4-7").unwrap();
        let t = TokenCounts {
            output: 1_000_000,
            ..Default::default()
        };
        assert_close(opus.cost(&t, true, false), 150.0);
        let (_, haiku) = p.lookup("claude-haiku-4-5").unwrap();
        assert_close(haiku.cost(&t, true, false), 5.0);
        let (_, sonnet) = p.lookup("claude-sonnet-4-5-20250929").unwrap();
        assert!(!sonnet.is_long_context(200_000));
        assert!(sonnet.is_long_context(200_001));
        let t = TokenCounts {
            input: 1_000_000,
            cache_read: 1_000_000,
            ..Default::default()
        };
        assert_close(sonnet.cost(&t, false, true), 6.0 + 0.6);
    }

    #[test]
    fn overrides_replace_whole_entries_and_add_new_ones() {
        let p = Pricing::builtin().with_overrides(fixture_pricing());
        let (_, opus) = p.lookup("claude-opus-4-7").unwrap();
        assert_eq!(opus.fast_multiplier, Some(6.0));
        let custom = Pricing::from_json(
            r#"{"models": {"claude-opus-4-7": {"input": 1, "output": 2}, "my-model": {"input": 3, "output": 4}}}"#,
            "t",
        )
        .unwrap();
        let p = Pricing::builtin().with_overrides(custom);
        let (_, opus) = p.lookup("claude-opus-4-7-20270101").unwrap();
        assert_eq!(
            (opus.input, opus.cache_write_5m, opus.fast_multiplier),
            (1.0, None, None)
        );
        assert!(p.lookup("my-model").is_some());
        assert_eq!(p.as_of(), Pricing::builtin().as_of());
    }

    #[test]
    fn rejects_bad_tables() {
        let cases = [
            r#"{"models": {"m": {"input": -1, "output": 1}}}"#,
            r#"{"models": {"m": {"input": 1, "output": 1, "fast_multiplier": 0}}}"#,
            r#"{"models": {"m": {"input": 1, "output": 1, "long_context": {"above_tokens": 5, "output": -2}}}}"#,
            r#"{"unit": "usd_per_token", "models": {}}"#,
            r#"{"models": {"m": {"input": "1", "output": 1}}}"#,
            r#"{"models": []}"#,
            "not json",
        ];
        for text in cases {
            assert!(Pricing::from_json(text, "t").is_err(), "{text}");
        }
    }

    #[test]
    fn override_file_errors_name_the_path() {
        let err =
            Pricing::builtin_with_override_file(Path::new("/nonexistent/prices.json")).unwrap_err();
        assert!(
            err.to_string().contains("/nonexistent/prices.json"),
            "{err}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, "{").unwrap();
        let err = Pricing::builtin_with_override_file(&path).unwrap_err();
        assert!(err.to_string().contains("p.json"), "{err}");
    }
}
