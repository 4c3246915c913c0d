//! Reviewer realizations as data (SPEC §6.1): the surfaces document (shipped in
//! `data/surfaces.json`, replaceable by `pair.surfaceFile`), its validation, argv rendering,
//! and reading a finished reviewer's output through the document's selectors.
//! No vendor flag or vendor field name may appear in this file: they all come from the data.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The surface document cannot be used, or names no such reviewer.
#[derive(Debug, thiserror::Error)]
pub enum SurfaceError {
    /// The surface file named by `pair.surfaceFile` could not be read.
    #[error("cannot read reviewer surface file {path}: {source}")]
    ReadSurfaceFile {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The surface document is not the JSON shape git pair reads.
    #[error("reviewer surfaces from {origin} do not parse: {source}")]
    ParseSurfaces {
        origin: String,
        source: serde_json::Error,
    },
    /// The surface document parses but contradicts itself (unknown placeholder, missing
    /// capability, a fallback naming nothing, …).
    #[error("reviewer surfaces from {origin}: realization `{realization}`: {reason}")]
    InvalidSurfaces {
        origin: String,
        realization: String,
        reason: String,
    },
    /// The configured reviewer names no realization in the surface document.
    #[error("unknown reviewer `{name}` (known: {known})")]
    UnknownRealization { name: String, known: String },
}

/// The surfaces document shipped with git pair.
pub const SHIPPED_SURFACES: &str = include_str!("../../data/surfaces.json");

/// Placeholders that stand for one string and may sit inside a larger argv element.
const SCALAR_PLACEHOLDERS: &[&str] = &[
    "output_file",
    "schema_file",
    "schema_json",
    "prompt",
    "prompt_file",
    "session_id",
];
/// The placeholder an isolation group with `each` is repeated for: one table's name.
const EACH_NAME: &str = "{name}";

/// An anchored regex (`^…$`) that compiles.
fn anchored(shape: &str) -> Result<Regex, String> {
    if !(shape.starts_with('^') && shape.ends_with('$')) {
        return Err(format!("{shape:?} must be anchored (^…$)"));
    }
    Regex::new(shape).map_err(|e| format!("{shape:?}: {e}"))
}

/// Placeholders that must be a whole argv element and expand to zero or more elements.
const LIST_PLACEHOLDERS: &[&str] = &["structured_output", "command_args", "isolation"];

/// The reviewer choices a realization may take (`pair.reviewerModel`, `pair.reviewerEffort`):
/// each a whole argv element that expands to its declared argument group when the user set
/// it, and to nothing otherwise; inside the group the same name is the value.
pub const CHOICES: [&str; 2] = ["model", "effort"];

/// The whole surfaces document: every way git pair knows to run a reviewer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Surfaces {
    /// Schema version of the document (1).
    pub v: u32,
    /// Free text for people editing the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The stricter instruction sent with the single re-ask after an answer had no verdict,
    /// one element per line.
    pub reask_instruction: Vec<String>,
    /// The realizations tried, in order, when the configured external reviewer does not bind
    /// and its own `fallback` list found none (`pair.fallbackOrder` replaces both).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback_order: Vec<String>,
    /// Realizations by name (`codex`, `claude`, `builtin`, `command`, or any added one).
    pub realizations: BTreeMap<String, Realization>,
    /// Where the document came from (`shipped` or a path), for error messages.
    #[serde(skip)]
    pub origin: String,
}

/// How a realization runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RealizationKind {
    /// An installed CLI found on `PATH` and proven capable by its probe output.
    External,
    /// The user's configured reviewer command (argv given as a JSON array).
    Command,
    /// The in-process deterministic reviewer.
    Builtin,
    /// An Agent Client Protocol agent (`pair.acpCommand`), which git pair drives as an ACP
    /// client over the agent's stdin and stdout ([`crate::review::acp`]).
    Acp,
}

/// How the prompt reaches the reviewer.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PromptVia {
    /// Written to the process's stdin, which is then closed.
    #[default]
    Stdin,
    /// Substituted for `{prompt}` in argv.
    Argument,
    /// Written to a temporary file whose path replaces `{prompt_file}`.
    File,
}

/// Where a reviewer process runs.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Workdir {
    /// A temporary directory holding only the reviewed snapshot (no ignored file, no `.git`),
    /// removed after the round.
    #[default]
    Snapshot,
    /// A directory holding only the reviewed snapshot at a path that stays the same for the
    /// whole run (`${XDG_CACHE_HOME:-~/.cache}/git-pair/reviewers/<repo>/<run>`, outside the repository), laid down afresh each round and removed
    /// when the round ends: for a vendor whose sessions belong to the directory they ran in,
    /// so that a later round can resume them there.
    RunSnapshot,
    /// The live work tree: ignored files there are readable by the reviewer.
    WorkTree,
}

/// One way of running a reviewer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Realization {
    /// External CLI, configured command, or built-in.
    pub kind: RealizationKind,
    /// One line for `git pair probe`.
    #[serde(default)]
    pub description: String,
    /// Executable looked up on `PATH` (external realizations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// How to prove the installed binary can do what `argv` asks of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeSpec>,
    /// Arguments after the program for a fresh review (template).
    #[serde(default)]
    pub argv: Vec<String>,
    /// How the prompt is passed.
    #[serde(default)]
    pub prompt: PromptVia,
    /// The only variables of git pair's environment the reviewer inherits: exact names, or
    /// prefixes ending in `*` (`ANTHROPIC_*`). Empty: none (git pair still sets `PATH` when it
    /// was given one); `pair.reviewerEnv` adds names.
    #[serde(default)]
    pub env: Vec<String>,
    /// Variables set to fixed values in the reviewer's environment, over whatever it
    /// inherits: the switches a CLI offers only as environment (OpenCode's
    /// `OPENCODE_DISABLE_PROJECT_CONFIG`). Names are plain variable names; values are text,
    /// never a placeholder, so nothing from the reviewed change can reach them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env_set: BTreeMap<String, String>,
    /// Paths of the reviewed snapshot left out of the directory the reviewer runs in (they
    /// stay in the diff as text): the project configuration a CLI would load from its working
    /// directory and has no switch to ignore. Relative, `/`-separated, no `.` or `..` part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub snapshot_omit: Vec<String>,
    /// Where the reviewer runs: the reviewed snapshot alone (the default; at a path stable for
    /// the run with `run-snapshot`), or the work tree.
    #[serde(default)]
    pub workdir: Workdir,
    /// Extra arguments asking for answers that follow the review JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<StructuredOutputSpec>,
    /// Arguments that keep the reviewer apart from the user's own setup (plugins, hooks, MCP
    /// servers), each group used only when its capability is proven; they replace
    /// `{isolation}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isolation: Vec<GatedArgs>,
    /// Arguments continuing an earlier reviewer session in a later round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<ResumeSpec>,
    /// Where the answer is read, tried in order; the first non-empty one wins.
    #[serde(default)]
    pub answer: Vec<Selector>,
    /// Where the vendor's session id is read, tried in order.
    #[serde(default)]
    pub session_id: Vec<Selector>,
    /// Where the vendor's own figure for the session's cost in USD is read, tried in order
    /// (`claude -p`: the result's `total_cost_usd`); none when the CLI reports none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cost_usd: Vec<Selector>,
    /// The shape every session id of this realization has: an anchored regular expression
    /// (`^…$`). An id that does not fit (from the output, a session file or a record) is
    /// refused: never kept, never put in an argv.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id_shape: Option<String>,
    /// Where the vendor keeps its own session files: searched for the attempt marker when the
    /// output names no session (the second tier).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_files: Option<SessionFilesSpec>,
    /// How the vendor reports its own failure.
    #[serde(default)]
    pub failure: FailureSpec,
    /// At most this many reviews of this realization run at once.
    pub max_concurrency: usize,
    /// Realizations tried, in order, when this one does not bind.
    #[serde(default)]
    pub fallback: Vec<String>,
    /// The arguments that choose the reviewer's model (`{model}`): none means it takes no
    /// model, and `pair.reviewerModel` is refused for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ChoiceArgs>,
    /// The arguments that choose its reasoning effort (`{effort}`), likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<ChoiceArgs>,
    /// How the user installs the CLI, for the hint when it is missing
    /// (`npm install -g @openai/codex`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
}

/// The argument group a reviewer choice (model, effort) expands to, and the values it takes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ChoiceArgs {
    /// Probe capability that must be proven for the choice to be passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    /// An anchored regex every value fits before it reaches the argv.
    pub shape: String,
    /// The elements, in order; `{model}` (or `{effort}`) is the value.
    pub args: Vec<String>,
}

/// The vendor's own session files, and the bounds of a search through them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SessionFilesSpec {
    /// Whose session logs these are, as the cost module finds them (`claude`: under
    /// `CLAUDE_CONFIG_DIR`, `codex`: under `CODEX_HOME`): one locator for pricing and binding.
    pub logs: crate::cost::Agent,
    /// At most this many files are opened, the most recently modified first.
    #[serde(default = "default_max_files")]
    pub max_files: usize,
    /// At most this many bytes are read across all of them.
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// The marker counts only within this many bytes of a file's start (the prompt is the
    /// session's first message; a marker quoted later in some other session is not ours).
    #[serde(default = "default_marker_within")]
    pub marker_within_bytes: u64,
}

fn default_max_files() -> usize {
    32
}

fn default_max_bytes() -> u64 {
    16 * 1024 * 1024
}

fn default_marker_within() -> u64 {
    1024 * 1024
}

