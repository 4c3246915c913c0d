//! `pair.*` configuration: every key of SPEC §12 read once into [`Options`], validated, with
//! defaults. Booleans and integers are git's ([`crate::util::git_value`]). Pure: values come
//! through a lookup function, so parsing is tested without git. The run settings among them
//! (`pair.reviewer`, `pair.maxRounds`, …) are read by the one table of
//! [`crate::model::settings`]: its config keys, value shapes and defaults.

use std::path::PathBuf;

use serde_json::Value;

use crate::model::settings::{self, Configuration, Setting, Shape};

/// Paths a reviewer must never see, whatever the configuration adds (the packet checks them
/// on their own, so a `!pattern` in `pair.review.exclude` cannot re-include them).
pub const DEFAULT_REVIEW_EXCLUDE: [&str; 2] = ["HANDOFF.md", ".pair/working/**"];

/// `pair.maxFileBytes`'s default: 1 MiB, far beyond a hand-written source file.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The settings in force, after defaults; command-line flags override them in the command layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub coder: String,
    pub reviewer: String,
    pub reviewers: Vec<String>,
    /// `pair.fallbackOrder`: realizations tried in order when the reviewer does not bind
    /// (empty: the surfaces document's order).
    pub fallback_order: Vec<String>,
    pub max_rounds: u32,
    pub budget_usd: Option<f64>,
    pub budget_warn_ratio: f64,
    pub reviewer_command: Option<Vec<String>>,
    /// `pair.acpCommand`: the command line of the ACP agent the `acp` reviewer drives
    /// (`npx @zed-industries/claude-agent-acp`), words or a JSON array.
    pub acp_command: Option<Vec<String>>,
    pub review_timeout_secs: u64,
    pub diff_budget_bytes: u64,
    /// `pair.maxFileBytes`: a changed file larger than this is not sent to a reviewer at all
    /// (listed as unreviewed, so an approval of the change is partial; SPEC §6.2).
    pub max_file_bytes: u64,
    pub review_exclude: Vec<String>,
    pub max_parallel: Option<u32>,
    pub quorum: Option<u32>,
    pub pricing_file: Option<PathBuf>,
    pub surface_file: Option<PathBuf>,
    pub prompt_template: Option<PathBuf>,
    pub handoff_file: bool,
    pub never_commit: Vec<String>,
    pub handoff_threshold: f64,
    pub trusted_checks: Vec<String>,
    /// `pair.handoffAuthorized`: a standing authorization for handoffs (SPEC §10).
    pub handoff_authorized: bool,
    /// `pair.archiveAuthorized`: a standing authorization to archive a handoff's source.
    pub archive_authorized: bool,
    /// `pair.reviewerEnv` (multi; each value names variables separated by spaces or commas,
    /// exact or a prefix ending in `*`): what reviewers inherit besides the variables their
    /// realization declares (`data/surfaces.json` `env`).
    pub reviewer_env: Vec<String>,
    /// `pair.review.redactSecrets`: reserved. Review packets are always redacted (SPEC §6.2);
    /// `false` is read, validated and reported as having no effect.
    pub redact_secrets: bool,
    /// `pair.secretsFile`: a secret pattern table replacing the shipped one
    /// (`data/secrets.json` format).
    pub secrets_file: Option<PathBuf>,
    /// `pair.reviewerModel`: the model reviewers are asked to use (their CLI's own default
    /// when unset), through their realization's `model` arguments.
    pub reviewer_model: Option<String>,
    /// `pair.reviewerEffort`: the reasoning effort reviewers are asked for.
    pub reviewer_effort: Option<String>,
    /// `pair.prFinalRound`: once the run's PR exists, its final review (`review --pr N`).
    pub pr_final_round: bool,
    /// The `pair.*` keys that have a value in git config (the rest are defaults), so a
    /// command can say where each setting came from.
    pub configured: Vec<&'static str>,
}

