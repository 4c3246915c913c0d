//! Run settings (SPEC §2): what was given as a flag to `start` or with `git pair set` belongs
//! to the run and is recorded; every other setting follows `git config` as it is when used,
//! like git's own configuration. Owns the one table of run settings ([`Setting::spec`]: name,
//! config key, value shape, default, where the run keeps it) and computes the values in force
//! and where each came from. Pure: a manifest and the configuration in, values out.

use serde_json::Value;

use crate::model::Manifest;

/// A setting a run can own (a flag to `start`, `git pair set`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    Reviewer,
    Reviewers,
    Coder,
    MaxRounds,
    BudgetUsd,
    ReviewTimeout,
    HandoffAuthorized,
    ArchiveAuthorized,
    ReviewerModel,
    ReviewerEffort,
    PrFinalRound,
    FallbackOrder,
}

/// How a setting's value is written (as a `set` argument and in `git config`) and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A reviewer name a realization defines.
    Reviewer,
    /// A comma-separated list of reviewer names, each one a realization defines.
    Reviewers,
    /// A tool name: letters, digits, `-`, `_`, `.`.
    Tool,
    /// A positive whole number (a git integer in configuration).
    Count,
    /// A non-negative number of US dollars.
    Dollars,
    /// A positive number of seconds (a git integer in configuration).
    Seconds,
    /// A boolean (git's spellings: true/false, yes/no, on/off, 1/0).
    Flag,
    /// A word handed to a reviewer's own flag (a model name, an effort level): never an
    /// option ([`is_choice`]); whether the reviewer takes it is its realization's to say.
    Choice,
}

/// Where a run keeps a setting it owns.
#[derive(Debug, Clone, Copy)]
pub enum Kept {
    /// In a manifest field of its own, which the start record fills: how to read it and how
    /// to write a value into it (a value of the wrong type leaves it as is).
    Field {
        read: fn(&Manifest) -> Value,
        write: fn(&mut Manifest, &Value),
    },
    /// Only in the manifest's `run_settings`, while the run owns it.
    RunSettings,
}

/// Everything about one run setting.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The `set` key, also the key in `run_settings`, a start record's `flags` and `status`.
    pub name: &'static str,
    /// The `git config` key it follows when the run does not own it.
    pub config_key: &'static str,
    /// How its value parses.
    pub shape: Shape,
    /// Its value when neither the run nor configuration gives one.
    pub default: fn() -> Value,
    /// Where the run keeps it.
    pub kept: Kept,
}