/// The probe command and the output substrings that prove each capability.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Arguments after the binary (for example a help command).
    pub argv: Vec<String>,
    /// Bound on the probe process.
    #[serde(default = "default_probe_timeout")]
    pub timeout_secs: u64,
    /// Capability name → substrings that must all appear in the probe's stdout+stderr.
    pub capabilities: BTreeMap<String, Vec<String>>,
    /// Capabilities without which the realization does not bind.
    pub required: Vec<String>,
}

fn default_probe_timeout() -> u64 {
    20
}

/// Arguments that make the vendor constrain its answer to the review JSON Schema.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StructuredOutputSpec {
    /// Probe capability that must be proven for these arguments to be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    /// Elements replacing `{structured_output}` in argv.
    pub args: Vec<String>,
}

/// Arguments used only when the probe proved their capability.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GatedArgs {
    /// Probe capability that must be proven for these arguments to be used.
    pub capability: String,
    /// Repeat the elements once per table the vendor's own config file defines (`{name}` is
    /// the table's name); none there: the group adds nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub each: Option<EachTable>,
    /// The elements, in order (scalar placeholders allowed).
    pub args: Vec<String>,
}

/// The tables `[<table>.NAME]` of a vendor's own TOML config file, found by a line scan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(deny_unknown_fields)]
pub struct EachTable {
    /// The file: `${VAR:-fallback}` at its start reads the reviewer's environment, a leading
    /// `~/` is its `HOME`.
    pub file: String,
    /// The key whose sub-tables are named (`mcp_servers`).
    pub table: String,
    /// An anchored regex every name fits before it is put in an argv (others are left out).
    pub name_shape: String,
}

/// How a later round continues the reviewer's earlier session.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ResumeSpec {
    /// Probe capability that must be proven for resuming to be attempted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capability: Option<String>,
    /// Full argv template (after the program) for a resumed review; uses `{session_id}`.
    pub argv: Vec<String>,
    /// When a resumed attempt dies or cannot start, run a fresh review instead.
    #[serde(default)]
    pub fallback_to_fresh: bool,
}

/// Where to read a value from a finished reviewer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "from", rename_all = "snake_case", deny_unknown_fields)]
pub enum Selector {
    /// The whole of stdout.
    Stdout,
    /// The file whose path replaced `{output_file}`.
    OutputFile,
    /// A field of a JSON object on stdout (one object, or one per line).
    JsonEvent {
        /// Dotted path → value every selected event must carry (`{}` matches any object).
        #[serde(default, rename = "match")]
        matches: BTreeMap<String, Value>,
        /// Dotted path of the field to read.
        field: String,
        /// Which matching event counts.
        #[serde(default)]
        pick: Pick,
    },
}

/// Which of several matching events a selector reads.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    /// The first one carrying the field.
    First,
    /// The last one carrying the field.
    #[default]
    Last,
    /// The total of the field's numbers over every matching event (a CLI that prices each
    /// step, OpenCode's `step_finish` `part.cost`); only for `cost_usd`. A total of 0 is
    /// none: such a CLI reports 0 for a model it knows no price of, and an unknown spend is
    /// "not measured", never $0.
    Sum,
}

/// How a vendor reports that it, not the code under review, failed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FailureSpec {
    /// Events that mean the review failed whatever else was printed.
    #[serde(default)]
    pub fatal_events: Vec<EventRule>,
    /// Events that may be transient (a reconnect) but explain a failure when no answer came.
    #[serde(default)]
    pub hint_events: Vec<EventRule>,
    /// Regexes applied to each stderr line; the vendor's message when it failed without events.
    #[serde(default)]
    pub stderr_patterns: Vec<String>,
    /// Stop waiting when stdout shows the vendor retrying what it cannot do (no network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub give_up: Option<GiveUpSpec>,
    /// Events that are the vendor's warnings (a missing model metadata notice): never its
    /// failure, never its answer; shown after git pair's own message at most.
    #[serde(default)]
    pub warning_events: Vec<EventRule>,
    /// Events that show the vendor retrying on its own (a reconnect): progress lines on a
    /// terminal while it runs.
    #[serde(default)]
    pub retry_events: Vec<EventRule>,
    /// Where the HTTP status of the vendor's failure is read: event fields (a number), tried
    /// in order.
    #[serde(default)]
    pub status_events: Vec<EventRule>,
    /// A regex whose first capture group is the HTTP status inside the vendor's failure text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_pattern: Option<String>,
    /// What kind of failure the vendor's words describe, when no HTTP status says it: the
    /// first rule whose regex matches the vendor's message wins.
    #[serde(default)]
    pub kinds: Vec<KindRule>,
    /// The vendor prints a fatal event only after its own retry chain ran out: git pair does
    /// not retry on top of it.
    #[serde(default)]
    pub fatal_after_own_retries: bool,
    /// Fatal events the vendor prints before it sent any request (a resumed session it
    /// cannot find): its own retries never ran, so `fatal_after_own_retries` does not hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unretried_events: Vec<EventRule>,
    /// How the vendor's own retries are bounded so the whole review fits its timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_retries: Option<OwnRetriesSpec>,
}

/// What a vendor failure was, as the user is told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The vendor refused the credentials (HTTP 401/403, "not logged in").
    Auth,
    /// The vendor said to slow down (HTTP 429).
    RateLimited,
    /// The vendor's server failed (HTTP 5xx, "overloaded").
    Server,
    /// The connection to the vendor failed or dropped.
    Connection,
}

impl FailureKind {
    /// The kind an HTTP status means, when it means one.
    pub fn from_status(status: u16) -> Option<FailureKind> {
        match status {
            401 | 403 => Some(FailureKind::Auth),
            429 => Some(FailureKind::RateLimited),
            500..=599 => Some(FailureKind::Server),
            _ => None,
        }
    }

    /// What happened, in the words of a failure message.
    pub fn says(self) -> &'static str {
        match self {
            FailureKind::Auth => "authentication failed",
            FailureKind::RateLimited => "rate limited",
            FailureKind::Server => "server error",
            FailureKind::Connection => "connection dropped",
        }
    }
}

/// One regex → failure kind rule.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KindRule {
    pub kind: FailureKind,
    pub pattern: String,
}

/// The vendor's own retry count, bounded through its environment: the largest count whose
/// summed backoff fits `share` of the time the review has left.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OwnRetriesSpec {
    /// The variable holding the count.
    pub env: String,
    /// The vendor's wait before retry 1, 2, … (seconds); the last repeats.
    pub backoff_secs: Vec<f64>,
    /// The part of the remaining time the backoff may use (0–1).
    pub share: f64,
    /// Never more than this many.
    pub max: u32,
}

impl OwnRetriesSpec {
    /// The retry count for a review with `left` to go.
    pub fn count_for(&self, left: std::time::Duration) -> u32 {
        let allowed = left.as_secs_f64() * self.share;
        let mut waited = 0.0;
        let mut count = 0;
        while count < self.max {
            let next = self
                .backoff_secs
                .get(count as usize)
                .or(self.backoff_secs.last())
                .copied()
                .unwrap_or(0.0);
            if waited + next > allowed {
                break;
            }
            waited += next;
            count += 1;
        }
        count
    }
}

/// `after` stdout lines matching the regex `pattern` end the attempt early, as `died`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GiveUpSpec {
    pub pattern: String,
    pub after: usize,
}

impl FailureSpec {
    /// The give-up rule ready for the process runner (validated at load).
    pub fn give_up_rule(&self) -> Option<crate::process::GiveUp> {
        let spec = self.give_up.as_ref()?;
        Some(crate::process::GiveUp {
            pattern: Regex::new(&spec.pattern).ok()?,
            after: spec.after.max(1),
        })
    }
}

/// An event shape and where its human message lives.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EventRule {
    /// Dotted path → value the event must carry.
    #[serde(rename = "match")]
    pub matches: BTreeMap<String, Value>,
    /// Dotted paths tried in order for the message; the first non-empty one is used.
    #[serde(default)]
    pub message: Vec<String>,
    /// The message built from the event instead: each `{dotted.path}` is replaced by that
    /// field's value (`?` when the event lacks it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A regex the message must match for the rule to apply (any message when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
}

impl EventRule {
    /// The rule's message in `event`, when the event is of the rule's shape.
    fn message_in(&self, event: &Value) -> Option<String> {
        if !event_matches(event, &self.matches) {
            return None;
        }
        let text = match &self.format {
            Some(format) => fill(format, event),
            None => self
                .message
                .iter()
                .find_map(|p| lookup(event, p).and_then(value_text))?,
        };
        match &self.pattern {
            Some(p) => Regex::new(p).ok()?.is_match(&text).then_some(text),
            None => Some(text),
        }
    }
}

