//! Agent spend: finds a Claude Code or Codex session's logs, reads them (deduplicated, inside
//! an optional time window, through an incremental cache), prices them with the shipped or
//! overridden table, and grades spend against a budget (SPEC §7).
//! Pure over paths and bytes: it never prints, never touches git, never calls an agent.

mod cache;
mod claude;
mod codec;
mod codex;
mod copilot;
mod discover;
mod error;
mod gemini;
mod memo;
mod pricing;
mod qwen;
mod scan;
pub mod spend;
mod tokens;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::util::time::{TimeWindow, Timestamp};
pub use discover::{
    Agent, LogRoots, NotCoder, RecentSessionFile, newest_claude_session_for_cwd,
    recent_session_files,
};
pub use error::CostError;
pub use pricing::{LongContext, ModelPrice, Pricing};
pub use tokens::TokenCounts;

use cache::{CacheUse, FileScan, LogScan};
use claude::ClaudeScan;
use codex::CodexScan;
use copilot::CopilotScan;
use gemini::GeminiScan;
use qwen::QwenScan;
use scan::Markers;

/// One model's share of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelCost {
    /// The model id as logged (`<unknown>` when a Codex usage came before any model).
    pub model: String,
    /// The price-table entry used, or `None` for an unknown model.
    pub priced_as: Option<String>,
    /// USD, or `None` when the model is unknown (its tokens are still reported).
    pub cost_usd: Option<f64>,
    /// Priced requests (Claude: deduplicated messages; Codex: token-count deltas).
    pub requests: u64,
    /// Requests billed at the fast / priority tier.
    pub fast_requests: u64,
    /// Requests billed at long-context rates.
    pub long_context_requests: u64,
    /// This model's tokens by kind.
    pub tokens: TokenCounts,
}

/// A session priced whole (or inside a window): what `cost --session ID --json` prints. In
/// JSON, `total_usd` is `null` when the session's tokens are all of unknown models (an
/// unpriced session is never a number).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "SessionCostJson")]
pub struct SessionCost {
    /// The id priced (a Claude Code session id or a Codex thread id).
    pub session_id: String,
    /// Which agent's logs it was found in.
    pub agent: Agent,
    /// USD of every priced request, rounded to the nano-dollar. Excludes unknown models.
    #[serde(deserialize_with = "null_is_zero")]
    pub total_usd: f64,
    /// Tokens of every counted request, unknown models included.
    pub tokens: TokenCounts,
    /// One entry per model, most expensive first.
    pub models: Vec<ModelCost>,
    /// Models with no price-table entry: their tokens are counted but not priced.
    pub unknown_models: Vec<String>,
    /// Requests counted (after deduplication, inside the window).
    pub requests: u64,
    /// Lines that could carry usage but were not readable (malformed, truncated, non-UTF-8).
    pub skipped_lines: u64,
    /// The log files read, main file first.
    pub files: Vec<PathBuf>,
    /// The window the session was counted in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<TimeWindow>,
    /// The `as_of` date of the price table used.
    pub pricing_as_of: Option<String>,
    /// How many files came from the cache unchanged / extended / parsed whole.
    #[serde(skip)]
    pub cache_stats: CacheStats,
}

/// [`SessionCost`] as JSON: the same fields, `total_usd` null when nothing has a price.
#[derive(Serialize)]
struct SessionCostJson {
    session_id: String,
    agent: Agent,
    total_usd: Option<f64>,
    tokens: TokenCounts,
    models: Vec<ModelCost>,
    unknown_models: Vec<String>,
    requests: u64,
    skipped_lines: u64,
    files: Vec<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<TimeWindow>,
    pricing_as_of: Option<String>,
}

impl From<SessionCost> for SessionCostJson {
    fn from(c: SessionCost) -> Self {
        let nothing_priced =
            !c.unknown_models.is_empty() && c.models.iter().all(|m| m.cost_usd.is_none());
        SessionCostJson {
            total_usd: (!nothing_priced).then_some(c.total_usd + 0.0),
            session_id: c.session_id,
            agent: c.agent,
            tokens: c.tokens,
            models: c.models,
            unknown_models: c.unknown_models,
            requests: c.requests,
            skipped_lines: c.skipped_lines,
            files: c.files,
            window: c.window,
            pricing_as_of: c.pricing_as_of,
        }
    }
}

/// Reads a dollar figure written as `null` (nothing priced) as 0.
fn null_is_zero<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(0.0))
}

/// Cache effectiveness of one pricing call (for benchmarks and diagnostics).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Files unchanged since cached: not read at all.
    pub hits: u32,
    /// Files that grew: only the appended bytes were parsed.
    pub resumed: u32,
    /// Files parsed whole (no cache dir, no usable cache entry, or rewritten).
    pub parsed: u32,
}

