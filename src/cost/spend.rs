//! A run's spend: which agent sessions it recorded, priced live through [`crate::cost`] and
//! compared with what the run stored, graded against the budget.
//!
//! Reviewer sessions count whole; coder sessions only inside the run's time window (from its
//! start to its finish, or now). The stored figure stands when the logs are gone, so a
//! report survives agents deleting old logs. A model with no price is never a $0: its
//! tokens are stored per model and priced when read with a table that knows it, and until
//! then the spend is a lower bound naming the model. Pure over the manifest and log files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cost::{self, Agent, CostError, LogRoots, Pricing, SessionCost, TimeWindow, Timestamp};
use crate::model::{Body, CostEntry, Manifest, SessionSpend};

/// Where logs, prices and the parse cache are.
pub struct Sources {
    pub roots: LogRoots,
    pub pricing: Pricing,
    pub cache_dir: Option<PathBuf>,
}

impl Sources {
    /// Log roots from the environment, the shipped prices (extended by `pair.pricingFile`),
    /// and the parse cache under `.git/pair/cache/cost`.
    pub fn new(pricing_file: Option<&Path>, pair_dir: &Path) -> Result<Sources, CostError> {
        let pricing = match pricing_file {
            Some(path) => Pricing::builtin_with_override_file(path)?,
            None => Pricing::builtin(),
        };
        Ok(Sources {
            roots: LogRoots::from_env(|key| std::env::var(key).ok()),
            pricing,
            cache_dir: Some(pair_dir.join("cache").join("cost")),
        })
    }
}

/// One session of the run, as measured now and as stored.
#[derive(Debug, Clone, Serialize)]
pub struct SessionLine {
    pub session_id: String,
    pub role: String,
    /// The tool the run recorded for it.
    pub tool: String,
    /// The agent whose logs were found, when found.
    pub agent: Option<Agent>,
    /// What the run stored last (the priced part).
    pub stored_usd: f64,
    /// What the logs say now (the priced part); None when the logs are gone.
    pub measured_usd: Option<f64>,
    /// The figure that counts: the larger of the two, or of the CLI's own figure. Excludes
    /// the tokens of `unknown_models`.
    pub usd: f64,
    /// Tokens by kind, unpriced models included; None when the logs are gone (unknown,
    /// never zero).
    pub tokens: Option<cost::TokenCounts>,
    /// Models whose tokens have no price (live, or as stored when the logs are gone).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_models: Vec<String>,
    /// What the session's CLI said it cost, when it said (`claude -p`'s `total_cost_usd`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reported_usd: Option<f64>,
    /// Whether any of the session's spend has a price (a priced model, a stored figure, or
    /// the CLI's own figure).
    #[serde(skip)]
    pub priced: bool,
    /// The tokens of each unpriced model, as they are to be stored.
    #[serde(skip)]
    pub unpriced: BTreeMap<String, cost::TokenCounts>,
}

/// The run's spend now.
#[derive(Debug, Clone, Serialize)]
pub struct RunSpend {
    /// The sum of every session's priced cost; 0 when nothing was measured (see
    /// [`RunSpend::usd`]). A lower bound when `unknown_models` is not empty.
    pub spent_usd: f64,
    /// Whether any session was ever measured: live from its logs now, or stored by the run.
    /// A spend that was never measured is "not measured", never $0.00.
    pub measured: bool,
    /// Whether any of the spend has a price: when only unpriced tokens were measured, the
    /// dollar figure is unknown (`usd()` is None), not $0.
    pub priced: bool,
    pub limit_usd: Option<f64>,
    /// The budget grade; at least `warn` while some spend is unpriced.
    pub level: Option<cost::Level>,
    pub sessions: Vec<SessionLine>,
    /// Models whose tokens are not priced (never counted as $0 silently).
    pub unknown_models: Vec<String>,
}

/// The window in which a run's coder sessions count.
pub fn run_window(manifest: &Manifest, finished_at: Option<&str>) -> TimeWindow {
    TimeWindow {
        from: Timestamp::parse(&manifest.created_at),
        to: finished_at.and_then(Timestamp::parse),
    }
}

