//! Choosing the realization that binds (SPEC §6.1): the configured one if what is installed
//! proves every required capability, else the fallbacks in order — `pair.fallbackOrder` when
//! set, else the realization's own `fallback` list then the document's `fallback_order` (an
//! external reviewer only: a configured command or the built-in one never falls back to a
//! vendor it did not name). Decided by probing the
//! installed binary's own output, never by product name or version. Runs probe commands
//! through the one spawn builder; prints nothing.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::time::Duration;

use crate::process::{self, Cancel, End, Limits, Spawn, find_executable};
use crate::review::Error;
use crate::review::binding::{BoundRealization, Candidate, CapabilityCheck, ProbeReport};
use crate::review::probe_cache::{Fingerprint, ProbeCache};
use crate::review::surface::{ProbeSpec, Realization, RealizationKind, Surfaces};

/// What to probe for.
#[derive(Debug, Clone, Default)]
pub struct ProbeRequest<'a> {
    /// The configured reviewer (`pair.reviewer`); `command` when a reviewer command is set.
    pub configured: &'a str,
    /// The reviewer command's argv (`pair.reviewerCommand`, `--reviewer-cmd`), already
    /// validated by [`parse_reviewer_command`], when one is configured.
    pub reviewer_command: Option<&'a [String]>,
    /// `PATH` to search (the process's own when `None`); also handed to probe commands.
    pub path_env: Option<&'a OsStr>,
    /// Probe outputs remembered per binary: a binary that has not changed is not probed
    /// again. `None`: every probe runs.
    pub cache: Option<&'a ProbeCache>,
    /// The ACP agent's command line (`pair.acpCommand`), already validated, when one is
    /// configured.
    pub acp_command: Option<&'a [String]>,
    /// Start the ACP agent and ask it `initialize` (`git pair probe`); otherwise an `acp`
    /// reviewer binds when its program is on `PATH`, and each attempt's own `initialize`
    /// is its proof.
    pub acp_handshake: bool,
    /// `pair.fallbackOrder`: the realizations tried, in order, when the configured one does
    /// not bind; `None` or empty: the realization's `fallback` list, then the document's
    /// `fallback_order`.
    pub fallback_order: Option<&'a [String]>,
}

impl ProbeReport {
    /// The bound realization; [`Error::NothingBinds`] when none bound.
    pub fn into_bound(self) -> Result<BoundRealization, Error> {
        match self.bound {
            Some(bound) => Ok(bound),
            None => Err(nothing_binds(self)),
        }
    }
}

fn nothing_binds(report: ProbeReport) -> Error {
    Error::NothingBinds {
        configured: report.configured.clone(),
        probed: report
            .probed
            .iter()
            .map(|c| format!("{} ({})", c.name, c.reason))
            .collect::<Vec<_>>()
            .join("; "),
        report: Box::new(report),
    }
}

/// Probes the configured realization, then its fallbacks, stopping at the first that binds.
/// Errors: the configured name is unknown, the reviewer command is malformed, or nothing binds
/// ([`Error::NothingBinds`] carries the full report).
pub fn probe(surfaces: &Surfaces, request: &ProbeRequest<'_>) -> Result<ProbeReport, Error> {
    let configured = surfaces.get(request.configured)?;
    let command = request.reviewer_command;
    let mut order = vec![request.configured.to_owned()];
    let fallbacks: Vec<&String> = match request.fallback_order.filter(|o| !o.is_empty()) {
        _ if configured.kind != RealizationKind::External => configured.fallback.iter().collect(),
        Some(given) => given.iter().collect(),
        None => configured
            .fallback
            .iter()
            .chain(&surfaces.fallback_order)
            .collect(),
    };
    for f in fallbacks {
        if !order.contains(f) {
            order.push(f.clone());
        }
    }
    let mut report = ProbeReport {
        configured: request.configured.to_owned(),
        winner: None,
        fallback_used: false,
        probed: Vec::new(),
        bound: None,
    };
    for name in order {
        let realization = surfaces.get(&name)?;
        let (candidate, bound) = probe_one(&name, realization, command, request);
        report.probed.push(candidate);
        if let Some(mut bound) = bound {
            bound.fallback_used = name != request.configured;
            report.fallback_used = bound.fallback_used;
            report.winner = Some(name);
            report.bound = Some(bound);
            return Ok(report);
        }
    }
    Err(nothing_binds(report))
}

/// Validates a reviewer command by the one rule ([`crate::config::reviewer_command`]): a
/// non-empty JSON array of strings whose first is non-empty.
pub fn parse_reviewer_command(text: &str) -> Result<Vec<String>, Error> {
    crate::config::reviewer_command(text).map_err(|reason| Error::InvalidReviewerCommand {
        value: text.to_owned(),
        reason,
    })
}

