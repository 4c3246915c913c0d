//! Run settings (SPEC §2): what was given as a flag to `start` or with `git pair set` belongs
//! to the run and is recorded; every other setting follows `git config` as it is when used,
//! like git's own configuration. Computes the values in force and where each came from.
//! Pure: a manifest and the configuration in, values out.

use serde_json::Value;

use crate::config::Options;
use crate::model::{Manifest, SETTING_KEYS};

/// Where an effective setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The run owns it (a flag to `start`, or `git pair set`).
    Run,
    /// `git config` (the key).
    Config(&'static str),
    /// The built-in default.
    Default,
}

impl Source {
    /// `run`, the config key, or `default`.
    pub fn as_str(&self) -> &str {
        match self {
            Source::Run => "run",
            Source::Config(key) => key,
            Source::Default => "default",
        }
    }
}

/// One setting as in force now.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    pub key: &'static str,
    pub value: Value,
    pub source: Source,
}

/// The config key behind each `set` key.
fn config_key(key: &str) -> &'static str {
    match key {
        "reviewer" => "pair.reviewer",
        "reviewers" => "pair.reviewers",
        "coder" => "pair.coder",
        "max-rounds" => "pair.maxRounds",
        "budget-usd" => "pair.budgetUsd",
        _ => "pair.reviewTimeout",
    }
}

fn config_value(key: &str, o: &Options) -> Value {
    match key {
        "reviewer" => o.reviewer.clone().into(),
        "reviewers" => o.reviewers.clone().into(),
        "coder" => o.coder.clone().into(),
        "max-rounds" => o.max_rounds.into(),
        "budget-usd" => o.budget_usd.into(),
        _ => o.review_timeout_secs.into(),
    }
}

/// Every run setting as in force now for `manifest`, with its source.
pub fn effective(manifest: &Manifest, options: &Options) -> Vec<Effective> {
    SETTING_KEYS
        .iter()
        .map(|&key| {
            let owned = match &manifest.run_settings {
                // A run from before settings followed configuration owns those it recorded.
                None => manifest.setting_value(key),
                Some(settings) => settings.get(key).cloned(),
            };
            match owned {
                Some(value) => Effective {
                    key,
                    value,
                    source: Source::Run,
                },
                None => {
                    let config = config_key(key);
                    Effective {
                        key,
                        value: config_value(key, options),
                        source: if options.configured.contains(&config) {
                            Source::Config(config)
                        } else {
                            Source::Default
                        },
                    }
                }
            }
        })
        .collect()
}

/// `manifest` with the effective reviewer, coder, round cap and budget in place of the
/// stored ones: what every rule of the loop reads (the stored projection is left as is).
pub fn apply(manifest: &Manifest, options: &Options) -> Manifest {
    let mut m = manifest.clone();
    for e in effective(manifest, options) {
        match e.key {
            "reviewer" => {
                if let Some(v) = e.value.as_str() {
                    m.reviewer = v.to_owned();
                }
            }
            "coder" => {
                if let Some(v) = e.value.as_str() {
                    m.coder = v.to_owned();
                }
            }
            "max-rounds" => {
                if let Some(v) = e.value.as_u64().and_then(|v| u32::try_from(v).ok()) {
                    m.max_rounds = v;
                }
            }
            "budget-usd" => m.budget_usd = e.value.as_f64(),
            _ => {}
        }
    }
    m
}

/// The reviewer panel and timeout in force for `manifest` (run-owned, else configuration).
pub fn review_settings(manifest: &Manifest, options: &Options) -> (Vec<String>, u64) {
    let mut panel = options.reviewers.clone();
    let mut timeout = options.review_timeout_secs;
    for e in effective(manifest, options) {
        match e.key {
            "reviewers" => {
                panel = e
                    .value
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or(panel)
            }
            "review-timeout" => timeout = e.value.as_u64().unwrap_or(timeout),
            _ => {}
        }
    }
    (panel, timeout)
}