/// Prices every session the run recorded, live where logs exist; where they are gone, the
/// stored figure stands and the stored unpriced tokens are priced with today's table.
pub fn measure(manifest: &Manifest, sources: &Sources) -> RunSpend {
    let window = run_window(manifest, None);
    let mut sessions = Vec::new();
    let mut unknown_models: Vec<String> = Vec::new();
    for (id, stored) in &manifest.sessions {
        let line = measure_session(sources, id, stored, window);
        for model in &line.unknown_models {
            if !unknown_models.contains(model) {
                unknown_models.push(model.clone());
            }
        }
        sessions.push(line);
    }
    // `+ 0.0` turns a negative zero into zero.
    let spent_usd = sessions.iter().map(|s| s.usd).sum::<f64>() + 0.0;
    let measured = manifest.spent_usd > 0.0
        || sessions.iter().any(|s| {
            s.measured_usd.is_some()
                || s.stored_usd > 0.0
                || s.reported_usd.is_some()
                || !s.unknown_models.is_empty()
        });
    let priced = manifest.spent_usd > 0.0 || sessions.iter().any(|s| s.priced);
    let mut level = cost::budget_level(spent_usd, manifest.budget_usd, manifest.budget_warn_ratio);
    if level.is_none() && !unknown_models.is_empty() {
        level = Some(cost::Level::Warn);
    }
    RunSpend {
        spent_usd,
        measured,
        priced,
        limit_usd: manifest.budget_usd,
        level,
        sessions,
        unknown_models,
    }
}

/// One session now: live from its logs, else as stored (its unpriced tokens priced with
/// today's table where it knows the model); the CLI's own figure, when it gave one, is the
/// least the session counts as and prices it whole.
fn measure_session(
    sources: &Sources,
    id: &str,
    stored: &SessionSpend,
    window: TimeWindow,
) -> SessionLine {
    let live = price(sources, id, &stored.role, window).ok();
    let (measured_usd, tokens, mut unpriced, mut usd, mut priced) = match &live {
        Some(p) => {
            let unpriced: BTreeMap<String, cost::TokenCounts> = p
                .models
                .iter()
                .filter(|m| m.cost_usd.is_none())
                .map(|m| (m.model.clone(), m.tokens))
                .collect();
            let priced = p.models.iter().any(|m| m.cost_usd.is_some()) || stored.usd > 0.0;
            (
                Some(p.total_usd),
                Some(p.tokens),
                unpriced,
                p.total_usd.max(stored.usd),
                priced,
            )
        }
        None => {
            let mut usd = stored.usd;
            let mut priced = stored.usd > 0.0;
            let mut unpriced = BTreeMap::new();
            for (model, tokens) in &stored.unpriced {
                let tokens: cost::TokenCounts =
                    serde_json::from_value(tokens.clone()).unwrap_or_default();
                match sources.pricing.lookup(model) {
                    // Logs gone: the request tiers are not known, so base rates.
                    Some((_, price)) => {
                        usd += price.cost(&tokens, false, false);
                        priced = true;
                    }
                    None => {
                        unpriced.insert(model.clone(), tokens);
                    }
                }
            }
            (None, None, unpriced, usd, priced)
        }
    };
    if let Some(reported) = stored.reported_usd {
        // The CLI priced the whole session, unpriced models included.
        usd = usd.max(reported);
        priced = true;
        unpriced.clear();
    }
    SessionLine {
        session_id: id.to_owned(),
        role: stored.role.clone(),
        tool: stored.agent.clone(),
        agent: live.as_ref().map(|p| p.agent),
        stored_usd: stored.usd,
        measured_usd,
        usd: usd + 0.0,
        tokens,
        unknown_models: unpriced.keys().cloned().collect(),
        reported_usd: stored.reported_usd,
        priced,
        unpriced,
    }
}