fn probe_one(
    name: &str,
    realization: &Realization,
    command: Option<&[String]>,
    request: &ProbeRequest<'_>,
) -> (Candidate, Option<BoundRealization>) {
    let path_env = request.path_env;
    let mut candidate = Candidate {
        name: name.to_owned(),
        kind: realization.kind,
        binary: realization.binary.clone(),
        path: None,
        probe_argv: Vec::new(),
        probe_result: None,
        capabilities: Vec::new(),
        binds: false,
        reason: String::new(),
        install: None,
    };
    let binding = match realization.kind {
        RealizationKind::Builtin => Some(bind_builtin(&mut candidate)),
        RealizationKind::Command => bind_command(&mut candidate, command, path_env),
        RealizationKind::Acp => bind_acp(&mut candidate, realization, request),
        RealizationKind::External => {
            bind_external(&mut candidate, realization, path_env, request.cache)
        }
    };
    let bound = binding.map(|(program, command_args, capabilities)| BoundRealization {
        name: name.to_owned(),
        realization: realization.clone(),
        program,
        command_args,
        capabilities,
        fallback_used: false,
    });
    (candidate, bound)
}

/// What a candidate binds with: the program found (none for the built-in reviewer), the
/// reviewer command's arguments after it, and the capabilities its probe proved.
type Binding = (Option<PathBuf>, Vec<String>, BTreeSet<String>);

/// The built-in reviewer runs in-process: it always binds, with no program.
fn bind_builtin(candidate: &mut Candidate) -> Binding {
    candidate.binds = true;
    candidate.reason = "in-process, always available".into();
    (None, Vec::new(), BTreeSet::new())
}

/// A reviewer command binds when one is configured and its program is on `PATH`; it proves no
/// capability (its contract is plain text).
fn bind_command(
    candidate: &mut Candidate,
    command: Option<&[String]>,
    path_env: Option<&OsStr>,
) -> Option<Binding> {
    let Some(argv) = command else {
        candidate.reason = "no reviewer command is configured".into();
        return None;
    };
    candidate.binary = Some(argv[0].clone());
    let Some(path) = find_executable(&argv[0], path_env) else {
        candidate.reason = format!("reviewer command `{}` not found or not executable", argv[0]);
        return None;
    };
    candidate.path = Some(path.clone());
    candidate.binds = true;
    candidate.reason = format!("reviewer command found at {}", path.display());
    Some((Some(path), argv[1..].to_vec(), BTreeSet::new()))
}

/// An ACP agent binds when `pair.acpCommand` is configured and its program is on `PATH`; with
/// the handshake, only when it also answers `initialize` in protocol version 1 (its name,
/// version and `loadSession` go in the reason).
fn bind_acp(
    candidate: &mut Candidate,
    realization: &Realization,
    request: &ProbeRequest<'_>,
) -> Option<Binding> {
    let Some(argv) = request.acp_command else {
        candidate.reason =
            "no ACP agent command is configured (git config pair.acpCommand '<agent command>')"
                .into();
        return None;
    };
    candidate.binary = Some(argv[0].clone());
    let Some(path) = find_executable(&argv[0], request.path_env) else {
        candidate.reason = format!("ACP agent `{}` not found or not executable", argv[0]);
        return None;
    };
    candidate.path = Some(path.clone());
    let args = argv[1..].to_vec();
    if !request.acp_handshake {
        candidate.binds = true;
        candidate.reason = format!("ACP agent found at {}", path.display());
        return Some((Some(path), args, BTreeSet::new()));
    }
    candidate.probe_argv = std::iter::once(path.display().to_string())
        .chain(args.iter().cloned())
        .chain(["(initialize)".to_owned()])
        .collect();
    let env = request
        .path_env
        .map(|p| vec![(OsString::from("PATH"), p.to_os_string())])
        .unwrap_or_default();
    match crate::review::acp::handshake(
        &path,
        &args,
        realization.env.clone(),
        env,
        Duration::from_secs(ACP_HANDSHAKE_SECS),
    ) {
        Ok(info) => {
            candidate.probe_result = Some(format!("initialize answered: {}", info.describe()));
            let mut proven = BTreeSet::from(["acp_v1".to_owned()]);
            if info.load_session {
                proven.insert("load_session".to_owned());
            }
            for (name, is) in [("acp_v1", true), ("load_session", info.load_session)] {
                candidate.capabilities.push(CapabilityCheck {
                    name: name.to_owned(),
                    required: name == "acp_v1",
                    proven: is,
                    missing: Vec::new(),
                });
            }
            candidate.binds = true;
            candidate.reason = format!("{} speaks ACP: {}", path.display(), info.describe());
            Some((Some(path), args, proven))
        }
        Err(why) => {
            candidate.probe_result = Some(why.clone());
            candidate.reason = format!("ACP agent {} did not initialize: {why}", path.display());
            None
        }
    }
}

