//! A run's spend: which agent sessions it recorded, priced live through [`crate::cost`] and
//! compared with what the run stored, graded against the budget.
//!
//! Reviewer sessions count whole; coder sessions only inside the run's time window (from its
//! start to its finish, or now). The stored figure stands when the logs are gone, so a
//! report survives agents deleting old logs. Pure over the manifest and log files.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cost::{self, Agent, CostError, LogRoots, Pricing, SessionCost, TimeWindow, Timestamp};
use crate::model::{Body, CostEntry, Manifest};

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
    /// What the run stored last.
    pub stored_usd: f64,
    /// What the logs say now; None when the logs are gone.
    pub measured_usd: Option<f64>,
    /// The figure that counts: the larger of the two.
    pub usd: f64,
    pub tokens: Option<cost::TokenCounts>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unknown_models: Vec<String>,
}

/// The run's spend now.
#[derive(Debug, Clone, Serialize)]
pub struct RunSpend {
    /// The sum of every session's cost; 0 when nothing was measured (see [`RunSpend::usd`]).
    pub spent_usd: f64,
    /// Whether any session was ever measured: live from its logs now, or stored by the run.
    /// A spend that was never measured is "not measured", never $0.00.
    pub measured: bool,
    pub limit_usd: Option<f64>,
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

/// Prices every session the run recorded, live where logs exist.
pub fn measure(manifest: &Manifest, sources: &Sources) -> RunSpend {
    let window = run_window(manifest, None);
    let mut sessions = Vec::new();
    let mut unknown_models = Vec::new();
    for (id, stored) in &manifest.sessions {
        let priced = price(sources, id, &stored.role, window).ok();
        let measured_usd = priced.as_ref().map(|p| p.total_usd);
        let usd = measured_usd.map_or(stored.usd, |m| m.max(stored.usd));
        if let Some(p) = &priced {
            for model in &p.unknown_models {
                if !unknown_models.contains(model) {
                    unknown_models.push(model.clone());
                }
            }
        }
        sessions.push(SessionLine {
            session_id: id.clone(),
            role: stored.role.clone(),
            tool: stored.agent.clone(),
            agent: priced.as_ref().map(|p| p.agent),
            stored_usd: stored.usd,
            measured_usd,
            usd,
            tokens: priced.as_ref().map(|p| p.tokens),
            unknown_models: priced.map(|p| p.unknown_models).unwrap_or_default(),
        });
    }
    // `+ 0.0` turns a negative zero into zero.
    let spent_usd = sessions.iter().map(|s| s.usd).sum::<f64>() + 0.0;
    let measured = manifest.spent_usd > 0.0
        || sessions
            .iter()
            .any(|s| s.measured_usd.is_some() || s.stored_usd > 0.0);
    RunSpend {
        spent_usd,
        measured,
        limit_usd: manifest.budget_usd,
        level: cost::budget_level(spent_usd, manifest.budget_usd, manifest.budget_warn_ratio),
        sessions,
        unknown_models,
    }
}

impl RunSpend {
    /// The spend in dollars, or `None` when it was never measured.
    pub fn usd(&self) -> Option<f64> {
        self.measured.then_some(self.spent_usd)
    }
}

/// A session about to be recorded: measured with the run's own before it is stored.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: String,
    /// `coder` or `reviewer`.
    pub role: &'static str,
    pub agent: String,
}

/// [`measure`] over the run's sessions plus `new` ones that are not recorded yet.
pub fn measure_including(manifest: &Manifest, new: &[NewSession], sources: &Sources) -> RunSpend {
    if new.is_empty() {
        return measure(manifest, sources);
    }
    let mut manifest = manifest.clone();
    for s in new {
        manifest.register_session(&s.id, s.role, &s.agent);
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

/// Cost records for every session whose measured cost grew past what the run stored,
/// attributed to `round`; ready to be stored beside another record.
pub fn growth_records(manifest: &Manifest, spend: &RunSpend, round: u32) -> Vec<Body> {
    spend
        .sessions
        .iter()
        .filter_map(|line| {
            let measured = line.measured_usd?;
            (measured > line.stored_usd + 1e-9).then(|| {
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
                        })
                        .unwrap_or_else(|| line.tool.clone()),
                    session_id: line.session_id.clone(),
                    usd: measured,
                    tokens: serde_json::to_value(line.tokens).unwrap_or_default(),
                    unknown_models: line.unknown_models.clone(),
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