/// Every key of SPEC §12 this module reads.
pub const KEYS: [&str; 30] = [
    "pair.coder",
    "pair.reviewer",
    "pair.reviewers",
    "pair.maxRounds",
    "pair.budgetUsd",
    "pair.budgetWarnRatio",
    "pair.reviewerCommand",
    "pair.reviewTimeout",
    "pair.diffBudgetBytes",
    "pair.review.exclude",
    "pair.maxParallel",
    "pair.quorum",
    "pair.pricingFile",
    "pair.surfaceFile",
    "pair.promptTemplate",
    "pair.handoffFile",
    "pair.neverCommit",
    "pair.handoffThreshold",
    "pair.trustedChecks",
    "pair.review.redactSecrets",
    "pair.secretsFile",
    "pair.maxFileBytes",
    "pair.reviewerEnv",
    "pair.handoffAuthorized",
    "pair.archiveAuthorized",
    "pair.reviewerModel",
    "pair.reviewerEffort",
    "pair.prFinalRound",
    "pair.acpCommand",
    "pair.fallbackOrder",
];

/// A configuration value that does not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("bad config value '{value}' for '{key}': expected {expected}")]
pub struct Error {
    pub key: String,
    pub value: String,
    pub expected: &'static str,
}

impl Default for Options {
    fn default() -> Self {
        let mut o = Options {
            // The run settings' defaults are the table's, put in below.
            coder: String::new(),
            reviewer: String::new(),
            reviewers: Vec::new(),
            fallback_order: Vec::new(),
            max_rounds: 0,
            budget_usd: None,
            budget_warn_ratio: 0.8,
            reviewer_command: None,
            acp_command: None,
            review_timeout_secs: 0,
            diff_budget_bytes: 262_144,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            review_exclude: DEFAULT_REVIEW_EXCLUDE
                .iter()
                .map(|s| s.to_string())
                .collect(),
            max_parallel: None,
            quorum: None,
            pricing_file: None,
            surface_file: None,
            prompt_template: None,
            handoff_file: true,
            never_commit: vec!["HANDOFF.md".into()],
            handoff_threshold: 0.85,
            trusted_checks: Vec::new(),
            handoff_authorized: false,
            archive_authorized: false,
            reviewer_env: Vec::new(),
            redact_secrets: true,
            secrets_file: None,
            reviewer_model: None,
            reviewer_effort: None,
            pr_final_round: false,
            configured: Vec::new(),
        };
        for setting in Setting::ALL {
            o.put_setting(setting, &(setting.spec().default)());
        }
        o
    }
}