/// How long `git pair probe` waits for an ACP agent's `initialize` answer (an `npx` start
/// included).
const ACP_HANDSHAKE_SECS: u64 = 60;

/// An external CLI binds when its binary is on `PATH`, its probe command finishes, and the
/// probe's output proves every required capability. With a cache, the output of an earlier
/// successful probe of the very same binary stands in for running it again.
fn bind_external(
    candidate: &mut Candidate,
    realization: &Realization,
    path_env: Option<&OsStr>,
    cache: Option<&ProbeCache>,
) -> Option<Binding> {
    let (Some(binary), Some(spec)) = (&realization.binary, &realization.probe) else {
        candidate.reason = "no binary or probe in the data".into();
        return None;
    };
    let Some(path) = find_executable(binary, path_env) else {
        candidate.reason = match &realization.install {
            Some(install) => format!("`{binary}` is not on PATH; install it with {install}"),
            None => format!("`{binary}` is not on PATH"),
        };
        candidate.install = realization.install.clone();
        return None;
    };
    candidate.path = Some(path.clone());
    candidate.probe_argv = std::iter::once(path.display().to_string())
        .chain(spec.argv.iter().cloned())
        .collect();
    let fingerprint = cache.and_then(|_| Fingerprint::of(&path));
    let remembered = cache
        .zip(fingerprint.as_ref())
        .and_then(|(cache, print)| cache.get(print, &spec.argv));
    let (output, finished) = match remembered {
        Some((output, result)) => {
            candidate.probe_result = Some(result);
            (output, true)
        }
        None => {
            let run = run_probe_command(&path, spec, path_env);
            candidate.probe_result = Some(probe_result(&run.end, run.status, spec));
            let mut output = String::from_utf8_lossy(&run.stdout).into_owned();
            output.push('\n');
            output.push_str(&String::from_utf8_lossy(&run.stderr_tail));
            let exited = matches!(run.end, End::Exited);
            if exited
                && run.status.is_some_and(|s| s.success())
                && let (Some(cache), Some(print)) = (cache, fingerprint)
            {
                cache.put(
                    print,
                    &spec.argv,
                    output.clone(),
                    candidate.probe_result.clone().unwrap_or_default(),
                );
            }
            (output, exited)
        }
    };
    let proven = check_capabilities(candidate, spec, &output);
    if !finished {
        candidate.reason = format!(
            "probe `{}` did not finish: {}",
            spec.argv.join(" "),
            candidate.probe_result.clone().unwrap_or_default()
        );
        return None;
    }
    let unproven: Vec<String> = candidate
        .capabilities
        .iter()
        .filter(|c| c.required && !c.proven)
        .map(|c| format!("{} (no {})", c.name, quote_list(&c.missing)))
        .collect();
    if !unproven.is_empty() {
        candidate.reason = format!(
            "`{binary} {}` does not show required capabilities: {}",
            spec.argv.join(" "),
            unproven.join(", ")
        );
        return None;
    }
    candidate.binds = true;
    candidate.reason = binds_reason(&path, spec, &proven);
    Some((Some(path), Vec::new(), proven))
}

/// Runs the probe command (bounded, its `PATH` the one searched).
fn run_probe_command(
    path: &std::path::Path,
    spec: &ProbeSpec,
    path_env: Option<&OsStr>,
) -> process::Finished {
    process::run(
        &Spawn {
            program: path.to_path_buf(),
            args: spec.argv.clone(),
            env: path_env
                .map(|p| vec![(OsString::from("PATH"), p.to_os_string())])
                .unwrap_or_default(),
            cwd: None,
            stdin: None,
            share_terminal: false,
            env_allow: None,
        },
        &Limits {
            timeout: Duration::from_secs(spec.timeout_secs),
            kill_grace: Duration::from_secs(1),
            stdout_cap: 4 * 1024 * 1024,
            stderr_tail: 256 * 1024,
            ..Limits::default()
        },
        // Ctrl-C during a probe must abort git pair, not fail this candidate over to the
        // next one: leave SIGINT alone.
        &Cancel::default(),
    )
}