/// `format` with each `{dotted.path}` replaced by the event's value there (`?` without one).
fn fill(format: &str, event: &Value) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let path = after.find('}').map(|close| &after[..close]).filter(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        });
        match path {
            Some(path) => {
                let value = lookup(event, path).and_then(value_text);
                out.push_str(value.as_deref().unwrap_or("?"));
                rest = &after[path.len() + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// What a finished reviewer's output says, read through its realization's selectors.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interpretation {
    /// The reviewer's answer text (a JSON value read from an event is re-serialized).
    pub answer: Option<String>,
    /// The vendor session id, for cost accounting and resuming.
    pub session_id: Option<String>,
    /// The vendor's own figure for the session's cost, as printed (a JSON number's text).
    pub cost_usd: Option<String>,
    /// The vendor's own message from a fatal failure event.
    pub fatal: Option<String>,
    /// The last transient error message the vendor printed (event or stderr line).
    pub hint: Option<String>,
    /// The vendor's warnings, in order (never a failure, never the answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The HTTP status of the vendor's failure, when it printed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// What kind of failure the vendor reported (its status, else its words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FailureKind>,
    /// The vendor's failure came before it sent any request (`unretried_events`): its own
    /// retries never ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub before_request: bool,
}

/// Values for the argv placeholders of one attempt.
#[derive(Debug, Clone, Default)]
pub struct ArgvValues {
    /// `{output_file}`, `{schema_file}`, … → value.
    pub scalars: BTreeMap<&'static str, String>,
    /// `{command_args}` → elements.
    pub command_args: Vec<String>,
    /// Whether `{structured_output}` expands to the realization's structured-output args.
    pub structured_output: bool,
    /// The capabilities the probe proved: `{isolation}` expands to the groups they allow.
    pub capabilities: std::collections::BTreeSet<String>,
    /// The names each `each` table has (what an isolation group is repeated for).
    pub table_names: BTreeMap<EachTable, Vec<String>>,
    /// The reviewer choices set (`model`, `effort` → value), already checked
    /// ([`Realization::check_choice`]): `{model}` expands to its group only when set.
    pub choices: BTreeMap<&'static str, String>,
}

impl Surfaces {
    /// The document shipped with git pair, validated.
    pub fn shipped() -> Result<Surfaces, SurfaceError> {
        Surfaces::from_json(SHIPPED_SURFACES, "shipped data/surfaces.json")
    }

    /// Whether the shipped document defines a realization called `name`, read without
    /// parsing the realizations or compiling their patterns (the shipped document is valid:
    /// its tests say so). What `start` asks of the reviewer it is given.
    pub fn shipped_defines(name: &str) -> bool {
        #[derive(Deserialize)]
        struct Names {
            realizations: BTreeMap<String, serde::de::IgnoredAny>,
        }
        serde_json::from_str::<Names>(SHIPPED_SURFACES)
            .is_ok_and(|names| names.realizations.contains_key(name))
    }

    /// The document at `path` (from `pair.surfaceFile`) when given, else the shipped one.
    pub fn load(path: Option<&Path>) -> Result<Surfaces, SurfaceError> {
        match path {
            None => Surfaces::shipped(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| {
                    SurfaceError::ReadSurfaceFile {
                        path: path.to_path_buf(),
                        source,
                    }
                })?;
                Surfaces::from_json(&text, &path.display().to_string())
            }
        }
    }

    /// Parses and validates a surfaces document; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Surfaces, SurfaceError> {
        let mut surfaces: Surfaces =
            serde_json::from_str(text).map_err(|source| SurfaceError::ParseSurfaces {
                origin: origin.to_owned(),
                source,
            })?;
        surfaces.origin = origin.to_owned();
        surfaces.validate()?;
        Ok(surfaces)
    }

    /// The realization called `name`.
    pub fn get(&self, name: &str) -> Result<&Realization, SurfaceError> {
        self.realizations
            .get(name)
            .ok_or_else(|| SurfaceError::UnknownRealization {
                name: name.to_owned(),
                known: self
                    .realizations
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The re-ask instruction as one text block.
    pub fn reask_instruction(&self) -> String {
        let mut text = self.reask_instruction.join("\n");
        text.push('\n');
        text
    }

    fn invalid(&self, realization: &str, reason: impl Into<String>) -> SurfaceError {
        SurfaceError::InvalidSurfaces {
            origin: self.origin.clone(),
            realization: realization.to_owned(),
            reason: reason.into(),
        }
    }

    fn validate(&self) -> Result<(), SurfaceError> {
        if self.v != 1 {
            return Err(self.invalid("-", format!("unsupported document version {}", self.v)));
        }
        if self.reask_instruction.iter().all(|l| l.trim().is_empty()) {
            return Err(self.invalid("-", "reask_instruction is empty"));
        }
        if self.realizations.is_empty() {
            return Err(self.invalid("-", "no realizations"));
        }
        for name in &self.fallback_order {
            if !self.realizations.contains_key(name) {
                return Err(
                    self.invalid("-", format!("fallback_order `{name}` names no realization"))
                );
            }
        }
        for (name, r) in &self.realizations {
            self.validate_one(name, r)?;
        }
        Ok(())
    }

    fn validate_one(&self, name: &str, r: &Realization) -> Result<(), SurfaceError> {
        let bad = |reason: String| self.invalid(name, reason);
        if r.max_concurrency == 0 {
            return Err(bad("max_concurrency must be at least 1".into()));
        }
        for f in &r.fallback {
            if !self.realizations.contains_key(f) {
                return Err(bad(format!("fallback `{f}` names no realization")));
            }
        }
        if r.kind == RealizationKind::Builtin {
            return Ok(());
        }
        if r.kind == RealizationKind::Acp {
            // The conversation is the protocol's, not the data's: only the agent's own
            // arguments ({command_args}) and the session id shape come from here.
            if !r.argv.iter().any(|a| a == "{command_args}") {
                return Err(bad("acp realization argv lacks {command_args}".into()));
            }
            if let Some(shape) = &r.session_id_shape {
                anchored(shape).map_err(|e| bad(format!("session_id_shape: {e}")))?;
            }
            return Ok(());
        }
        if r.argv.is_empty() {
            return Err(bad("argv is empty".into()));
        }
        if r.answer.is_empty() {
            return Err(bad("no answer selector".into()));
        }
        let capabilities: BTreeSet<&str> = r
            .probe
            .as_ref()
            .map(|p| p.capabilities.keys().map(String::as_str).collect())
            .unwrap_or_default();
        match r.kind {
            RealizationKind::External => {
                if r.binary.as_deref().is_none_or(|b| b.trim().is_empty()) {
                    return Err(bad("external realization without a binary".into()));
                }
                let probe = r
                    .probe
                    .as_ref()
                    .ok_or_else(|| bad("external realization without a probe".into()))?;
                for req in &probe.required {
                    if !capabilities.contains(req.as_str()) {
                        return Err(bad(format!("required capability `{req}` is not defined")));
                    }
                }
                for (cap, needles) in &probe.capabilities {
                    if needles.is_empty() || needles.iter().any(String::is_empty) {
                        return Err(bad(format!("capability `{cap}` has an empty substring")));
                    }
                }
            }
            RealizationKind::Command => {
                if !r.argv.iter().any(|a| a == "{command_args}") {
                    return Err(bad("command realization argv lacks {command_args}".into()));
                }
            }
            RealizationKind::Builtin | RealizationKind::Acp => {}
        }
        let mut templates: Vec<(&str, &[String])> = vec![("argv", &r.argv)];
        if let Some(s) = &r.structured_output {
            if let Some(cap) = &s.capability
                && !capabilities.contains(cap.as_str())
            {
                return Err(bad(format!(
                    "structured_output capability `{cap}` is not defined"
                )));
            }
            if s.args
                .iter()
                .any(|a| LIST_PLACEHOLDERS.iter().any(|p| a.contains(p)))
            {
                return Err(bad(
                    "structured_output args may not nest list placeholders".into()
                ));
            }
            templates.push(("structured_output.args", &s.args));
        }
        for group in &r.isolation {
            if !capabilities.contains(group.capability.as_str()) {
                return Err(bad(format!(
                    "isolation capability `{}` is not defined",
                    group.capability
                )));
            }
            if group.args.iter().any(|a| {
                LIST_PLACEHOLDERS
                    .iter()
                    .any(|p| a.contains(&format!("{{{p}}}")))
            }) {
                return Err(bad("isolation args may not nest list placeholders".into()));
            }
            let names = group.args.iter().any(|a| a.contains(EACH_NAME));
            match &group.each {
                Some(each) => {
                    if !names {
                        return Err(bad(format!("isolation `each` args lack {EACH_NAME}")));
                    }
                    anchored(&each.name_shape)
                        .map_err(|e| bad(format!("isolation `each` name_shape: {e}")))?;
                    if each.table.is_empty() || each.file.is_empty() {
                        return Err(bad("isolation `each` needs a file and a table".into()));
                    }
                    // `{name}` is this group's own: checked here, not with the templates.
                    let rest: Vec<String> = group
                        .args
                        .iter()
                        .map(|a| a.replace(EACH_NAME, ""))
                        .collect();
                    check_template(&rest).map_err(|e| bad(format!("isolation.args: {e}")))?;
                }
                None if names => {
                    return Err(bad(format!(
                        "isolation args use {EACH_NAME} without `each`"
                    )));
                }
                None => templates.push(("isolation.args", &group.args)),
            }
        }
        for (choice, spec) in r.choices() {
            let placeholder = format!("{{{choice}}}");
            let Some(spec) = spec else {
                continue;
            };
            if let Some(cap) = &spec.capability
                && !capabilities.contains(cap.as_str())
            {
                return Err(bad(format!("{choice} capability `{cap}` is not defined")));
            }
            anchored(&spec.shape).map_err(|e| bad(format!("{choice}.shape: {e}")))?;
            if !spec.args.iter().any(|a| a.contains(&placeholder)) {
                return Err(bad(format!("{choice}.args lack {placeholder}")));
            }
            let rest: Vec<String> = spec
                .args
                .iter()
                .map(|a| a.replace(&placeholder, ""))
                .collect();
            if rest.iter().any(|a| !placeholders(a).is_empty()) {
                return Err(bad(format!(
                    "{choice}.args may use no placeholder but {placeholder}"
                )));
            }
            let used = r.argv.iter().any(|a| a == &placeholder)
                || r.resume
                    .as_ref()
                    .is_some_and(|res| res.argv.iter().any(|a| a == &placeholder));
            if !used {
                return Err(bad(format!(
                    "{choice} is declared but no argv uses {placeholder}"
                )));
            }
        }
        for choice in CHOICES {
            let placeholder = format!("{{{choice}}}");
            let declared = r.choices().any(|(c, spec)| c == choice && spec.is_some());
            let in_argv = r
                .argv
                .iter()
                .chain(r.resume.iter().flat_map(|res| &res.argv));
            if !declared && in_argv.clone().any(|a| a.contains(&placeholder)) {
                return Err(bad(format!(
                    "argv uses {placeholder} but no {choice} is declared"
                )));
            }
        }
        if let Some(res) = &r.resume {
            if let Some(cap) = &res.capability
                && !capabilities.contains(cap.as_str())
            {
                return Err(bad(format!("resume capability `{cap}` is not defined")));
            }
            if !res.argv.iter().any(|a| a.contains("{session_id}")) {
                return Err(bad("resume argv lacks {session_id}".into()));
            }
            templates.push(("resume.argv", &res.argv));
        }
        for (what, template) in &templates {
            check_template(template).map_err(|e| bad(format!("{what}: {e}")))?;
        }
        if r.argv.iter().any(|a| a.contains("{session_id}")) {
            return Err(bad(
                "argv for a fresh review may not use {session_id}".into()
            ));
        }
        let all_args = || templates.iter().flat_map(|(_, t)| t.iter());
        let mentions = |p: &str| all_args().any(|a| a.contains(p));
        match r.prompt {
            PromptVia::Argument if !mentions("{prompt}") => {
                return Err(bad(
                    "prompt is passed as an argument but no argv uses {prompt}".into(),
                ));
            }
            PromptVia::File if !mentions("{prompt_file}") => {
                return Err(bad(
                    "prompt is passed as a file but no argv uses {prompt_file}".into(),
                ));
            }
            _ => {}
        }
        if r.answer.contains(&Selector::OutputFile) && !mentions("{output_file}") {
            return Err(bad(
                "answer reads output_file but no argv uses {output_file}".into(),
            ));
        }
        let f = &r.failure;
        for rule in f
            .fatal_events
            .iter()
            .chain(&f.hint_events)
            .chain(&f.warning_events)
            .chain(&f.retry_events)
            .chain(&f.status_events)
            .chain(&f.unretried_events)
        {
            if rule.message.is_empty() && rule.format.is_none() {
                return Err(bad(
                    "failure event rule without a message path or format".into()
                ));
            }
            if let Some(p) = &rule.pattern {
                Regex::new(p).map_err(|e| bad(format!("event pattern {p:?}: {e}")))?;
            }
        }
        let patterns = f
            .status_pattern
            .iter()
            .chain(f.kinds.iter().map(|k| &k.pattern));
        for p in patterns {
            Regex::new(p).map_err(|e| bad(format!("failure pattern {p:?}: {e}")))?;
        }
        if let Some(own) = &f.own_retries
            && (own.env.trim().is_empty()
                || own.backoff_secs.is_empty()
                || own.backoff_secs.iter().any(|s| !s.is_finite() || *s < 0.0)
                || !(0.0..=1.0).contains(&own.share))
        {
            return Err(bad(
                "own_retries needs a variable, a non-empty backoff of non-negative seconds and a share between 0 and 1"
                    .into(),
            ));
        }
        let sums = |selectors: &[Selector]| {
            selectors.iter().any(|s| {
                matches!(
                    s,
                    Selector::JsonEvent {
                        pick: Pick::Sum,
                        ..
                    }
                )
            })
        };
        if sums(&r.answer) || sums(&r.session_id) {
            return Err(bad(
                "pick `sum` is only for cost_usd (an answer or a session id is one value)".into(),
            ));
        }
        for (name, value) in &r.env_set {
            let plain = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !plain {
                return Err(bad(format!("env_set name {name:?} is not a variable name")));
            }
            if !placeholders(value).is_empty() || value.contains('\0') {
                return Err(bad(format!(
                    "env_set `{name}` must be a fixed value (no placeholder, no NUL)"
                )));
            }
        }
        for path in &r.snapshot_omit {
            if !omit_path_fits(path) {
                return Err(bad(format!(
                    "snapshot_omit {path:?} must be a relative path without `.` or `..` parts"
                )));
            }
        }
        if let Some(shape) = &r.session_id_shape {
            if !shape.starts_with('^') || !shape.ends_with('$') {
                return Err(bad(format!(
                    "session_id_shape {shape:?} must be anchored (^…$)"
                )));
            }
            Regex::new(shape).map_err(|e| bad(format!("session_id_shape {shape:?}: {e}")))?;
        }
        if let Some(files) = &r.session_files
            && (files.max_files == 0 || files.max_bytes == 0 || files.marker_within_bytes == 0)
        {
            return Err(bad(
                "session_files bounds (max_files, max_bytes, marker_within_bytes) must be at least 1"
                    .into(),
            ));
        }
        for pattern in &r.failure.stderr_patterns {
            Regex::new(pattern).map_err(|e| bad(format!("stderr pattern {pattern:?}: {e}")))?;
        }
        if let Some(give_up) = &r.failure.give_up {
            Regex::new(&give_up.pattern)
                .map_err(|e| bad(format!("give_up pattern {:?}: {e}", give_up.pattern)))?;
            if give_up.after == 0 {
                return Err(bad("give_up.after must be at least 1".into()));
            }
        }
        Ok(())
    }
}

/// Checks that every `{name}` in a template is a known placeholder used the right way.
/// A `snapshot_omit` entry: relative, `/`-separated, every part a plain name.
fn omit_path_fits(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains('\0'))
}

fn check_template(template: &[String]) -> Result<(), String> {
    for element in template {
        for name in placeholders(element) {
            if LIST_PLACEHOLDERS.contains(&name) || CHOICES.contains(&name) {
                if element != &format!("{{{name}}}") {
                    return Err(format!("{{{name}}} must be a whole argv element"));
                }
            } else if !SCALAR_PLACEHOLDERS.contains(&name) {
                return Err(format!("unknown placeholder {{{name}}}"));
            }
        }
    }
    Ok(())
}

/// Names of the `{placeholder}`s in one argv element.
fn placeholders(element: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = element;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if !after[..close].is_empty()
                    && after[..close]
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c == '_') =>
            {
                names.push(&after[..close]);
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    names
}

impl Realization {
    /// Each reviewer choice and the argument group this realization declares for it.
    pub fn choices(&self) -> impl Iterator<Item = (&'static str, Option<&ChoiceArgs>)> + Clone {
        [
            ("model", self.model.as_ref()),
            ("effort", self.effort.as_ref()),
        ]
        .into_iter()
    }

    /// Whether `value` may be passed as reviewer choice `choice` (`model`, `effort`) to this
    /// realization bound with `capabilities`; else why not, in one line naming the realization
    /// (`name`). A value never reaches an argv unless it is a plain word that is no option
    /// and fits the declared shape.
    pub fn check_choice(
        &self,
        name: &str,
        choice: &str,
        value: &str,
        capabilities: &BTreeSet<String>,
    ) -> Result<(), String> {
        let Some(spec) = self
            .choices()
            .find(|(c, _)| *c == choice)
            .and_then(|(_, s)| s)
        else {
            return Err(format!(
                "reviewer `{name}` takes no {choice} (its realization declares no {choice} arguments)"
            ));
        };
        if let Some(cap) = &spec.capability
            && !capabilities.contains(cap)
        {
            return Err(format!(
                "reviewer `{name}` takes no {choice} here: its probe did not prove `{cap}`"
            ));
        }
        let shape = anchored(&spec.shape)?;
        if !crate::model::settings::is_choice(value) || !shape.is_match(value) {
            return Err(format!(
                "{choice} {value:?} is not one reviewer `{name}` takes (it must fit {})",
                spec.shape
            ));
        }
        Ok(())
    }

    /// Whether any template of this realization (with structured output as given) uses the
    /// placeholder `name`.
    pub(crate) fn uses_placeholder(
        &self,
        template: &[String],
        structured: bool,
        name: &str,
    ) -> bool {
        let needle = format!("{{{name}}}");
        template.iter().any(|a| a.contains(&needle))
            || (structured
                && template.iter().any(|a| a == "{structured_output}")
                && self
                    .structured_output
                    .as_ref()
                    .is_some_and(|s| s.args.iter().any(|a| a.contains(&needle))))
            || (template.iter().any(|a| a == "{isolation}")
                && self
                    .isolation
                    .iter()
                    .any(|g| g.args.iter().any(|a| a.contains(&needle))))
    }

    /// Renders an argv template: list placeholders expand in place, scalar ones are
    /// substituted inside elements. Fails only for a value the caller did not supply.
    pub fn render_argv(
        &self,
        template: &[String],
        values: &ArgvValues,
    ) -> Result<Vec<String>, String> {
        let mut out = Vec::with_capacity(template.len() + 4);
        for element in template {
            match element.as_str() {
                "{command_args}" => out.extend(values.command_args.iter().cloned()),
                "{model}" | "{effort}" => {
                    let name = &element[1..element.len() - 1];
                    let spec = self
                        .choices()
                        .find(|(c, _)| *c == name)
                        .and_then(|(_, s)| s);
                    let (Some(spec), Some((&key, value))) =
                        (spec, values.choices.get_key_value(name))
                    else {
                        continue;
                    };
                    let mut with_value = values.clone();
                    with_value.scalars.insert(key, value.clone());
                    for arg in &spec.args {
                        out.push(substitute(arg, &with_value)?);
                    }
                }
                "{structured_output}" => {
                    if values.structured_output
                        && let Some(s) = &self.structured_output
                    {
                        for arg in &s.args {
                            out.push(substitute(arg, values)?);
                        }
                    }
                }
                "{isolation}" => {
                    for group in &self.isolation {
                        if !values.capabilities.contains(&group.capability) {
                            continue;
                        }
                        let Some(each) = &group.each else {
                            for arg in &group.args {
                                out.push(substitute(arg, values)?);
                            }
                            continue;
                        };
                        let shape = anchored(&each.name_shape)?;
                        for name in values.table_names.get(each).into_iter().flatten() {
                            // Checked again here: a name reaches the argv in its shape only.
                            if !shape.is_match(name) {
                                continue;
                            }
                            let mut with_name = values.clone();
                            with_name.scalars.insert("name", name.clone());
                            for arg in &group.args {
                                out.push(substitute(arg, &with_name)?);
                            }
                        }
                    }
                }
                _ => out.push(substitute(element, values)?),
            }
        }
        Ok(out)
    }

    /// The `each` tables of the isolation groups `template` would use with these
    /// capabilities: what the caller reads from the vendor's config before rendering.
    pub fn each_tables(
        &self,
        template: &[String],
        capabilities: &BTreeSet<String>,
    ) -> Vec<&EachTable> {
        if !template.iter().any(|a| a == "{isolation}") {
            return Vec::new();
        }
        self.isolation
            .iter()
            .filter(|g| capabilities.contains(&g.capability))
            .filter_map(|g| g.each.as_ref())
            .collect()
    }

    /// Whether `id` may be kept as this realization's session id and put in its argv: a plain
    /// name (`[A-Za-z0-9_-]`, at most 128 bytes, starting with a letter or digit, so never an
    /// option or a path) of the declared `session_id_shape`, when one is declared.
    pub fn session_id_fits(&self, id: &str) -> bool {
        let plain = !id.is_empty()
            && id.len() <= 128
            && id.as_bytes()[0].is_ascii_alphanumeric()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        plain
            && self
                .session_id_shape
                .as_deref()
                .is_none_or(|shape| Regex::new(shape).is_ok_and(|re| re.is_match(id)))
    }

    /// Reads answer, session id and vendor failure messages from a finished process's output.
    /// Pure: `stdout`, `stderr` and the output file's bytes are all it looks at.
    pub fn interpret(
        &self,
        stdout: &[u8],
        stderr: &[u8],
        output_file: Option<&[u8]>,
    ) -> Interpretation {
        let events = json_events(stdout);
        let select = |selectors: &[Selector]| {
            selectors.iter().find_map(|s| match s {
                Selector::Stdout => non_blank(String::from_utf8_lossy(stdout).into_owned()),
                Selector::OutputFile => {
                    output_file.and_then(|b| non_blank(String::from_utf8_lossy(b).into_owned()))
                }
                Selector::JsonEvent {
                    matches,
                    field,
                    pick,
                } => {
                    let mut found = events
                        .iter()
                        .filter(|e| event_matches(e, matches))
                        .filter_map(|e| lookup(e, field).and_then(value_text));
                    match pick {
                        Pick::First => found.next(),
                        Pick::Last => found.next_back(),
                        Pick::Sum => {
                            let numbers: Vec<f64> = found
                                .map(|t| t.trim().parse::<f64>().ok())
                                .collect::<Option<_>>()?;
                            let total: f64 = numbers.iter().sum();
                            (total.is_finite() && total > 0.0).then(|| total.to_string())
                        }
                    }
                }
            })
        };
        let answer = select(&self.answer);
        let session_id = select(&self.session_id);
        let cost_usd = select(&self.cost_usd);
        let rule_message = |rules: &[EventRule]| {
            events
                .iter()
                .rev()
                .find_map(|e| rules.iter().find_map(|r| r.message_in(e)))
        };
        let fatal = rule_message(&self.failure.fatal_events);
        let hint = rule_message(&self.failure.hint_events)
            .or_else(|| stderr_message(&self.failure.stderr_patterns, stderr));
        let warnings = events
            .iter()
            .filter_map(|e| {
                self.failure
                    .warning_events
                    .iter()
                    .find_map(|r| r.message_in(e))
            })
            .collect();
        let said = fatal.as_deref().or(hint.as_deref());
        let status = rule_message(&self.failure.status_events)
            .and_then(|s| s.trim().parse::<u16>().ok())
            .or_else(|| {
                let re = Regex::new(self.failure.status_pattern.as_deref()?).ok()?;
                re.captures(said?)?.get(1)?.as_str().parse::<u16>().ok()
            });
        let kind = status.and_then(FailureKind::from_status).or_else(|| {
            let said = said?;
            self.failure
                .kinds
                .iter()
                .find(|k| Regex::new(&k.pattern).is_ok_and(|re| re.is_match(said)))
                .map(|k| k.kind)
        });
        Interpretation {
            answer,
            session_id,
            cost_usd,
            fatal,
            hint,
            warnings,
            status,
            kind,
            before_request: events.iter().any(|e| {
                self.failure
                    .unretried_events
                    .iter()
                    .any(|r| r.message_in(e).is_some())
            }),
        }
    }

    /// The HTTP status and kind of failure the vendor's words `said` describe, by the data's
    /// `failure.status_pattern` and `failure.kinds` (for a failure reported as text alone, as
    /// an ACP agent's error answer is).
    pub fn classify_failure(&self, said: &str) -> (Option<u16>, Option<FailureKind>) {
        let status = self
            .failure
            .status_pattern
            .as_deref()
            .and_then(|p| Regex::new(p).ok())
            .and_then(|re| re.captures(said)?.get(1)?.as_str().parse::<u16>().ok());
        let kind = status.and_then(FailureKind::from_status).or_else(|| {
            self.failure
                .kinds
                .iter()
                .find(|k| Regex::new(&k.pattern).is_ok_and(|re| re.is_match(said)))
                .map(|k| k.kind)
        });
        (status, kind)
    }

    /// The retry progress a vendor printed on one stdout line, for the terminal.
    pub fn retry_event(&self, line: &[u8]) -> Option<String> {
        let line = line.trim_ascii();
        if line.first() != Some(&b'{') || self.failure.retry_events.is_empty() {
            return None;
        }
        let event = serde_json::from_slice::<Value>(line).ok()?;
        self.failure
            .retry_events
            .iter()
            .find_map(|r| r.message_in(&event))
    }

    /// Variables bounding the vendor's own retries for a review with `left` to go, unless
    /// the user already set them.
    pub fn own_retry_env(&self, left: std::time::Duration) -> Vec<(String, String)> {
        match &self.failure.own_retries {
            Some(spec) if std::env::var_os(&spec.env).is_none() => {
                vec![(spec.env.clone(), spec.count_for(left).to_string())]
            }
            _ => Vec::new(),
        }
    }
}

fn substitute(element: &str, values: &ArgvValues) -> Result<String, String> {
    let mut out = element.to_owned();
    for name in placeholders(element) {
        let value = values
            .scalars
            .get(name)
            .ok_or_else(|| format!("no value for {{{name}}}"))?;
        out = out.replace(&format!("{{{name}}}"), value);
    }
    Ok(out)
}

fn non_blank(s: String) -> Option<String> {
    if s.trim().is_empty() { None } else { Some(s) }
}

/// JSON objects on stdout: the whole of it when it is one JSON value, else each line that is.
fn json_events(stdout: &[u8]) -> Vec<Value> {
    let trimmed = stdout.trim_ascii();
    if trimmed.first() == Some(&b'{')
        && let Ok(v @ Value::Object(_)) = serde_json::from_slice::<Value>(trimmed)
    {
        return vec![v];
    }
    stdout
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| l.first() == Some(&b'{'))
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

/// The value at a dotted path (`item.text`) inside a JSON object.
fn lookup<'v>(value: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.')
        .try_fold(value, |v, key| v.as_object().and_then(|o| o.get(key)))
}