/// Prices one agent session by id: a Claude Code session (main log plus subagents), a Codex
/// session (its rollouts), a Gemini CLI or a Qwen Code session. With `window`, only requests
/// stamped inside it count (coder sessions); with `cache_dir`, unchanged logs are not parsed
/// again. An id present in several agents' logs is priced as the first in that order.
pub fn price_session(
    roots: &LogRoots,
    session_id: &str,
    pricing: &Pricing,
    window: Option<TimeWindow>,
    cache_dir: Option<&Path>,
) -> Result<SessionCost, CostError> {
    if !discover::is_valid_session_id(session_id) {
        return Err(CostError::InvalidSessionId {
            session_id: session_id.to_owned(),
        });
    }
    // Each agent's own log layout, in the order tried: the first that holds the id prices it.
    type Locate = fn(&LogRoots, &str) -> Vec<PathBuf>;
    let locators: [(Agent, Locate); 5] = [
        (Agent::Claude, discover::claude_session_files),
        (Agent::Codex, discover::codex_session_files),
        (Agent::Gemini, discover::gemini_session_files),
        (Agent::Qwen, discover::qwen_session_files),
        (Agent::Copilot, discover::copilot_session_files),
    ];
    for (agent, locate) in locators {
        let files = locate(roots, session_id);
        if !files.is_empty() {
            return price_files(agent, session_id, &files, pricing, window, cache_dir);
        }
    }
    Err(CostError::SessionNotFound {
        session_id: session_id.to_owned(),
        searched: roots.searched(),
    })
}

/// Prices a session from known files (Claude: main log first; Codex: oldest rollout first).
pub fn price_files(
    agent: Agent,
    session_id: &str,
    files: &[PathBuf],
    pricing: &Pricing,
    window: Option<TimeWindow>,
    cache_dir: Option<&Path>,
) -> Result<SessionCost, CostError> {
    let memo =
        cache_dir.and_then(|dir| memo::Memo::new(dir, agent, session_id, files, pricing, window));
    if let Some(memo) = &memo
        && let Some(mut cost) = memo.lookup::<SessionCost>()
    {
        cost.cache_stats = CacheStats {
            hits: u32::try_from(memo.file_count()).unwrap_or(u32::MAX),
            resumed: 0,
            parsed: 0,
        };
        return Ok(cost);
    }
    let (scans, cache_stats) = match agent {
        Agent::Claude => {
            let (scans, stats) = load_all::<ClaudeScan>(files, &claude::markers(), cache_dir)?;
            (Scans::Claude(scans), stats)
        }
        Agent::Codex => {
            let (scans, stats) = load_all::<CodexScan>(files, &codex::markers(), cache_dir)?;
            (Scans::Codex(scans), stats)
        }
        Agent::Gemini => {
            let (scans, stats) = load_all::<GeminiScan>(files, &gemini::markers(), cache_dir)?;
            (Scans::Gemini(scans), stats)
        }
        Agent::Qwen => {
            let (scans, stats) = load_all::<QwenScan>(files, &qwen::markers(), cache_dir)?;
            (Scans::Qwen(scans), stats)
        }
        Agent::Copilot => {
            let (scans, stats) = load_all::<CopilotScan>(files, &copilot::markers(), cache_dir)?;
            (Scans::Copilot(scans), stats)
        }
    };
    let cost = price_scans(&scans, session_id, files, pricing, window, cache_stats);
    if let Some(memo) = &memo {
        memo.store(&cost);
    }
    Ok(cost)
}

/// Prices the bytes of one log file as `agent` writes it, exactly as [`price_files`] prices a
/// session made of that one file, without touching the file system (no cache, no
/// `files`): the entry the fuzz targets and property tests drive. Never panics, whatever
/// the bytes; unreadable lines are counted in `skipped_lines`.
pub fn price_log_bytes(
    agent: Agent,
    bytes: &[u8],
    pricing: &Pricing,
    window: Option<TimeWindow>,
) -> SessionCost {
    let scans = match agent {
        Agent::Claude => Scans::Claude(vec![cache::scan_bytes(bytes, &claude::markers())]),
        Agent::Codex => Scans::Codex(vec![cache::scan_bytes(bytes, &codex::markers())]),
        Agent::Gemini => Scans::Gemini(vec![cache::scan_bytes(bytes, &gemini::markers())]),
        Agent::Qwen => Scans::Qwen(vec![cache::scan_bytes(bytes, &qwen::markers())]),
        Agent::Copilot => Scans::Copilot(vec![cache::scan_bytes(bytes, &copilot::markers())]),
    };
    price_scans(&scans, "", &[], pricing, window, CacheStats::default())
}