/// How the probe command ended, in one phrase (`exit status 0`, `timed out after 20 s`, …).
fn probe_result(end: &End, status: Option<process::ExitInfo>, spec: &ProbeSpec) -> String {
    match end {
        End::Exited => status.map_or_else(|| "exited".to_owned(), |s| s.to_string()),
        End::TimedOut => format!("timed out after {} s", spec.timeout_secs),
        End::Cancelled => "cancelled".to_owned(),
        End::SpawnFailed { message } => message.clone(),
        End::GaveUp { line } => format!("gave up: {line}"),
    }
}

/// Checks every capability of `spec` against the probe's `output` (each check recorded on the
/// candidate, in data order); returns the ones proven.
fn check_capabilities(
    candidate: &mut Candidate,
    spec: &ProbeSpec,
    output: &str,
) -> BTreeSet<String> {
    let mut proven = BTreeSet::new();
    for (cap, needles) in &spec.capabilities {
        let missing: Vec<String> = needles
            .iter()
            .filter(|n| !output.contains(n.as_str()))
            .cloned()
            .collect();
        if missing.is_empty() {
            proven.insert(cap.clone());
        }
        candidate.capabilities.push(CapabilityCheck {
            name: cap.clone(),
            required: spec.required.contains(cap),
            proven: missing.is_empty(),
            missing,
        });
    }
    proven
}

/// Why a probed external CLI binds: where it is, how many required capabilities it proves,
/// and which optional ones.
fn binds_reason(path: &std::path::Path, spec: &ProbeSpec, proven: &BTreeSet<String>) -> String {
    let optional: Vec<&str> = proven
        .iter()
        .filter(|c| !spec.required.contains(*c))
        .map(String::as_str)
        .collect();
    format!(
        "{} proves {} required capabilities{}",
        path.display(),
        spec.required.len(),
        if optional.is_empty() {
            String::new()
        } else {
            format!(" and {}", optional.join(", "))
        }
    )
}