fn event_matches(event: &Value, matches: &BTreeMap<String, Value>) -> bool {
    matches
        .iter()
        .all(|(path, want)| lookup(event, path) == Some(want))
}

/// A JSON value as text: strings as they are, string arrays joined, null and blanks as none,
/// anything else re-serialized (a structured answer object).
fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => non_blank(s.clone()),
        Value::Array(items) if items.iter().all(Value::is_string) => non_blank(
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("; "),
        ),
        other => Some(other.to_string()),
    }
}

/// The first pattern (in document order) that matches a stderr line gives the message: the
/// last line it matches.
fn stderr_message(patterns: &[String], stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    patterns.iter().find_map(|p| {
        let re = Regex::new(p).ok()?;
        text.lines()
            .rev()
            .map(str::trim)
            .find(|l| re.is_match(l))
            .map(str::to_owned)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODEX_STDOUT: &[u8] =
        include_bytes!("../../fixtures/reviewers/samples/codex-exec-stdout.jsonl");
    const CLAUDE_OUTPUTS: &[u8] =
        include_bytes!("../../fixtures/reviewers/samples/claude-p-outputs.jsonl");

    fn shipped() -> Surfaces {
        Surfaces::shipped().expect("shipped surfaces are valid")
    }

    fn values(structured: bool) -> ArgvValues {
        let mut v = ArgvValues {
            structured_output: structured,
            ..ArgvValues::default()
        };
        for (k, val) in [
            ("output_file", "/tmp/out.txt"),
            ("schema_file", "/tmp/schema.json"),
            ("schema_json", "{\"type\":\"object\"}"),
            ("session_id", "S-1"),
        ] {
            v.scalars.insert(k, val.to_owned());
        }
        v
    }

    #[test]
    fn shipped_document_loads_with_every_realization() {
        let s = shipped();
        let names: Vec<&str> = s.realizations.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "acp", "builtin", "claude", "codex", "command", "copilot", "gemini", "opencode",
                "qwen"
            ]
        );
        for name in names {
            assert!(Surfaces::shipped_defines(name), "{name}");
        }
        assert!(!Surfaces::shipped_defines("nobody"));
        assert!(s.reask_instruction().contains("VERDICT: APPROVED"));
    }

    #[test]
    fn renaming_a_flag_in_the_data_changes_the_argv() {
        let text = SHIPPED_SURFACES.replace("\"--output-schema\"", "\"--answer-schema\"");
        let s = Surfaces::from_json(&text, "edited").expect("edited document is valid");
        let codex = s.get("codex").expect("codex");
        let argv = codex
            .render_argv(&codex.argv, &values(true))
            .expect("render");
        assert!(argv.contains(&"--answer-schema".to_owned()), "{argv:?}");
        assert!(!argv.contains(&"--output-schema".to_owned()), "{argv:?}");
    }

    #[test]
    fn codex_argv_renders_with_and_without_structured_output() {
        let s = shipped();
        let codex = s.get("codex").expect("codex");
        let with = codex
            .render_argv(&codex.argv, &values(true))
            .expect("render");
        assert_eq!(
            with,
            [
                "exec",
                "--sandbox",
                "read-only",
                "--json",
                "--skip-git-repo-check",
                "--output-last-message",
                "/tmp/out.txt",
                "--output-schema",
                "/tmp/schema.json",
                "-"
            ]
        );
        let without = codex
            .render_argv(&codex.argv, &values(false))
            .expect("render");
        assert_eq!(without.len(), with.len() - 2);
        let resume = codex.resume.as_ref().expect("codex resumes");
        let resumed = codex
            .render_argv(&resume.argv, &values(false))
            .expect("render");
        let at = resumed
            .iter()
            .position(|a| a == "resume")
            .expect("resume subcommand");
        assert_eq!(resumed[resumed.len() - 2], "S-1");
        assert!(at > 0 && resumed[..at].contains(&"read-only".to_owned()));
    }

    #[test]
    fn model_and_effort_expand_to_their_groups_only_when_set() {
        let s = shipped();
        let caps = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
        let codex = s.get("codex").expect("codex");
        let plain = codex
            .render_argv(&codex.argv, &values(false))
            .expect("render");
        assert!(!plain.iter().any(|a| a == "-m" || a.contains("effort")));
        let mut v = values(false);
        v.choices.insert("model", "gpt-5.2".into());
        v.choices.insert("effort", "high".into());
        let chosen = codex.render_argv(&codex.argv, &v).expect("render");
        let at = chosen.iter().position(|a| a == "-m").expect("-m");
        assert_eq!(chosen[at + 1], "gpt-5.2");
        assert!(chosen.contains(&"model_reasoning_effort=high".to_owned()));
        assert_eq!(
            chosen.last().map(String::as_str),
            Some("-"),
            "stdin stays last"
        );
        let resumed = codex
            .render_argv(&codex.resume.as_ref().expect("resume").argv, &v)
            .expect("render");
        assert!(resumed.contains(&"gpt-5.2".to_owned()));
        let claude = s.get("claude").expect("claude");
        let chosen = claude.render_argv(&claude.argv, &v).expect("render");
        let at = chosen.iter().position(|a| a == "--model").expect("--model");
        assert_eq!(chosen[at + 1], "gpt-5.2");
        assert!(chosen.windows(2).any(|w| w == ["--effort", "high"]));

        let proven = caps(&["model_flag", "config_override", "effort_flag"]);
        assert!(
            codex
                .check_choice("codex", "model", "gpt-5.2", &proven)
                .is_ok()
        );
        assert!(
            codex
                .check_choice("codex", "effort", "high", &proven)
                .is_ok()
        );
        for hostile in ["-c", "--x=y", "a b", "x\n", "max"] {
            let err = codex
                .check_choice(
                    "codex",
                    if hostile == "max" { "effort" } else { "model" },
                    hostile,
                    &proven,
                )
                .expect_err(hostile);
            assert!(err.contains("codex"), "{err}");
        }
        let err = codex
            .check_choice("codex", "model", "gpt-5.2", &caps(&[]))
            .expect_err("unproven");
        assert!(err.contains("model_flag"), "{err}");
        let builtin = s.get("builtin").expect("builtin");
        let err = builtin
            .check_choice("builtin", "model", "gpt-5.2", &proven)
            .expect_err("no group");
        assert_eq!(
            err,
            "reviewer `builtin` takes no model (its realization declares no model arguments)"
        );
    }

    #[test]
    fn opencode_cost_is_the_total_of_its_steps_and_zero_is_no_figure() {
        let s = shipped();
        let opencode = s.get("opencode").expect("opencode");
        let step = |cost: &str| {
            format!(
                r#"{{"type":"step_finish","sessionID":"ses_dc8203733ffeWzSxl3o1SJEgXt","part":{{"type":"step-finish","tokens":{{"input":1000,"output":100}},"cost":{cost}}}}}"#
            )
        };
        let two = format!("{}\n{}\n", step("0.002"), step("0.001"));
        let got = opencode.interpret(two.as_bytes(), b"", None);
        let usd: f64 = got
            .cost_usd
            .as_deref()
            .expect("a figure")
            .parse()
            .expect("a number");
        assert!((usd - 0.003).abs() < 1e-12, "{usd}");
        let unpriced = format!("{}\n{}\n", step("0"), step("0"));
        assert_eq!(
            opencode.interpret(unpriced.as_bytes(), b"", None).cost_usd,
            None
        );
        let odd = format!("{}\n{}\n", step("0.002"), step("\"x\""));
        assert_eq!(
            opencode.interpret(odd.as_bytes(), b"", None).cost_usd,
            None,
            "a step whose cost is not a number: no figure at all"
        );
        let text = SHIPPED_SURFACES.replacen(
            r#""field": "part.text", "pick": "last""#,
            r#""field": "part.text", "pick": "sum""#,
            1,
        );
        let err = Surfaces::from_json(&text, "t")
            .expect_err("sum answer")
            .to_string();
        assert!(err.contains("only for cost_usd"), "{err}");
    }

    #[test]
    fn the_newer_clis_take_model_and_effort_through_their_own_flags() {
        let s = shipped();
        let all = |r: &Realization| -> BTreeSet<String> {
            r.probe
                .as_ref()
                .map(|p| p.capabilities.keys().cloned().collect())
                .unwrap_or_default()
        };
        // (realization, model, its flag, effort and its flag, or no effort arguments)
        let cases = [
            ("gemini", "gemini-2.5-pro", "-m", None),
            ("qwen", "qwen3-coder-plus", "-m", None),
            (
                "opencode",
                "mock/mock-model",
                "-m",
                Some(("high", "--variant")),
            ),
            (
                "copilot",
                "gpt-5.4",
                "--model",
                Some(("xhigh", "--reasoning-effort")),
            ),
        ];
        for (name, model, model_flag, effort) in cases {
            let r = s.get(name).expect(name);
            let proven = all(r);
            let mut v = values(false);
            v.choices.insert("model", model.into());
            r.check_choice(name, "model", model, &proven)
                .unwrap_or_else(|e| panic!("{e}"));
            match effort {
                Some((level, flag)) => {
                    r.check_choice(name, "effort", level, &proven)
                        .unwrap_or_else(|e| panic!("{e}"));
                    v.choices.insert("effort", level.into());
                    let argv = r.render_argv(&r.argv, &v).expect("render");
                    assert!(argv.windows(2).any(|w| w == [flag, level]), "{argv:?}");
                }
                None => {
                    let err = r
                        .check_choice(name, "effort", "high", &proven)
                        .expect_err("no effort");
                    assert!(err.contains("takes no effort"), "{err}");
                }
            }
            for argv in [&r.argv, &r.resume.as_ref().expect("resume").argv] {
                let argv = r.render_argv(argv, &v).expect("render");
                assert!(
                    argv.windows(2).any(|w| w == [model_flag, model]),
                    "{name}: {argv:?}"
                );
            }
            for hostile in ["-x", "--flag=1", "a b", ""] {
                assert!(
                    r.check_choice(name, "model", hostile, &proven).is_err(),
                    "{name} took model {hostile:?}"
                );
            }
        }
        // OpenCode names the provider too.
        let opencode = s.get("opencode").expect("opencode");
        assert!(
            opencode
                .check_choice("opencode", "model", "gpt-5.4", &all(opencode))
                .is_err()
        );
    }

    #[test]
    fn choice_groups_are_validated() {
        let shipped = SHIPPED_SURFACES;
        for (from, to, reason) in [
            (
                "\"args\": [\"-m\", \"{model}\"]",
                "\"args\": [\"-m\"]",
                "model.args lack {model}",
            ),
            (
                "\"shape\": \"^(none|minimal|low|medium|high|xhigh)$\"",
                "\"shape\": \"(none|high)\"",
                "effort.shape",
            ),
            (
                "\"{isolation}\", \"{model}\", \"{effort}\", \"{structured_output}\", \"-\"]",
                "\"{isolation}\", \"x{model}\", \"{effort}\", \"{structured_output}\", \"-\"]",
                "{model} must be a whole argv element",
            ),
        ] {
            assert!(shipped.contains(from), "{from}");
            let text = shipped.replacen(from, to, 1);
            let err = Surfaces::from_json(&text, "t").expect_err(reason);
            assert!(err.to_string().contains(reason), "{reason}: {err}");
        }
    }

    #[test]
    fn claude_structured_output_passes_the_schema_inline() {
        let s = shipped();
        let claude = s.get("claude").expect("claude");
        let argv = claude
            .render_argv(&claude.argv, &values(true))
            .expect("render");
        let at = argv
            .iter()
            .position(|a| a == "--json-schema")
            .expect("flag");
        assert_eq!(argv[at + 1], "{\"type\":\"object\"}");
        assert!(argv.starts_with(&["-p".to_owned()]));
    }

    #[test]
    fn isolation_flags_are_passed_only_when_proven() {
        let s = shipped();
        let claude = s.get("claude").expect("claude");
        let mut v = values(false);
        let bare = claude.render_argv(&claude.argv, &v).expect("render");
        assert!(
            !bare
                .iter()
                .any(|a| a.contains("safe-mode") || a.contains("mcp"))
        );
        v.capabilities = ["safe_mode", "strict_mcp", "flag_settings"]
            .map(String::from)
            .into();
        let argv = claude.render_argv(&claude.argv, &v).expect("render");
        for flag in ["--safe-mode", "--strict-mcp-config"] {
            assert!(argv.contains(&flag.to_owned()), "{flag}: {argv:?}");
        }
        let at = argv.iter().position(|a| a == "--settings").expect("flag");
        let settings: serde_json::Value = serde_json::from_str(&argv[at + 1]).expect("json");
        assert_eq!(settings["disableAllHooks"], true);
        let resumed = claude
            .render_argv(&claude.resume.as_ref().expect("resume").argv, &v)
            .expect("render");
        assert!(resumed.contains(&"--strict-mcp-config".to_owned()));
        v.capabilities = ["strict_mcp"].map(String::from).into();
        let argv = claude.render_argv(&claude.argv, &v).expect("render");
        assert!(argv.contains(&"--strict-mcp-config".to_owned()));
        assert!(!argv.contains(&"--safe-mode".to_owned()));
        let codex = s.get("codex").expect("codex");
        v.capabilities = ["disable_features"].map(String::from).into();
        for template in [&codex.argv, &codex.resume.as_ref().expect("resume").argv] {
            let argv = codex.render_argv(template, &v).expect("render");
            let at = argv.iter().position(|a| a == "--disable").expect("flag");
            assert_eq!(
                argv[at..at + 4],
                ["--disable", "hooks", "--disable", "plugins"]
            );
        }
    }

    #[test]
    fn an_each_group_repeats_once_per_table_name_that_fits_its_shape() {
        let s = shipped();
        let codex = s.get("codex").expect("codex");
        let mut v = values(false);
        v.capabilities = ["config_override"].map(String::from).into();
        let tables = codex.each_tables(&codex.argv, &v.capabilities);
        assert_eq!(tables.len(), 1, "{tables:?}");
        let each = tables[0].clone();
        assert_eq!(each.table, "mcp_servers");
        // No names read: the group adds nothing.
        let argv = codex.render_argv(&codex.argv, &v).expect("render");
        assert!(!argv.iter().any(|a| a.contains("mcp_servers")), "{argv:?}");
        v.table_names.insert(
            each,
            vec!["one".into(), "two-b".into(), "x.command=evil".into()],
        );
        for template in [&codex.argv, &codex.resume.as_ref().expect("resume").argv] {
            let argv = codex.render_argv(template, &v).expect("render");
            let overrides: Vec<&str> = argv
                .windows(2)
                .filter(|w| w[0] == "-c")
                .map(|w| w[1].as_str())
                .collect();
            assert_eq!(
                overrides,
                [
                    "mcp_servers.one.enabled=false",
                    "mcp_servers.two-b.enabled=false"
                ],
                "{argv:?}"
            );
        }
        v.capabilities.clear();
        assert!(codex.each_tables(&codex.argv, &v.capabilities).is_empty());
    }

    #[test]
    fn an_each_group_is_validated() {
        let with = |group: &str| {
            let text = SHIPPED_SURFACES.replace(
                r#"{"capability": "disable_features", "args": ["--disable", "hooks", "--disable", "plugins"]}"#,
                group,
            );
            Surfaces::from_json(&text, "test")
                .err()
                .map(|e| e.to_string())
        };
        let each = r#""each": {"file": "~/c.toml", "table": "t", "name_shape": "^[a-z]+$"}"#;
        assert_eq!(
            with(&format!(
                r#"{{"capability": "disable_features", {each}, "args": ["{{name}}"]}}"#
            )),
            None
        );
        for (group, says) in [
            (
                format!(r#"{{"capability": "disable_features", {each}, "args": ["-c"]}}"#),
                "lack {name}",
            ),
            (
                r#"{"capability": "disable_features", "args": ["{name}"]}"#.to_owned(),
                "without `each`",
            ),
            (
                format!(
                    r#"{{"capability": "disable_features", {}, "args": ["{{name}}"]}}"#,
                    each.replace("^[a-z]+$", "[a-z]+")
                ),
                "anchored",
            ),
        ] {
            let error = with(&group).expect("refused");
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn command_args_expand_in_place() {
        let s = shipped();
        let cmd = s.get("command").expect("command");
        let mut v = values(false);
        v.command_args = vec!["--strict".into(), "a b".into()];
        assert_eq!(
            cmd.render_argv(&cmd.argv, &v).expect("render"),
            ["--strict", "a b"]
        );
    }

    #[test]
    fn invalid_documents_are_rejected_with_the_reason() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "\"{output_file}\"",
                "\"{outptu_file}\"",
                "unknown placeholder {outptu_file}",
            ),
            (
                "\"fallback\": [\"claude\"]",
                "\"fallback\": [\"clade\"]",
                "fallback `clade`",
            ),
            (
                "\"required\": [\"print\"",
                "\"required\": [\"printing\"",
                "required capability `printing`",
            ),
            (
                "\"max_concurrency\": 8",
                "\"max_concurrency\": 0",
                "max_concurrency",
            ),
            ("\"v\": 1", "\"v\": 2", "version 2"),
            (
                "\"session_id_shape\": \"^",
                "\"session_id_shape\": \"",
                "must be anchored",
            ),
            (
                "\"max_files\": 32",
                "\"max_files\": 0",
                "session_files bounds",
            ),
            (
                "\"{structured_output}\", \"-\"]",
                "\"x{structured_output}\", \"-\"]",
                "whole argv element",
            ),
            (
                "{\"capability\": \"safe_mode\"",
                "{\"capability\": \"safe_mod\"",
                "isolation capability `safe_mod` is not defined",
            ),
            (
                "\"args\": [\"--safe-mode\"]",
                "\"args\": [\"{structured_output}\"]",
                "isolation args may not nest list placeholders",
            ),
            (
                "\"env_set\": {\"OPENCODE_DISABLE_PROJECT_CONFIG\"",
                "\"env_set\": {\"OPENCODE_*\"",
                "env_set name \"OPENCODE_*\" is not a variable name",
            ),
            (
                "\"OPENCODE_DISABLE_PROJECT_CONFIG\": \"1\"",
                "\"OPENCODE_DISABLE_PROJECT_CONFIG\": \"{session_id}\"",
                "must be a fixed value",
            ),
            (
                "\"snapshot_omit\": [\".gemini\"",
                "\"snapshot_omit\": [\"../.gemini\"",
                "snapshot_omit \"../.gemini\" must be a relative path",
            ),
            (
                "\"snapshot_omit\": [\".gemini\"",
                "\"snapshot_omit\": [\"/etc\"",
                "must be a relative path",
            ),
        ];
        for (from, to, want) in cases {
            assert!(SHIPPED_SURFACES.contains(from), "fixture edit {from}");
            let text = SHIPPED_SURFACES.replacen(from, to, 1);
            let err = Surfaces::from_json(&text, "t").expect_err(to).to_string();
            assert!(err.contains(want), "{to}: {err}");
        }
        let typo = SHIPPED_SURFACES.replacen("\"fallback_to_fresh\"", "\"fallback_to_fersh\"", 1);
        assert!(matches!(
            Surfaces::from_json(&typo, "t"),
            Err(SurfaceError::ParseSurfaces { .. })
        ));
    }

    #[test]
    fn codex_jsonl_gives_session_answer_and_the_turn_failure() {
        let s = shipped();
        let codex = s.get("codex").expect("codex");
        let got = codex.interpret(CODEX_STDOUT, b"", None);
        assert_eq!(
            got.session_id.as_deref(),
            Some("0199f0aa-1111-7222-8333-444455556666")
        );
        assert!(
            got.answer
                .as_deref()
                .expect("answer")
                .starts_with("{\"findings\"")
        );
        assert_eq!(
            got.fatal.as_deref(),
            Some("stream disconnected before completion")
        );
        assert_eq!(got.hint.as_deref(), Some("Reconnecting... 1/5"));
        // The output file, when written, wins over the event stream.
        let got = codex.interpret(CODEX_STDOUT, b"", Some(b"VERDICT: APPROVED\n"));
        assert_eq!(got.answer.as_deref(), Some("VERDICT: APPROVED\n"));
    }

    #[test]
    fn claude_result_gives_session_structured_answer_and_is_error_message() {
        let s = shipped();
        let claude = s.get("claude").expect("claude");
        let lines: Vec<&[u8]> = CLAUDE_OUTPUTS.split(|&b| b == b'\n').collect();
        let ok = claude.interpret(lines[0], b"", None);
        assert_eq!(
            ok.session_id.as_deref(),
            Some("11111111-2222-4333-8444-555555555555")
        );
        assert_eq!(ok.answer.as_deref(), Some("{\"verdict\":\"approve\"}"));
        assert_eq!(ok.fatal, None);
        assert_eq!(ok.cost_usd.as_deref(), Some("0.128299"));
        let budget = claude.interpret(lines[2], b"", None);
        assert_eq!(budget.fatal.as_deref(), Some("budget exceeded"));
        assert_eq!(budget.cost_usd.as_deref(), Some("2.01"));
        let init = claude.interpret(lines[1], b"", None);
        assert_eq!(init.cost_usd, None, "no result event: no figure");
        let init = claude.interpret(lines[1], b"", None);
        assert_eq!(
            init.session_id.as_deref(),
            Some("11111111-2222-4333-8444-555555555555")
        );
        assert_eq!(init.answer, None);
    }

    #[test]
    fn real_vendor_failure_outputs_yield_the_vendor_message() {
        let s = shipped();
        let claude = s.get("claude").expect("claude");
        let not_logged_in =
            include_bytes!("../../fixtures/reviewers/samples/claude-not-logged-in.json");
        let got = claude.interpret(not_logged_in, b"", None);
        assert_eq!(
            got.fatal.as_deref(),
            Some("Not logged in · Please run /login")
        );
        let offline =
            include_bytes!("../../fixtures/reviewers/samples/claude-api-unreachable.json");
        let got = claude.interpret(offline, b"", None);
        assert_eq!(
            got.fatal.as_deref(),
            Some("API Error: Unable to connect to API (ConnectionRefused)")
        );
        let resume = claude.interpret(b"", b"No conversation found with session ID: 0000\n", None);
        assert_eq!(
            resume.hint.as_deref(),
            Some("No conversation found with session ID: 0000")
        );

        let codex = s.get("codex").expect("codex");
        let offline = include_bytes!("../../fixtures/reviewers/samples/codex-offline-stdout.jsonl");
        let got = codex.interpret(offline, b"", None);
        assert_eq!(got.fatal, None);
        assert_eq!(got.answer, None);
        assert_eq!(
            got.session_id.as_deref(),
            Some("01a229dd-fdf7-72c1-b2fe-438a1cb86e06")
        );
        assert!(got.hint.expect("hint").contains("waiting for network"));
        let stderr =
            include_bytes!("../../fixtures/reviewers/samples/codex-resume-missing-stderr.txt");
        let got = codex.interpret(b"", stderr, None);
        assert!(got.hint.expect("hint").starts_with("Error: thread/resume"));
    }

    #[test]
    fn a_codex_warning_is_never_its_failure_nor_its_answer() {
        let s = shipped();
        let codex = s.get("codex").expect("codex");
        let stdout = concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"01a234c5-7576-71b3-bd41-eebf741ae36c\"}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"error\",\"message\":\"Model metadata for `gpt-5-codex` not found.\"}}\n",
            "{\"type\":\"turn.started\"}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}\n",
        );
        let got = codex.interpret(stdout.as_bytes(), b"", None);
        assert_eq!((got.answer, got.fatal, got.hint), (None, None, None));
        assert_eq!(
            got.warnings,
            ["Model metadata for `gpt-5-codex` not found."]
        );
        assert_eq!(got.kind, None);
    }

    /// Real outputs of both CLIs after their own retries (captured against a loopback
    /// server): the HTTP status when they print one, else their words, give the kind.
    #[test]
    fn failure_kinds_come_from_the_status_else_the_words() {
        let s = shipped();
        let (codex, claude) = (
            s.get("codex").expect("codex"),
            s.get("claude").expect("claude"),
        );
        let unauthorized = br#"{"type":"error","message":"Reconnecting... 1/1 (unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:18912/v1/responses)"}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:18912/v1/responses"}}
"#;
        let got = codex.interpret(unauthorized, b"", None);
        assert_eq!((got.status, got.kind), (Some(401), Some(FailureKind::Auth)));
        let busy = br#"{"type":"turn.failed","error":{"message":"We're currently experiencing high demand, which may cause temporary errors."}}"#;
        let got = codex.interpret(busy, b"", None);
        assert_eq!((got.status, got.kind), (None, Some(FailureKind::Server)));
        let dropped = br#"{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}"#;
        assert_eq!(
            codex.interpret(dropped, b"", None).kind,
            Some(FailureKind::Connection)
        );
        let result = |status: u16, text: &str| {
            format!(
                "{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":{status},\"result\":\"{text}\",\"session_id\":\"11111111-2222-4333-8444-555555555555\"}}"
            )
        };
        let got = claude.interpret(result(500, "API Error: 500").as_bytes(), b"", None);
        assert_eq!(
            (got.status, got.kind),
            (Some(500), Some(FailureKind::Server))
        );
        let got = claude.interpret(result(429, "API Error: 429").as_bytes(), b"", None);
        assert_eq!(got.kind, Some(FailureKind::RateLimited));
        let not_logged_in =
            include_bytes!("../../fixtures/reviewers/samples/claude-not-logged-in.json");
        assert_eq!(
            claude.interpret(not_logged_in, b"", None).kind,
            Some(FailureKind::Auth)
        );
        let offline =
            include_bytes!("../../fixtures/reviewers/samples/claude-api-unreachable.json");
        assert_eq!(
            claude.interpret(offline, b"", None).kind,
            Some(FailureKind::Connection)
        );
    }

    #[test]
    fn retry_events_are_the_vendors_reconnects_only() {
        let s = shipped();
        let codex = s.get("codex").expect("codex");
        assert_eq!(
            codex
                .retry_event(
                    br#"{"type":"error","message":"Reconnecting... 2/5 (stream disconnected)"}"#
                )
                .as_deref(),
            Some("Reconnecting... 2/5 (stream disconnected)")
        );
        assert_eq!(
            codex.retry_event(br#"{"type":"error","message":"unexpected status 401"}"#),
            None
        );
        assert_eq!(codex.retry_event(b"not json"), None);
        assert_eq!(
            s.get("claude")
                .expect("claude")
                .retry_event(br#"{"type":"error","message":"Reconnecting... 1/5"}"#),
            None
        );
    }

    #[test]
    fn claudes_stream_events_give_its_retries_and_a_failure_before_any_request() {
        let s = shipped();
        let claude = s.get("claude").expect("claude");
        // Real `claude -p --output-format stream-json --verbose` lines (Claude Code 2.1.197).
        let retry = br#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":616.6,"error_status":429,"error":"rate_limit","session_id":"68b11f8c-8aa9-47f5-aed2-ec0c40612dc8"}"#;
        assert_eq!(
            claude.retry_event(retry).as_deref(),
            Some("retrying (1 of 10) after rate_limit (HTTP 429)")
        );
        let init = br#"{"type":"system","subtype":"init","session_id":"68b11f8c-8aa9-47f5-aed2-ec0c40612dc8"}"#;
        assert_eq!(claude.retry_event(init), None);
        let missing = br#"{"type":"result","subtype":"error_during_execution","duration_ms":0,"is_error":true,"num_turns":0,"session_id":"52c1f17a-7824-430c-a22c-719370e4d594","total_cost_usd":0,"errors":["No conversation found with session ID: 52c1f17a-7824-430c-a22c-719370e4d594"]}"#;
        let got = claude.interpret(missing, b"", None);
        assert!(got.before_request, "{got:?}");
        assert!(
            got.fatal
                .is_some_and(|f| f.contains("No conversation found"))
        );
        let offline =
            include_bytes!("../../fixtures/reviewers/samples/claude-api-unreachable.json");
        assert!(!claude.interpret(offline, b"", None).before_request);
        // The answer of a stream: the last result event's, whatever came before it.
        let stream = [&init[..], b"\n", retry, b"\n", br#"{"type":"result","subtype":"success","is_error":false,"result":"VERDICT: APPROVED","session_id":"68b11f8c-8aa9-47f5-aed2-ec0c40612dc8","total_cost_usd":0.0075}"#].concat();
        let got = claude.interpret(&stream, b"", None);
        assert_eq!(got.answer.as_deref(), Some("VERDICT: APPROVED"));
        assert_eq!(
            got.session_id.as_deref(),
            Some("68b11f8c-8aa9-47f5-aed2-ec0c40612dc8")
        );
        assert_eq!(got.cost_usd.as_deref(), Some("0.0075"));
        assert_eq!(got.fatal, None);
    }

    #[test]
    fn claudes_own_retries_fit_half_the_time_left() {
        let s = shipped();
        let spec = s
            .get("claude")
            .expect("claude")
            .failure
            .own_retries
            .clone()
            .expect("claude bounds its retries");
        let secs = |n| spec.count_for(std::time::Duration::from_secs(n));
        assert_eq!((secs(0), secs(3), secs(10), secs(600)), (0, 1, 3, 5));
        assert!(s.get("codex").expect("codex").failure.own_retries.is_none());
    }

    #[test]
    fn placeholders_are_found_inside_elements() {
        assert_eq!(placeholders("--session={session_id}"), ["session_id"]);
        assert_eq!(placeholders("{a}{b_c}"), ["a", "b_c"]);
        assert!(placeholders("{\"json\": 1}").is_empty());
        assert!(placeholders("{}").is_empty());
    }

    #[test]
    fn lookup_follows_dotted_paths() {
        let v: Value = serde_json::json!({"a": {"b": {"c": 1}}, "x": [1]});
        assert_eq!(lookup(&v, "a.b.c"), Some(&Value::from(1)));
        assert_eq!(lookup(&v, "a.z"), None);
        assert_eq!(lookup(&v, "x.0"), None);
    }
}