impl Options {
    /// Reads every `pair.*` key through `values`: every occurrence of a key in file order,
    /// `None` for one written without `=` (`[pair] handoffFile`, which git reads as true).
    pub fn from_lookup(values: impl Fn(&str) -> Vec<Option<String>>) -> Result<Options, Error> {
        let last = |key: &str| values(key).pop();
        // Outside booleans, a key without `=` has the empty value.
        let texts = |key: &str| -> Vec<String> {
            values(key)
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect()
        };
        let last_text = |key: &str| texts(key).pop();
        let mut o = Options {
            configured: KEYS
                .iter()
                .copied()
                .filter(|key| !values(key).is_empty())
                .collect(),
            ..Options::default()
        };
        // Keys are read in SPEC §12's order: the first bad value is the one reported.
        o.read_setting(Setting::Coder, &values)?;
        o.read_setting(Setting::Reviewer, &values)?;
        o.read_setting(Setting::Reviewers, &values)?;
        o.read_setting(Setting::MaxRounds, &values)?;
        o.read_setting(Setting::BudgetUsd, &values)?;
        if let Some(v) = last_text("pair.budgetWarnRatio") {
            o.budget_warn_ratio = ratio("pair.budgetWarnRatio", &v)?;
        }
        if let Some(v) = last_text("pair.reviewerCommand") {
            o.reviewer_command = Some(parse_argv("pair.reviewerCommand", &v)?);
        }
        if let Some(v) = last_text("pair.acpCommand") {
            o.acp_command = Some(acp_command(&v).map_err(|_| {
                bad(
                    "pair.acpCommand",
                    &v,
                    "the ACP agent's command line: words (npx @zed-industries/claude-agent-acp) or a JSON array of strings",
                )
            })?);
        }
        o.read_setting(Setting::ReviewTimeout, &values)?;
        if let Some(v) = last("pair.diffBudgetBytes") {
            o.diff_budget_bytes = u64::from(positive_u32("pair.diffBudgetBytes", v)?);
        }
        for pattern in texts("pair.review.exclude") {
            let pattern = pattern.trim().to_owned();
            if !pattern.is_empty() && !o.review_exclude.contains(&pattern) {
                o.review_exclude.push(pattern);
            }
        }
        if let Some(v) = last("pair.maxParallel") {
            o.max_parallel = Some(positive_u32("pair.maxParallel", v)?);
        }
        if let Some(v) = last("pair.quorum") {
            o.quorum = Some(positive_u32("pair.quorum", v)?);
        }
        o.pricing_file = last_text("pair.pricingFile").map(PathBuf::from);
        o.surface_file = last_text("pair.surfaceFile").map(PathBuf::from);
        o.prompt_template = last_text("pair.promptTemplate").map(PathBuf::from);
        o.secrets_file = last_text("pair.secretsFile")
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from);
        if let Some(v) = last("pair.handoffFile") {
            o.handoff_file = boolean("pair.handoffFile", v)?;
        }
        for path in texts("pair.neverCommit") {
            // An empty value empties the list so far, the default included (git's convention
            // for multi-valued keys): a repository that tracks its own HANDOFF.md says
            // `git config pair.neverCommit ""`.
            if path.trim().is_empty() {
                o.never_commit.clear();
            } else if !o.never_commit.contains(&path) {
                o.never_commit.push(path.trim().to_owned());
            }
        }
        if let Some(v) = last_text("pair.handoffThreshold") {
            o.handoff_threshold = ratio("pair.handoffThreshold", &v)?;
        }
        o.trusted_checks = texts("pair.trustedChecks");
        o.read_setting(Setting::HandoffAuthorized, &values)?;
        o.read_setting(Setting::ArchiveAuthorized, &values)?;
        o.read_setting(Setting::FallbackOrder, &values)?;
        o.reviewer_env = texts("pair.reviewerEnv")
            .iter()
            .flat_map(|v| v.split(|c: char| c == ',' || c.is_whitespace()))
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        if let Some(v) = last("pair.review.redactSecrets") {
            o.redact_secrets = boolean("pair.review.redactSecrets", v)?;
        }
        o.secrets_file = last_text("pair.secretsFile")
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from);
        if let Some(v) = last("pair.maxFileBytes") {
            o.max_file_bytes = u64::from(positive_u32("pair.maxFileBytes", v)?);
        }
        o.read_setting(Setting::ReviewerModel, &values)?;
        o.read_setting(Setting::ReviewerEffort, &values)?;
        o.read_setting(Setting::PrFinalRound, &values)?;
        Ok(o)
    }

    /// The settings worth recording on a run, as `pair.*` keys.
    pub fn to_record(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut map = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            map.insert(k.to_owned(), v);
        };
        // Start records keep this order byte for byte: it is not the settings table's.
        for setting in [
            Setting::Coder,
            Setting::Reviewer,
            Setting::Reviewers,
            Setting::MaxRounds,
            Setting::BudgetUsd,
        ] {
            put(setting.spec().config_key, self.value(setting));
        }
        put("pair.budgetWarnRatio", self.budget_warn_ratio.into());
        let timeout = Setting::ReviewTimeout;
        put(timeout.spec().config_key, self.value(timeout));
        put("pair.diffBudgetBytes", self.diff_budget_bytes.into());
        put("pair.review.exclude", self.review_exclude.clone().into());
        put("pair.maxParallel", self.max_parallel.into());
        put("pair.quorum", self.quorum.into());
        put("pair.handoffFile", self.handoff_file.into());
        map
    }
}