fn quote_list(items: &[String]) -> String {
    items
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixtures(dir: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/reviewers")
            .join(dir)
    }

    /// A PATH holding the given fixture dirs and a private dir with just the POSIX tools the
    /// fake CLIs use, so whatever codex/claude the machine has installed stays invisible.
    struct TestPath {
        _tools: tempfile::TempDir,
        path: OsString,
    }

    fn path_of(dirs: &[&str]) -> TestPath {
        let tools = tempfile::tempdir().expect("tempdir");
        for tool in ["sh", "cat", "grep", "dirname", "sleep", "mv", "head"] {
            let real = find_executable(tool, None).expect("POSIX tool on the test machine's PATH");
            std::os::unix::fs::symlink(real, tools.path().join(tool)).expect("symlink");
        }
        let mut all: Vec<PathBuf> = dirs.iter().map(|d| fixtures(d)).collect();
        all.push(tools.path().to_path_buf());
        let path = std::env::join_paths(all).expect("joinable");
        TestPath {
            _tools: tools,
            path,
        }
    }

    fn run_probe(
        configured: &str,
        command: Option<&str>,
        path: &OsStr,
    ) -> Result<ProbeReport, Error> {
        let surfaces = Surfaces::shipped().expect("shipped");
        let command = command.map(parse_reviewer_command).transpose()?;
        probe(
            &surfaces,
            &ProbeRequest {
                configured,
                reviewer_command: command.as_deref(),
                path_env: Some(path),
                cache: None,
                ..Default::default()
            },
        )
    }

    #[test]
    fn configured_vendor_binds_when_its_help_proves_the_capabilities() {
        let path = path_of(&["bin"]);
        let path = &path.path;
        let report = run_probe("codex", None, path).expect("binds");
        assert_eq!(
            (report.winner.as_deref(), report.fallback_used),
            (Some("codex"), false)
        );
        let bound = report.bound.expect("bound");
        assert!(bound.supports_structured_output() && bound.supports_resume());
        assert_eq!(bound.program, Some(fixtures("bin").join("codex")));
        let report = run_probe("claude", None, path).expect("binds");
        assert_eq!(report.winner.as_deref(), Some("claude"));
        assert!(report.bound.expect("bound").supports_structured_output());
    }

    #[test]
    fn missing_configured_cli_falls_back_to_the_other_vendor() {
        // Only claude is installed: "bin" holds both, so link claude alone next to the tools.
        let path = path_of(&[]);
        let tools = std::env::split_paths(&path.path).next().expect("tools dir");
        std::os::unix::fs::symlink(fixtures("bin").join("claude"), tools.join("claude"))
            .expect("link");
        let report = run_probe("codex", None, &path.path).expect("binds");
        assert_eq!(
            (report.winner.as_deref(), report.fallback_used),
            (Some("claude"), true)
        );
        assert_eq!(
            report.probed[0].reason,
            "`codex` is not on PATH; install it with npm install -g @openai/codex"
        );
        assert_eq!(
            report.probed[0].install.as_deref(),
            Some("npm install -g @openai/codex")
        );
        assert!(report.bound.expect("bound").fallback_used);
    }

    #[test]
    fn a_binary_named_right_but_lacking_capabilities_does_not_bind() {
        let path = path_of(&["bin-broken-codex"]);
        let err = run_probe("codex", None, &path.path).expect_err("nothing binds");
        let Error::NothingBinds { probed, report, .. } = &err else {
            panic!("{err}")
        };
        assert!(
            probed.contains("codex (`codex exec --help` does not show required capabilities"),
            "{probed}"
        );
        assert!(probed.contains("json_events"), "{probed}");
        assert!(
            probed.contains(
                "claude (`claude` is not on PATH; install it with npm install -g @anthropic-ai/claude-code)"
            ),
            "{probed}"
        );
        // Then the rest of the documented fallback order, none of which is on this PATH.
        let names: Vec<&str> = report.probed.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["codex", "claude", "gemini", "copilot", "opencode", "qwen"]
        );
        assert!(
            err.to_string()
                .starts_with("no reviewer realization binds for `codex`; probed: ")
        );
    }

    #[test]
    fn optional_capabilities_gate_structured_output_and_resume() {
        let path = path_of(&["bin-old-codex"]);
        let bound = run_probe("codex", None, &path.path)
            .expect("binds")
            .into_bound()
            .expect("bound");
        assert!(!bound.supports_structured_output());
        assert!(!bound.supports_resume());
        let check = bound.capabilities.contains("json_events");
        assert!(check);
    }

    #[test]
    fn builtin_always_binds() {
        let report = run_probe("builtin", None, OsStr::new("")).expect("binds");
        assert_eq!(report.winner.as_deref(), Some("builtin"));
        assert_eq!(report.bound.expect("bound").program, None);
    }

    #[test]
    fn reviewer_command_is_validated_and_resolved() {
        let test_path = path_of(&[]);
        let path = &test_path.path;
        let stub = fixtures("approve.sh").display().to_string();
        let json = serde_json::to_string(&[stub.as_str(), "--flag"]).expect("json");
        let bound = run_probe("command", Some(&json), path)
            .expect("binds")
            .into_bound()
            .expect("bound");
        assert_eq!(bound.program.as_deref(), Some(Path::new(&stub)));
        assert_eq!(bound.command_args, ["--flag"]);
        let on_path =
            run_probe("command", Some("[\"sh\", \"-c\", \"true\"]"), path).expect("binds");
        let tools = std::env::split_paths(path).next().expect("tools dir");
        assert_eq!(on_path.probed[0].path, Some(tools.join("sh")));

        for bad in [
            "[]",
            "\"reviewer\"",
            "[1]",
            "[\"\"]",
            "not json",
            "{\"a\": 1}",
        ] {
            assert!(
                matches!(
                    run_probe("command", Some(bad), path),
                    Err(Error::InvalidReviewerCommand { .. })
                ),
                "{bad}"
            );
        }
        let missing =
            run_probe("command", Some("[\"/nonexistent/reviewer\"]"), path).expect_err("no bind");
        assert!(
            missing
                .to_string()
                .contains("`/nonexistent/reviewer` not found"),
            "{missing}"
        );
        let none = run_probe("command", None, path).expect_err("no command");
        assert!(
            none.to_string()
                .contains("no reviewer command is configured"),
            "{none}"
        );
        let not_exec = fixtures("samples/README.md").display().to_string();
        let json = serde_json::to_string(&[not_exec]).expect("json");
        assert!(run_probe("command", Some(&json), path).is_err());
    }

    #[test]
    fn unknown_configured_name_is_an_error_listing_the_known_ones() {
        let err = run_probe("mistral", None, OsStr::new("")).expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "unknown reviewer `mistral` (known: acp, builtin, claude, codex, command, copilot, gemini, opencode, qwen)"
        );
    }

    #[test]
    fn report_serializes_for_the_probe_command() {
        let report = run_probe("builtin", None, OsStr::new("")).expect("binds");
        let json = serde_json::to_value(&report).expect("serializable");
        assert_eq!(json["winner"], "builtin");
        assert_eq!(json["probed"][0]["reason"], "in-process, always available");
    }
}