/// One session's per-file scans, of either agent.
enum Scans {
    Claude(Vec<FileScan<ClaudeScan>>),
    Codex(Vec<FileScan<CodexScan>>),
    Gemini(Vec<FileScan<GeminiScan>>),
    Qwen(Vec<FileScan<QwenScan>>),
    Copilot(Vec<FileScan<CopilotScan>>),
}

/// Merges (Claude) or walks (Codex) a session's scans, in file order, and prices the requests.
fn price_scans(
    scans: &Scans,
    session_id: &str,
    files: &[PathBuf],
    pricing: &Pricing,
    window: Option<TimeWindow>,
    cache_stats: CacheStats,
) -> SessionCost {
    let effective_window = window.unwrap_or_default();
    let mut priced = Priced::new(pricing);
    let (agent, skipped_lines) = match scans {
        Scans::Claude(scans) => {
            let parts: Vec<&ClaudeScan> =
                scans.iter().flat_map(|s| [&s.complete, &s.tail]).collect();
            for r in claude::merge(&parts, &effective_window) {
                priced.add(r.model, r.fast, &r.tokens);
            }
            (Agent::Claude, parts.iter().map(|s| s.skipped_lines).sum())
        }
        Scans::Codex(scans) => {
            let parts: Vec<&CodexScan> =
                scans.iter().flat_map(|s| [&s.complete, &s.tail]).collect();
            for r in codex::walk(&parts, &effective_window) {
                priced.add(r.model.unwrap_or("<unknown>"), r.fast, &r.tokens);
            }
            (Agent::Codex, parts.iter().map(|s| s.skipped_lines).sum())
        }
        Scans::Gemini(scans) => {
            let parts: Vec<&ClaudeScan> = scans
                .iter()
                .flat_map(|s| [&s.complete.0, &s.tail.0])
                .collect();
            for r in claude::merge(&parts, &effective_window) {
                priced.add(r.model, r.fast, &r.tokens);
            }
            (Agent::Gemini, parts.iter().map(|s| s.skipped_lines).sum())
        }
        Scans::Qwen(scans) => {
            let parts: Vec<&ClaudeScan> = scans
                .iter()
                .flat_map(|s| [&s.complete.0, &s.tail.0])
                .collect();
            for r in claude::merge(&parts, &effective_window) {
                priced.add(r.model, r.fast, &r.tokens);
            }
            (Agent::Qwen, parts.iter().map(|s| s.skipped_lines).sum())
        }
        Scans::Copilot(scans) => {
            let parts: Vec<&ClaudeScan> = scans
                .iter()
                .flat_map(|s| [&s.complete.0, &s.tail.0])
                .collect();
            for r in claude::merge(&parts, &effective_window) {
                priced.add(r.model, r.fast, &r.tokens);
            }
            (Agent::Copilot, parts.iter().map(|s| s.skipped_lines).sum())
        }
    };
    priced.finish(SessionCost {
        session_id: session_id.to_owned(),
        agent,
        total_usd: 0.0,
        tokens: TokenCounts::default(),
        models: Vec::new(),
        unknown_models: Vec::new(),
        requests: 0,
        skipped_lines,
        files: files.to_vec(),
        window,
        pricing_as_of: pricing.as_of().map(str::to_owned),
        cache_stats,
    })
}

/// One file's scan, `None` when the file vanished after it was listed.
type Loaded<S> = Result<Option<(FileScan<S>, CacheUse)>, CostError>;

/// Loads every file's scan; large sessions (main log plus subagents) use both cores.
fn load_all<S: LogScan + Send>(
    files: &[PathBuf],
    markers: &Markers,
    cache_dir: Option<&Path>,
) -> Result<(Vec<FileScan<S>>, CacheStats), CostError> {
    let load_one = |path: &PathBuf| match cache::load::<S>(path, markers, cache_dir) {
        Ok(loaded) => Ok(Some(loaded)),
        // Listed a moment ago, gone now (an agent pruning its logs): nothing to price.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CostError::ReadLog {
            path: path.clone(),
            source,
        }),
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len());
    let results: Vec<Loaded<S>> = if workers <= 1 {
        files.iter().map(load_one).collect()
    } else {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut slots: Vec<Option<Loaded<S>>> = (0..files.len()).map(|_| None).collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(path) = files.get(i) else { break };
                            done.push((i, load_one(path)));
                        }
                        done
                    })
                })
                .collect();
            for handle in handles {
                for (i, result) in handle.join().expect("a log scan never panics") {
                    slots[i] = Some(result);
                }
            }
        });
        slots
            .into_iter()
            .map(|s| s.expect("every index is claimed by one worker"))
            .collect()
    };
    let mut scans = Vec::with_capacity(files.len());
    let mut stats = CacheStats::default();
    for result in results {
        if let Some((scan, how)) = result? {
            match how {
                CacheUse::Hit => stats.hits += 1,
                CacheUse::Resumed => stats.resumed += 1,
                CacheUse::Parsed => stats.parsed += 1,
            }
            scans.push(scan);
        }
    }
    Ok((scans, stats))
}