/// The one table of run settings, in [`Setting::ALL`]'s order (a setting's index is its
/// discriminant).
static SPECS: [Spec; 12] = [
    Spec {
        name: "reviewer",
        config_key: "pair.reviewer",
        shape: Shape::Reviewer,
        default: || "codex".into(),
        kept: Kept::Field {
            read: |m| m.reviewer.clone().into(),
            write: |m, v| {
                if let Some(v) = v.as_str() {
                    m.reviewer = v.to_owned();
                }
            },
        },
    },
    Spec {
        name: "reviewers",
        config_key: "pair.reviewers",
        shape: Shape::Reviewers,
        default: || Value::Array(Vec::new()),
        kept: Kept::RunSettings,
    },
    Spec {
        name: "coder",
        config_key: "pair.coder",
        shape: Shape::Tool,
        default: || "claude".into(),
        kept: Kept::Field {
            read: |m| m.coder.clone().into(),
            write: |m, v| {
                if let Some(v) = v.as_str() {
                    m.coder = v.to_owned();
                }
            },
        },
    },
    Spec {
        name: "max-rounds",
        config_key: "pair.maxRounds",
        shape: Shape::Count,
        default: || 5.into(),
        kept: Kept::Field {
            read: |m| m.max_rounds.into(),
            write: |m, v| {
                if let Some(v) = v.as_u64().and_then(|v| u32::try_from(v).ok()) {
                    m.max_rounds = v;
                }
            },
        },
    },
    Spec {
        name: "budget-usd",
        config_key: "pair.budgetUsd",
        shape: Shape::Dollars,
        default: || Value::Null,
        kept: Kept::Field {
            read: |m| m.budget_usd.into(),
            write: |m, v| m.budget_usd = v.as_f64(),
        },
    },
    Spec {
        name: "review-timeout",
        config_key: "pair.reviewTimeout",
        shape: Shape::Seconds,
        default: || 600.into(),
        kept: Kept::RunSettings,
    },
    // Standing authorizations (SPEC §10): the human's "yes" given once instead of a flag on
    // every call (`checkpoint create --authorized`, `checkpoint archive --authorize-archive`).
    Spec {
        name: "handoff-authorized",
        config_key: "pair.handoffAuthorized",
        shape: Shape::Flag,
        default: || false.into(),
        kept: Kept::RunSettings,
    },
    Spec {
        name: "archive-authorized",
        config_key: "pair.archiveAuthorized",
        shape: Shape::Flag,
        default: || false.into(),
        kept: Kept::RunSettings,
    },
    // The reviewer's model and reasoning effort, passed through the argument groups its
    // realization declares (`data/surfaces.json` `model`, `effort`); unset: the CLI's own.
    Spec {
        name: "reviewer-model",
        config_key: "pair.reviewerModel",
        shape: Shape::Choice,
        default: || Value::Null,
        kept: Kept::RunSettings,
    },
    Spec {
        name: "reviewer-effort",
        config_key: "pair.reviewerEffort",
        shape: Shape::Choice,
        default: || Value::Null,
        kept: Kept::RunSettings,
    },
    // Once the run's PR exists, one review of the PR as the remote has it, its findings
    // posted on the PR, and one more coder round before `finish` records the PR as final.
    Spec {
        name: "pr-final-round",
        config_key: "pair.prFinalRound",
        shape: Shape::Flag,
        default: || false.into(),
        kept: Kept::RunSettings,
    },
    // The realizations tried, in order, when the configured reviewer does not bind (SPEC
    // §6.1); empty: the surfaces document's own order (its `fallback_order`).
    Spec {
        name: "fallback-order",
        config_key: "pair.fallbackOrder",
        shape: Shape::Reviewers,
        default: || Value::Array(Vec::new()),
        kept: Kept::RunSettings,
    },
];

impl Setting {
    /// Every run setting, in the order `status` lists them and errors name them.
    pub const ALL: [Setting; 12] = [
        Setting::Reviewer,
        Setting::Reviewers,
        Setting::Coder,
        Setting::MaxRounds,
        Setting::BudgetUsd,
        Setting::ReviewTimeout,
        Setting::HandoffAuthorized,
        Setting::ArchiveAuthorized,
        Setting::ReviewerModel,
        Setting::ReviewerEffort,
        Setting::PrFinalRound,
        Setting::FallbackOrder,
    ];

    /// The setting's row of the one table.
    pub fn spec(self) -> &'static Spec {
        &SPECS[self as usize]
    }

    /// The `set` key.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The setting whose `set` key is `name`.
    pub fn from_name(name: &str) -> Option<Setting> {
        Setting::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Every `set` key, comma-separated, for messages.
    pub fn names() -> String {
        Setting::ALL.map(Setting::name).join(", ")
    }

    /// Parses `text` (trimmed) as a `set` argument; on failure, what was expected. Whether
    /// a reviewer name is defined is for the caller to check ([`Shape::Reviewer`],
    /// [`Shape::Reviewers`]): realizations are not data this module has.
    pub fn parse(self, text: &str) -> Result<Value, &'static str> {
        match self.spec().shape {
            Shape::Reviewer => Ok(text.into()),
            Shape::Reviewers => {
                let names = split_names(text);
                if names.is_empty() {
                    return Err("a comma-separated list of reviewers");
                }
                Ok(names.into())
            }
            Shape::Tool => {
                if !is_tool_name(text) {
                    return Err("a tool name (letters, digits, '-', '_', '.')");
                }
                Ok(text.into())
            }
            Shape::Count => text
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .map(Value::from)
                .ok_or("a positive whole number"),
            Shape::Dollars => text
                .parse::<f64>()
                .ok()
                .filter(|b| b.is_finite() && *b >= 0.0)
                .map(Value::from)
                .ok_or("a non-negative number of US dollars"),
            Shape::Seconds => text
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .map(Value::from)
                .ok_or("a positive number of seconds"),
            Shape::Flag => crate::util::git_value::boolean(text)
                .map(Value::from)
                .ok_or("a boolean (true/false)"),
            Shape::Choice => {
                if !is_choice(text) {
                    return Err(CHOICE_EXPECTED);
                }
                Ok(text.into())
            }
        }
    }

    /// The setting's value as the manifest holds it: its field, or (for one kept only in
    /// `run_settings`) the run's own value, if any.
    pub fn run_value(self, manifest: &Manifest) -> Option<Value> {
        run_value(manifest, self.name())
    }
}