impl Options {
    /// Reads run setting `setting` from its config key (the last occurrence), parsed by its
    /// shape; unset (or a blank name) leaves the default.
    fn read_setting(
        &mut self,
        setting: Setting,
        values: &impl Fn(&str) -> Vec<Option<String>>,
    ) -> Result<(), Error> {
        let key = setting.spec().config_key;
        let last = values(key).pop();
        // Outside integers, a key without `=` has the empty value.
        let text = last.clone().map(Option::unwrap_or_default);
        let value: Option<Value> = match setting.spec().shape {
            Shape::Reviewer | Shape::Tool => text
                .filter(|v| !v.trim().is_empty())
                .map(|v| v.trim().into()),
            Shape::Reviewers => text.map(|v| settings::split_names(&v).into()),
            Shape::Count => last
                .map(|v| positive_u32(key, v))
                .transpose()?
                .map(Value::from),
            Shape::Dollars => text
                .map(|v| non_negative_f64(key, &v))
                .transpose()?
                .map(Value::from),
            Shape::Seconds => last
                .map(|v| positive_u32(key, v).map(u64::from))
                .transpose()?
                .map(Value::from),
            Shape::Flag => last.map(|v| boolean(key, v)).transpose()?.map(Value::from),
            Shape::Choice => match text.map(|v| v.trim().to_owned()) {
                None => None,
                Some(v) if v.is_empty() => None,
                Some(v) if settings::is_choice(&v) => Some(v.into()),
                Some(v) => return Err(bad(key, &v, settings::CHOICE_EXPECTED)),
            },
        };
        if let Some(value) = value {
            self.put_setting(setting, &value);
        }
        Ok(())
    }

    /// Puts `value` (as [`Configuration::value`] gives it) into the field of `setting`.
    fn put_setting(&mut self, setting: Setting, value: &Value) {
        match setting {
            Setting::Reviewer => {
                if let Some(v) = value.as_str() {
                    self.reviewer = v.to_owned();
                }
            }
            Setting::Reviewers => {
                self.reviewers = value
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            }
            Setting::Coder => {
                if let Some(v) = value.as_str() {
                    self.coder = v.to_owned();
                }
            }
            Setting::MaxRounds => {
                if let Some(v) = value.as_u64().and_then(|v| u32::try_from(v).ok()) {
                    self.max_rounds = v;
                }
            }
            Setting::BudgetUsd => self.budget_usd = value.as_f64(),
            Setting::ReviewTimeout => {
                if let Some(v) = value.as_u64() {
                    self.review_timeout_secs = v;
                }
            }
            Setting::HandoffAuthorized => self.handoff_authorized = value.as_bool() == Some(true),
            Setting::ArchiveAuthorized => self.archive_authorized = value.as_bool() == Some(true),
            Setting::ReviewerModel => self.reviewer_model = value.as_str().map(str::to_owned),
            Setting::ReviewerEffort => self.reviewer_effort = value.as_str().map(str::to_owned),
            Setting::PrFinalRound => self.pr_final_round = value.as_bool() == Some(true),
            Setting::FallbackOrder => {
                self.fallback_order = value
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            }
        }
    }
}

impl Configuration for Options {
    fn value(&self, setting: Setting) -> Value {
        match setting {
            Setting::Reviewer => self.reviewer.clone().into(),
            Setting::Reviewers => self.reviewers.clone().into(),
            Setting::Coder => self.coder.clone().into(),
            Setting::MaxRounds => self.max_rounds.into(),
            Setting::BudgetUsd => self.budget_usd.into(),
            Setting::ReviewTimeout => self.review_timeout_secs.into(),
            Setting::HandoffAuthorized => self.handoff_authorized.into(),
            Setting::ArchiveAuthorized => self.archive_authorized.into(),
            Setting::ReviewerModel => self.reviewer_model.clone().into(),
            Setting::ReviewerEffort => self.reviewer_effort.clone().into(),
            Setting::PrFinalRound => self.pr_final_round.into(),
            Setting::FallbackOrder => self.fallback_order.clone().into(),
        }
    }

    fn configures(&self, setting: Setting) -> bool {
        self.configured.contains(&setting.spec().config_key)
    }
}

fn bad(key: &str, value: &str, expected: &'static str) -> Error {
    Error {
        key: key.to_owned(),
        value: value.escape_debug().to_string(),
        expected,
    }
}

/// A git integer (`10`, `10k`, `2m`, `1g`, `0x10`) that is positive and fits a `u32`; a key
/// without `=` has no integer value.
fn positive_u32(key: &str, value: Option<String>) -> Result<u32, Error> {
    let value = value.unwrap_or_default();
    crate::util::git_value::integer_u32(&value)
        .filter(|&n| n > 0)
        .ok_or_else(|| bad(key, &value, "a positive integer"))
}

fn non_negative_f64(key: &str, value: &str) -> Result<f64, Error> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| bad(key, value, "a non-negative number of US dollars"))
}