impl RunSpend {
    /// The spend in dollars (the priced part), or `None` when it was never measured or
    /// none of it has a price.
    pub fn usd(&self) -> Option<f64> {
        (self.measured && (self.priced || self.unknown_models.is_empty()))
            .then_some(self.spent_usd + 0.0)
    }
}

/// The spend the run stored, without reading any log: its priced part (the unpriced tokens
/// priced at base rates where `pricing` knows the model) and the models still unpriced,
/// sorted. What the note says, and the PR body when prices cannot be read.
pub fn stored(manifest: &Manifest, pricing: Option<&Pricing>) -> (f64, Vec<String>) {
    let mut usd = manifest.spent_usd;
    let mut unpriced = Vec::new();
    for session in manifest.sessions.values() {
        if session.reported_usd.is_some() {
            continue;
        }
        for (model, tokens) in &session.unpriced {
            match pricing.and_then(|p| p.lookup(model)) {
                Some((_, price)) => {
                    let tokens: cost::TokenCounts =
                        serde_json::from_value(tokens.clone()).unwrap_or_default();
                    usd += price.cost(&tokens, false, false);
                }
                None => unpriced.push(model.clone()),
            }
        }
    }
    unpriced.sort();
    unpriced.dedup();
    (usd + 0.0, unpriced)
}

/// A session about to be recorded: measured with the run's own before it is stored.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: String,
    /// `coder` or `reviewer`.
    pub role: &'static str,
    pub agent: String,
    /// What its CLI said it cost, when it said.
    pub reported_usd: Option<f64>,
}

/// [`measure`] over the run's sessions plus `new` ones that are not recorded yet.
pub fn measure_including(manifest: &Manifest, new: &[NewSession], sources: &Sources) -> RunSpend {
    if new.is_empty() {
        return measure(manifest, sources);
    }
    let mut manifest = manifest.clone();
    for s in new {
        manifest.register_session(&s.id, s.role, &s.agent);
        if let (Some(usd), Some(session)) = (s.reported_usd, manifest.sessions.get_mut(&s.id)) {
            session.reported_usd = Some(session.reported_usd.map_or(usd, |r| r.max(usd)));
        }
    }
    measure(&manifest, sources)
}

/// Prices one session of the run: reviewers whole, coders inside the run's window.
pub fn price(
    sources: &Sources,
    session_id: &str,
    role: &str,
    window: TimeWindow,
) -> Result<SessionCost, CostError> {
    let window = (role == "coder").then_some(window);
    cost::price_session(
        &sources.roots,
        session_id,
        &sources.pricing,
        window,
        sources.cache_dir.as_deref(),
    )
}

/// Cost records for every session whose cost grew past what the run stored, or whose
/// unpriced tokens changed, attributed to `round`; ready to be stored beside another record.
/// An unpriced model's tokens are stored with it, never a $0 for them.
pub fn growth_records(manifest: &Manifest, spend: &RunSpend, round: u32) -> Vec<Body> {
    spend
        .sessions
        .iter()
        .filter_map(|line| {
            if line.measured_usd.is_none() && line.reported_usd.is_none() {
                return None;
            }
            let unpriced: BTreeMap<String, serde_json::Value> = line
                .unpriced
                .iter()
                .map(|(model, tokens)| {
                    (
                        model.clone(),
                        serde_json::to_value(tokens).unwrap_or_default(),
                    )
                })
                .collect();
            let stored_unpriced = manifest.sessions.get(&line.session_id).map(|s| &s.unpriced);
            let unpriced_changed = stored_unpriced.map_or(!unpriced.is_empty(), |s| *s != unpriced);
            let grew = line.usd > line.stored_usd + 1e-9;
            (grew || unpriced_changed).then(|| {
                // A reviewer session grows during reviews: attribute it to the last review.
                let round = match line.role.as_str() {
                    "reviewer" => manifest.last_review().map_or(round, |e| e.n),
                    _ => round,
                };
                Body::Cost(CostEntry {
                    round,
                    role: line.role.clone(),
                    agent: line
                        .agent
                        .map(|a| match a {
                            Agent::Claude => "claude".to_owned(),
                            Agent::Codex => "codex".to_owned(),
                            Agent::Gemini => "gemini".to_owned(),
                            Agent::Qwen => "qwen".to_owned(),
                            Agent::Copilot => "copilot".to_owned(),
                        })
                        .unwrap_or_else(|| line.tool.clone()),
                    session_id: line.session_id.clone(),
                    usd: line.usd.max(line.stored_usd),
                    tokens: line
                        .tokens
                        .map(|t| serde_json::to_value(t).unwrap_or_default())
                        .unwrap_or_default(),
                    unknown_models: line.unknown_models.clone(),
                    unpriced,
                })
            })
        })
        .filter(|_| !manifest.run_id.is_empty())
        .collect()
}