/// A run setting's value as the manifest holds it, by `set` key. A key no setting has (a
/// record from a newer version) is looked up in `run_settings`, like settings kept there.
pub fn run_value(manifest: &Manifest, key: &str) -> Option<Value> {
    match Setting::from_name(key).map(|s| s.spec().kept) {
        Some(Kept::Field { read, .. }) => Some(read(manifest)),
        _ => manifest
            .run_settings
            .as_ref()
            .and_then(|s| s.get(key).cloned()),
    }
}

/// Writes `value` into the manifest field that keeps setting `key`, if one does.
pub fn write_field(manifest: &mut Manifest, key: &str, value: &Value) {
    if let Some(Kept::Field { write, .. }) = Setting::from_name(key).map(|s| s.spec().kept) {
        write(manifest, value);
    }
}

/// A comma-separated list of names, blanks dropped.
pub fn split_names(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// What a [`Shape::Choice`] value must look like, for messages.
pub const CHOICE_EXPECTED: &str = "a name of letters, digits and '.', '_', ':', '/', '@', '+', '-' (at most 128, not starting with '-')";

/// Whether `s` may be handed to a reviewer's flag as a model name or an effort level: a plain
/// word that can never be read as an option (no leading `-`), a path or a second argument.
pub fn is_choice(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._:/@+-".contains(c))
}

/// The text setting `setting` has for `manifest` (run-owned, else configuration), if any.
pub fn text(
    manifest: Option<&Manifest>,
    config: &dyn Configuration,
    setting: Setting,
) -> Option<String> {
    let value = match manifest {
        Some(m) => effective(m, config)
            .into_iter()
            .find(|e| e.key == setting.name())
            .map(|e| e.value),
        None => None,
    };
    value
        .unwrap_or_else(|| config.value(setting))
        .as_str()
        .map(str::to_owned)
}

/// A coder or reviewer name as runs record it.
pub fn is_tool_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// What configuration says of the run settings (`crate::config::Options`); a trait so this
/// module stays below configuration, which reads this table.
pub trait Configuration {
    /// The value configuration gives `setting`: its configured value, else its default.
    fn value(&self, setting: Setting) -> Value;
    /// Whether `git config` has a value for `setting`'s key.
    fn configures(&self, setting: Setting) -> bool;
}

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

/// Every run setting as in force now for `manifest`, with its source.
pub fn effective(manifest: &Manifest, config: &dyn Configuration) -> Vec<Effective> {
    Setting::ALL
        .into_iter()
        .map(|setting| {
            let spec = setting.spec();
            let key = spec.name;
            let owned = match &manifest.run_settings {
                // A run from before settings followed configuration owns those it recorded.
                None => setting.run_value(manifest),
                Some(settings) => settings.get(key).cloned(),
            };
            match owned {
                Some(value) => Effective {
                    key,
                    value,
                    source: Source::Run,
                },
                None => Effective {
                    key,
                    value: config.value(setting),
                    source: if config.configures(setting) {
                        Source::Config(spec.config_key)
                    } else {
                        Source::Default
                    },
                },
            }
        })
        .collect()
}

/// `manifest` with the effective reviewer, coder, round cap and budget in place of the
/// stored ones: what every rule of the loop reads (the stored projection is left as is).
pub fn apply(manifest: &Manifest, config: &dyn Configuration) -> Manifest {
    let mut m = manifest.clone();
    for e in effective(manifest, config) {
        write_field(&mut m, e.key, &e.value);
    }
    m
}

/// Whether the flag setting `setting` is on for `manifest` (run-owned, else configuration);
/// with no run, what configuration says.
pub fn flag(manifest: Option<&Manifest>, config: &dyn Configuration, setting: Setting) -> bool {
    let value = match manifest {
        Some(m) => effective(m, config)
            .into_iter()
            .find(|e| e.key == setting.name())
            .map(|e| e.value),
        None => None,
    };
    value
        .unwrap_or_else(|| config.value(setting))
        .as_bool()
        .unwrap_or(false)
}

/// The fallback order in force for `manifest` (run-owned, else `pair.fallbackOrder`), or for
/// a new run (`None`); empty when neither sets one (the surfaces document's order holds).
pub fn fallback_order(manifest: Option<&Manifest>, config: &dyn Configuration) -> Vec<String> {
    let value = manifest
        .and_then(|m| {
            effective(m, config)
                .into_iter()
                .find(|e| e.key == Setting::FallbackOrder.name())
        })
        .map_or_else(|| config.value(Setting::FallbackOrder), |e| e.value);
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The reviewer panel and timeout in force for `manifest` (run-owned, else configuration).
pub fn review_settings(manifest: &Manifest, config: &dyn Configuration) -> (Vec<String>, u64) {
    let now = effective(manifest, config);
    let value = |setting: Setting| {
        now.iter()
            .find(|e| e.key == setting.name())
            .map(|e| e.value.clone())
    };
    let names = |v: &Value| {
        v.as_array().map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect::<Vec<_>>()
        })
    };
    let configured = |setting: Setting| config.value(setting);
    let panel = value(Setting::Reviewers)
        .as_ref()
        .and_then(names)
        .or_else(|| names(&configured(Setting::Reviewers)))
        .unwrap_or_default();
    let timeout = value(Setting::ReviewTimeout)
        .as_ref()
        .and_then(Value::as_u64)
        .or_else(|| configured(Setting::ReviewTimeout).as_u64())
        .unwrap_or_default();
    (panel, timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys_are_the_documented_ones() {
        assert_eq!(
            Setting::names(),
            "reviewer, reviewers, coder, max-rounds, budget-usd, review-timeout, handoff-authorized, archive-authorized, reviewer-model, reviewer-effort, pr-final-round, fallback-order"
        );
        for s in Setting::ALL {
            assert_eq!(Setting::from_name(s.name()), Some(s));
            assert!(s.spec().config_key.starts_with("pair."));
        }
        assert_eq!(Setting::from_name("nope"), None);
    }

    #[test]
    fn set_arguments_parse_by_shape() {
        assert_eq!(Setting::MaxRounds.parse("3"), Ok(3.into()));
        assert!(Setting::MaxRounds.parse("0").is_err());
        assert!(Setting::MaxRounds.parse("zero").is_err());
        assert_eq!(Setting::BudgetUsd.parse("2.5"), Ok(2.5.into()));
        assert!(Setting::BudgetUsd.parse("-3").is_err());
        assert_eq!(
            Setting::Reviewers.parse("codex, claude,"),
            Ok(serde_json::json!(["codex", "claude"]))
        );
        assert!(Setting::Reviewers.parse(" , ").is_err());
        assert!(Setting::Coder.parse("a b").is_err());
        assert_eq!(Setting::ReviewTimeout.parse("90"), Ok(90.into()));
        assert_eq!(Setting::HandoffAuthorized.parse("yes"), Ok(true.into()));
        assert_eq!(Setting::ArchiveAuthorized.parse("off"), Ok(false.into()));
        assert!(Setting::ArchiveAuthorized.parse("maybe").is_err());
        assert_eq!(
            Setting::ReviewerModel.parse("gpt-5.2"),
            Ok("gpt-5.2".into())
        );
        assert_eq!(Setting::ReviewerEffort.parse("high"), Ok("high".into()));
        for hostile in ["-c", "--model=x", "a b", "", "x;y", "a\nb", "$(id)"] {
            assert!(
                Setting::ReviewerModel.parse(hostile).is_err(),
                "{hostile:?}"
            );
        }
        assert_eq!(Setting::PrFinalRound.parse("true"), Ok(true.into()));
    }

    #[test]
    fn the_manifest_keeps_field_settings_in_their_fields() {
        let mut m = Manifest::empty();
        write_field(&mut m, "max-rounds", &7.into());
        write_field(&mut m, "review-timeout", &9.into());
        assert_eq!(m.max_rounds, 7);
        assert_eq!(run_value(&m, "max-rounds"), Some(7.into()));
        assert_eq!(run_value(&m, "review-timeout"), None);
    }
}