fn ratio(key: &str, value: &str) -> Result<f64, Error> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0 && *x <= 1.0)
        .ok_or_else(|| bad(key, value, "a ratio between 0 and 1"))
}

/// A git boolean: a key without `=` is true, an empty value false, then `true/yes/on`,
/// `false/no/off` in any case, or a number (non-zero is true), as `git config --type=bool`.
fn boolean(key: &str, value: Option<String>) -> Result<bool, Error> {
    match value {
        None => Ok(true),
        Some(value) => crate::util::git_value::boolean(&value)
            .ok_or_else(|| bad(key, &value, "a boolean (true/false)")),
    }
}

/// Parses a reviewer command given as a JSON array of strings, by the one rule
/// ([`reviewer_command`]), as a config value error.
fn parse_argv(key: &str, value: &str) -> Result<Vec<String>, Error> {
    reviewer_command(value).map_err(|_| {
        bad(
            key,
            value,
            "a non-empty JSON array of strings, e.g. [\"my-reviewer\", \"--strict\"]",
        )
    })
}

/// The ACP agent's command line (`pair.acpCommand`): a JSON array of strings as for a
/// reviewer command, or words separated by white space (no quoting: an argument holding a
/// space needs the array). The error is the reason.
pub fn acp_command(text: &str) -> Result<Vec<String>, String> {
    if text.trim_start().starts_with('[') {
        return reviewer_command(text);
    }
    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    if words.is_empty() {
        return Err("empty".into());
    }
    Ok(words)
}