/// The newest Claude Code session working in `cwd` since the run started, if any: the coder
/// session when `coder-done` was not told one. Never a reviewer's: not one the run recorded
/// as a reviewer session, nor one whose first prompt holds `reviewer_marker` (how git pair's
/// reviewer prompts begin), so a failed or unrecorded reviewer attempt is passed over too.
pub fn discover_coder_session(
    manifest: &Manifest,
    sources: &Sources,
    reviewer_marker: &str,
) -> Option<String> {
    let reviewers: Vec<&str> = manifest
        .sessions
        .iter()
        .filter(|(_, s)| s.role == "reviewer")
        .map(|(id, _)| id.as_str())
        .collect();
    cost::newest_claude_session_for_cwd(
        &sources.roots,
        Path::new(&manifest.cwd),
        Timestamp::parse(&manifest.created_at),
        cost::NotCoder {
            ids: &reviewers,
            prompt_marker: reviewer_marker,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SessionSpend;

    /// Sources whose log roots hold nothing: every session is "logs gone".
    fn no_logs(pricing: Pricing) -> (tempfile::TempDir, Sources) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap().to_owned();
        let roots = LogRoots::from_env(|key| match key {
            "HOME" | "CLAUDE_CONFIG_DIR" | "CODEX_HOME" => Some(root.clone()),
            _ => None,
        });
        (
            dir,
            Sources {
                roots,
                pricing,
                cache_dir: None,
            },
        )
    }

    fn tokens(input: u64, output: u64) -> serde_json::Value {
        serde_json::to_value(cost::TokenCounts {
            input,
            output,
            ..Default::default()
        })
        .unwrap()
    }

    fn manifest(sessions: &[(&str, SessionSpend)], budget: Option<f64>) -> Manifest {
        let mut m = Manifest::empty();
        m.run_id = "r".into();
        m.budget_usd = budget;
        for (id, s) in sessions {
            m.spent_usd += s.usd;
            m.sessions.insert((*id).to_owned(), s.clone());
        }
        m
    }

    fn session(usd: f64, unpriced: &[(&str, u64, u64)], reported: Option<f64>) -> SessionSpend {
        SessionSpend {
            role: "coder".into(),
            agent: "claude".into(),
            usd,
            unpriced: unpriced
                .iter()
                .map(|(m, i, o)| ((*m).to_owned(), tokens(*i, *o)))
                .collect(),
            reported_usd: reported,
        }
    }

    fn later_prices() -> Pricing {
        Pricing::builtin().with_overrides(
            Pricing::from_json(
                r#"{"models": {"claude-opus-9": {"input": 10, "output": 50}}}"#,
                "t",
            )
            .unwrap(),
        )
    }

    #[test]
    fn stored_unpriced_tokens_stay_unknown_until_a_table_prices_them() {
        let m = manifest(
            &[("s1", session(0.006, &[("claude-opus-9", 1000, 4000)], None))],
            Some(0.01),
        );
        let (_dir, sources) = no_logs(Pricing::builtin());
        let spend = measure(&m, &sources);
        assert_eq!(spend.usd(), Some(0.006));
        assert_eq!(spend.unknown_models, ["claude-opus-9"]);
        assert_eq!(
            spend.level,
            Some(cost::Level::Warn),
            "under the limit, unpriced"
        );
        assert_eq!(spend.sessions[0].tokens, None, "logs gone: tokens unknown");
        assert_eq!(stored(&m, None), (0.006, vec!["claude-opus-9".to_owned()]));

        let (_dir, sources) = no_logs(later_prices());
        let spend = measure(&m, &sources);
        assert!(
            (spend.spent_usd - 0.216).abs() < 1e-12,
            "{}",
            spend.spent_usd
        );
        assert!(spend.unknown_models.is_empty());
        assert_eq!(spend.level, Some(cost::Level::Alert));
        let (usd, unpriced) = stored(&m, Some(&later_prices()));
        assert!((usd - 0.216).abs() < 1e-12 && unpriced.is_empty());
    }

    #[test]
    fn nothing_priced_is_no_dollar_figure_and_never_negative_zero() {
        let m = manifest(
            &[("s1", session(0.0, &[("claude-opus-9", 5, 5)], None))],
            None,
        );
        let (_dir, sources) = no_logs(Pricing::builtin());
        let spend = measure(&m, &sources);
        assert!(spend.measured);
        assert_eq!(spend.usd(), None, "only unpriced tokens: unknown, not $0");
        assert_eq!(
            spend.level,
            Some(cost::Level::Warn),
            "warns even without a limit"
        );
        let m = manifest(&[("s1", session(-0.0, &[], None))], None);
        let spend = measure(&m, &sources);
        assert_eq!(spend.usd(), None, "never measured");
        assert!(spend.spent_usd.is_sign_positive());
        assert!(stored(&m, None).0.is_sign_positive());
    }

    #[test]
    fn a_cli_reported_cost_prices_the_session_whole() {
        let m = manifest(
            &[(
                "s1",
                session(0.0, &[("claude-opus-9", 1000, 4000)], Some(0.3)),
            )],
            Some(1.0),
        );
        let (_dir, sources) = no_logs(Pricing::builtin());
        let spend = measure(&m, &sources);
        assert_eq!(spend.usd(), Some(0.3));
        assert!(spend.unknown_models.is_empty());
        assert_eq!(spend.level, None);
        // Measured in: the figure is stored as a cost record of the session.
        let records = growth_records(&m, &spend, 1);
        let [Body::Cost(c)] = records.as_slice() else {
            panic!("{records:?}")
        };
        assert_eq!((c.usd, c.unpriced.is_empty()), (0.3, true));
        let new = [NewSession {
            id: "s2".into(),
            role: "reviewer",
            agent: "claude".into(),
            reported_usd: Some(0.25),
        }];
        let spend = measure_including(&m, &new, &sources);
        assert!((spend.usd().unwrap() - 0.55).abs() < 1e-12);
    }

    #[test]
    fn unpriced_tokens_are_recorded_even_when_no_dollar_grew() {
        let (_dir, sources) = no_logs(Pricing::builtin());
        let mut m = manifest(&[], None);
        m.register_session("s1", "coder", "claude");
        let mut spend = measure(&m, &sources);
        // As a live measurement of an unpriced model reads.
        let line = &mut spend.sessions[0];
        line.measured_usd = Some(0.0);
        line.unpriced.insert(
            "claude-opus-9".into(),
            cost::TokenCounts {
                input: 7,
                ..Default::default()
            },
        );
        line.unknown_models = vec!["claude-opus-9".into()];
        let records = growth_records(&m, &spend, 1);
        let [Body::Cost(c)] = records.as_slice() else {
            panic!("{records:?}")
        };
        assert_eq!(c.usd, 0.0);
        assert_eq!(c.unpriced["claude-opus-9"]["input"], 7);
        // Folded, the manifest keeps the tokens; the same measurement again adds nothing.
        let mut folded = m.clone();
        folded.sessions.get_mut("s1").unwrap().unpriced = c.unpriced.clone();
        assert!(growth_records(&folded, &spend, 1).is_empty());
    }
}