#[derive(Default)]
struct Bucket {
    tokens: TokenCounts,
    requests: u64,
}

/// One model's price entry (looked up once per model, not per request) and one bucket per
/// (fast, long context), in that order: (no, no), (no, yes), (yes, no), (yes, yes).
type ModelBuckets<'p> = (Option<(&'p str, &'p ModelPrice)>, [Bucket; 4]);

/// Requests grouped by (model, fast, long context), so each group is priced once from exact
/// integer token sums.
struct Priced<'p> {
    pricing: &'p Pricing,
    models: BTreeMap<String, ModelBuckets<'p>>,
}

impl<'p> Priced<'p> {
    fn new(pricing: &'p Pricing) -> Self {
        Priced {
            pricing,
            models: BTreeMap::new(),
        }
    }

    fn add(&mut self, model: &str, fast: bool, tokens: &TokenCounts) {
        if !self.models.contains_key(model) {
            let found = self.pricing.lookup(model);
            self.models
                .insert(model.to_owned(), (found, Default::default()));
        }
        let (found, buckets) = self.models.get_mut(model).expect("inserted above");
        let long = found.is_some_and(|(_, p)| p.is_long_context(tokens.prompt()));
        let bucket = &mut buckets[usize::from(fast) * 2 + usize::from(long)];
        bucket.tokens.add(tokens);
        bucket.requests += 1;
    }

    fn finish(self, mut out: SessionCost) -> SessionCost {
        let mut rows: Vec<ModelCost> = Vec::with_capacity(self.models.len());
        for (model, (found, buckets)) in self.models {
            let mut row = ModelCost {
                priced_as: found.map(|(id, _)| id.to_owned()),
                cost_usd: found.map(|_| 0.0),
                model,
                requests: 0,
                fast_requests: 0,
                long_context_requests: 0,
                tokens: TokenCounts::default(),
            };
            for (i, bucket) in buckets.iter().enumerate() {
                if bucket.requests == 0 {
                    continue;
                }
                let (fast, long) = (i >= 2, i % 2 == 1);
                if let (Some((_, price)), Some(cost)) = (found, row.cost_usd.as_mut()) {
                    *cost += price.cost(&bucket.tokens, fast, long);
                }
                row.requests += bucket.requests;
                row.fast_requests += if fast { bucket.requests } else { 0 };
                row.long_context_requests += if long { bucket.requests } else { 0 };
                row.tokens.add(&bucket.tokens);
            }
            rows.push(row);
        }
        for row in &mut rows {
            row.cost_usd = row.cost_usd.map(round_nano);
            out.tokens.add(&row.tokens);
            out.requests += row.requests;
            if row.priced_as.is_none() {
                out.unknown_models.push(row.model.clone());
            }
        }
        out.total_usd = round_nano(rows.iter().filter_map(|r| r.cost_usd).sum());
        rows.sort_by(|a, b| {
            b.cost_usd
                .unwrap_or(0.0)
                .total_cmp(&a.cost_usd.unwrap_or(0.0))
                .then(a.model.cmp(&b.model))
        });
        out.models = rows;
        out
    }
}

/// Rounds to the nano-dollar: hides float noise (0.128299000000000001) without losing cents.
fn round_nano(usd: f64) -> f64 {
    (usd * 1e9).round() / 1e9
}

/// A budget grade, as `budget-check` prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Spend reached `warn_ratio` of the limit.
    Warn,
    /// Spend reached the limit (≥ 100%).
    Alert,
}

/// Grades `spent` against `limit`: `Alert` at or above it, `Warn` at or above
/// `warn_ratio × limit`, `None` below, without a limit, or for non-finite inputs.
pub fn budget_level(spent: f64, limit: Option<f64>, warn_ratio: f64) -> Option<Level> {
    let limit = limit.filter(|l| l.is_finite())?;
    if !spent.is_finite() {
        return None;
    }
    if spent >= limit {
        Some(Level::Alert)
    } else if warn_ratio.is_finite() && spent >= warn_ratio * limit {
        Some(Level::Warn)
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