/// The one rule for a reviewer command (`pair.reviewerCommand`, `--reviewer-cmd`): a
/// non-empty JSON array of strings whose first (the program) is non-empty. The error is the
/// reason, for the caller to name the value.
pub fn reviewer_command(text: &str) -> Result<Vec<String>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let items = value.as_array().ok_or_else(|| {
        "not a JSON array (write it like [\"my-reviewer\", \"--flag\"])".to_owned()
    })?;
    let argv: Vec<String> = items
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or_else(|| "every element must be a string".to_owned())?;
    match argv.first() {
        None => Err("the array is empty".to_owned()),
        Some(program) if program.trim().is_empty() => Err("the program name is empty".to_owned()),
        Some(_) => Ok(argv),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Vec<Option<String>> + use<> {
        let pairs: Vec<(&str, Option<&str>)> = pairs.iter().map(|&(k, v)| (k, Some(v))).collect();
        occurrences(&pairs)
    }

    /// Like [`lookup`], with `None` for a key written without `=`.
    fn occurrences(pairs: &[(&str, Option<&str>)]) -> impl Fn(&str) -> Vec<Option<String>> + use<> {
        let mut map: HashMap<String, Vec<Option<String>>> = HashMap::new();
        for (k, v) in pairs {
            map.entry(k.to_string())
                .or_default()
                .push(v.map(str::to_owned));
        }
        move |k| map.get(k).cloned().unwrap_or_default()
    }

    #[test]
    fn every_run_setting_is_a_key_read_here() {
        for setting in Setting::ALL {
            assert!(KEYS.contains(&setting.spec().config_key), "{setting:?}");
        }
    }

    #[test]
    fn defaults_match_the_spec() {
        let o = Options::from_lookup(lookup(&[])).expect("defaults");
        assert_eq!(o.coder, "claude");
        assert_eq!(o.reviewer, "codex");
        assert_eq!(o.max_rounds, 5);
        assert_eq!(o.review_timeout_secs, 600);
        assert_eq!(o.diff_budget_bytes, 262_144);
        assert_eq!(o.review_exclude, ["HANDOFF.md", ".pair/working/**"]);
        assert!(o.handoff_file);
        assert_eq!(o.budget_warn_ratio, 0.8);
        assert!(o.redact_secrets, "redaction is always on");
        assert_eq!(o.secrets_file, None);
    }

    #[test]
    fn values_parse_with_git_conventions() {
        let o = Options::from_lookup(lookup(&[
            ("pair.maxRounds", "3"),
            ("pair.maxRounds", "7"),
            ("pair.diffBudgetBytes", "64k"),
            ("pair.handoffFile", "off"),
            ("pair.reviewers", "codex, claude"),
            ("pair.review.exclude", "secret/**"),
            ("pair.reviewerCommand", r#"["rev","--x"]"#),
            ("pair.budgetUsd", "2.5"),
            ("pair.secretsFile", "/etc/pair/secrets.json"),
        ]))
        .expect("parses");
        assert_eq!(
            o.secrets_file,
            Some(PathBuf::from("/etc/pair/secrets.json"))
        );
        assert_eq!(o.max_rounds, 7, "last value wins");
        assert_eq!(o.diff_budget_bytes, 65_536);
        assert!(!o.handoff_file);
        assert_eq!(o.reviewers, ["codex", "claude"]);
        assert_eq!(
            o.review_exclude,
            ["HANDOFF.md", ".pair/working/**", "secret/**"]
        );
        assert_eq!(o.reviewer_command, Some(vec!["rev".into(), "--x".into()]));
        assert_eq!(o.budget_usd, Some(2.5));
    }

    #[test]
    fn unparseable_values_name_key_and_value() {
        for (key, value) in [
            ("pair.maxRounds", "many"),
            ("pair.maxRounds", "0"),
            ("pair.budgetUsd", "-1"),
            ("pair.budgetUsd", "lots"),
            ("pair.budgetWarnRatio", "1.5"),
            ("pair.handoffFile", "maybe"),
            ("pair.reviewerCommand", "rev --x"),
            ("pair.reviewerCommand", "[]"),
            ("pair.reviewTimeout", "soon"),
            ("pair.diffBudgetBytes", "1t"),
            ("pair.diffBudgetBytes", "8g"),
            ("pair.maxRounds", "-2"),
            ("pair.maxRounds", ""),
            ("pair.review.redactSecrets", "yes please"),
        ] {
            let err = Options::from_lookup(lookup(&[(key, value)])).expect_err(key);
            assert_eq!(err.key, key);
            assert!(err.to_string().contains(value), "{err}");
        }
    }

    #[test]
    fn booleans_are_read_as_git_reads_them() {
        let handoff = |v: Option<&str>| {
            Options::from_lookup(occurrences(&[("pair.handoffFile", v)])).map(|o| o.handoff_file)
        };
        // `[pair] handoffFile` (no `=`) is true; `handoffFile =` (empty) is false.
        assert_eq!(handoff(None), Ok(true));
        assert_eq!(handoff(Some("")), Ok(false));
        for (value, want) in [
            ("yes", true),
            ("on", true),
            ("true", true),
            ("1", true),
            ("TRUE", true),
            ("Yes", true),
            ("2", true),
            ("no", false),
            ("off", false),
            ("false", false),
            ("0", false),
            ("OFF", false),
        ] {
            assert_eq!(handoff(Some(value)), Ok(want), "{value}");
        }
        let err = handoff(Some("maybe")).expect_err("not a boolean");
        assert_eq!(
            err.to_string(),
            "bad config value 'maybe' for 'pair.handoffFile': expected a boolean (true/false)"
        );
        // The last occurrence decides, whether or not it has a value.
        let o = Options::from_lookup(occurrences(&[
            ("pair.handoffFile", Some("no")),
            ("pair.handoffFile", None),
            ("pair.review.redactSecrets", None),
        ]))
        .expect("parses");
        assert!(o.handoff_file && o.redact_secrets);
    }

    #[test]
    fn integers_are_read_as_git_reads_them() {
        let budget = |v: &str| {
            Options::from_lookup(lookup(&[("pair.diffBudgetBytes", v)]))
                .map(|o| o.diff_budget_bytes)
        };
        for (value, want) in [
            ("10", 10),
            ("1k", 1024),
            ("2M", 2 << 20),
            ("1g", 1 << 30),
            ("0x10", 16),
        ] {
            assert_eq!(budget(value), Ok(want), "{value}");
        }
        // A key without `=` is no integer (git: "bad numeric config value").
        let err =
            Options::from_lookup(occurrences(&[("pair.maxRounds", None)])).expect_err("no value");
        assert_eq!(err.key, "pair.maxRounds");
        // Strings keep reading a key without `=` as empty.
        let o = Options::from_lookup(occurrences(&[
            ("pair.coder", None),
            ("pair.review.exclude", None),
        ]))
        .expect("parses");
        assert_eq!((o.coder.as_str(), o.review_exclude.len()), ("claude", 2));
    }
}
