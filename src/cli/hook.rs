//! `git pair hook <name> [args…]`: what the installed git hook shims and the agent hook
//! configuration run. Hidden from the main help; documented in the README ("Hooks").
//!
//! `pre-commit`, `pre-merge-commit` and `commit-msg --gate` can refuse (exit 1). `commit-msg`
//! without `--gate` and `post-commit` never fail the git command: an error becomes a warning
//! on stderr. `agent-stop` and the lifecycle hooks (`session-start`, `user-prompt`,
//! `session-end`) always exit 0 and print one JSON object or nothing on stdout, whatever
//! happens.

use std::io::Read as _;
use std::path::PathBuf;

use super::{CommandError, Context, Report};
use crate::hook::session::Event;
use crate::model::report::hook::{AgentStop, SessionHook, Warning};
use crate::ops;
use crate::render::hook as render;

/// Run one of git pair's hooks (the installed shims and the agent plugin call this).
///
/// pre-commit [--gate]: refuses HANDOFF.md and pair.neverCommit paths; with --gate, also a
/// staged tree that is not the active run's approved snapshot. pre-merge-commit [--gate]: the
/// same for a merge commit. commit-msg [--gate] <file>: adds Pair-Run: and Reviewed-by:
/// trailers when the staged tree is approved work; with --gate, first makes pre-commit's
/// checks again on the tree that will be committed (after every pre-commit step). post-commit:
/// writes the run's refs/notes/pair line on the new commit. agent-stop: the Claude Code /
/// Codex Stop hook (reads the hook JSON on stdin, prints a decision or nothing, exits 0).
/// session-start, user-prompt, session-end: the agent lifecycle hooks that notice a context
/// compaction and print the CONTEXT HANDOFF HEALTH CHECK (JSON on stdin, exit 0 always).
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub name: Name,
}

#[derive(Debug, clap::Subcommand)]
pub enum Name {
    /// Refuse never-commit paths; with --gate, unreviewed staged trees.
    PreCommit {
        /// Gate the commit on the active run's approved snapshot.
        #[arg(long)]
        gate: bool,
        /// Arguments a future git might pass; ignored.
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// The same checks as pre-commit, for the merge commit `git merge` is about to write.
    PreMergeCommit {
        /// Gate the merge commit on the active run's approved snapshot.
        #[arg(long)]
        gate: bool,
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// Add the review trailers to the message in FILE when the commit is approved work.
    CommitMsg {
        /// Refuse (as pre-commit --gate does) when the tree to be committed is not the
        /// approved snapshot: it runs after every pre-commit step, so re-staging is caught.
        #[arg(long)]
        gate: bool,
        /// The commit message file git passes.
        #[arg(value_name = "file")]
        file: PathBuf,
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// Write the run's refs/notes/pair line on the new commit when it holds approved work.
    PostCommit {
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// The agent Stop hook: JSON on stdin, a block decision or nothing on stdout, exit 0.
    AgentStop {
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// The agent SessionStart hook: after a compaction, counts it and prints the CONTEXT
    /// HANDOFF HEALTH CHECK; a fresh start resets the count. Exit 0 always.
    SessionStart {
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// The agent UserPromptSubmit hook: repeats the reminder after a compaction. Exit 0 always.
    UserPrompt {
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
    /// The agent SessionEnd hook: removes the session's state. Exit 0 always.
    SessionEnd {
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
}

/// Runs hook `args`; `open` opens the repository at `-C` (or the current directory), and
/// `directory` holds the `-C` flags for the Stop hook, which may start elsewhere.
pub fn run(
    open: &dyn Fn() -> Result<Context, CommandError>,
    directory: &[PathBuf],
    args: &Args,
) -> Result<Report, CommandError> {
    match &args.name {
        Name::PreCommit { gate, .. } | Name::PreMergeCommit { gate, .. } => {
            pre_commit(&open()?, *gate)
        }
        Name::CommitMsg {
            gate: true, file, ..
        } => commit_msg(&open()?, file, true),
        Name::CommitMsg { file, .. } => Ok(never_fails(
            "commit-msg",
            open().and_then(|ctx| commit_msg(&ctx, file, false)),
        )),
        Name::PostCommit { .. } => Ok(never_fails(
            "post-commit",
            open().and_then(|ctx| post_commit(&ctx)),
        )),
        Name::AgentStop { .. } => Ok(agent_stop(directory)),
        Name::SessionStart { .. } => Ok(lifecycle(Event::SessionStart, directory)),
        Name::UserPrompt { .. } => Ok(lifecycle(Event::UserPrompt, directory)),
        Name::SessionEnd { .. } => Ok(lifecycle(Event::SessionEnd, directory)),
    }
}

fn pre_commit(ctx: &Context, gate: bool) -> Result<Report, CommandError> {
    let done = ops::hook::pre_commit(ctx, gate)?;
    // Quiet on success: a hook that passes says nothing.
    Ok(Report::rendered(&done, render::nothing))
}

fn commit_msg(ctx: &Context, file: &std::path::Path, gate: bool) -> Result<Report, CommandError> {
    let done = ops::hook::commit_msg(ctx, file, gate)?;
    let mut report = Report::rendered(&done, render::nothing);
    report.notes.extend(render::commit_msg_note(&done));
    Ok(report)
}

fn post_commit(ctx: &Context) -> Result<Report, CommandError> {
    let done = ops::hook::post_commit(ctx)?;
    let mut report = Report::rendered(&done, render::nothing);
    report.notes.extend(render::post_commit_note(&done));
    Ok(report)
}

/// A hook that must not fail the git command: an error becomes a warning, exit 0.
fn never_fails(hook: &str, result: Result<Report, CommandError>) -> Report {
    result.unwrap_or_else(|err| {
        let warning = Warning {
            warning: err.message,
        };
        Report::rendered(&warning, render::nothing).note(render::warning_note(hook, &warning))
    })
}

/// The Stop hook. Reads at most [`ops::hook::MAX_STDIN`] bytes (more is not a hook input, and
/// lets the agent stop); opens the repository at `-C`, else the `cwd` the agent sent, else the
/// current directory. Exit 0 always; stdout is the decision or nothing.
fn agent_stop(directory: &[PathBuf]) -> Report {
    let stdin = read_hook_stdin();
    let decision = ops::hook::agent_stop(&stdin, |input| open_at(directory, input.cwd.as_deref()));
    let mut report = Report::rendered(&decision, render::agent_stop);
    // Allowing prints nothing at all on stdout, even with --json.
    report.silent = matches!(decision, AgentStop::Allow {});
    report
}

/// The agent's hook input: at most [`ops::hook::MAX_STDIN`] bytes (more is not a hook input
/// and reads as none).
fn read_hook_stdin() -> Vec<u8> {
    let mut stdin = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(ops::hook::MAX_STDIN + 1)
        .read_to_end(&mut stdin);
    if read.is_err() || stdin.len() as u64 > ops::hook::MAX_STDIN {
        stdin.clear();
    }
    stdin
}

/// Opens the repository at `-C`, else the `cwd` the agent sent, else the current directory.
fn open_at(directory: &[PathBuf], cwd: Option<&str>) -> Result<Context, ops::Error> {
    let mut dir = match cwd.map(PathBuf::from) {
        Some(cwd) if directory.is_empty() && cwd.is_absolute() && cwd.is_dir() => cwd,
        _ => std::env::current_dir().map_err(|source| ops::Error::ReadFile {
            what: "current directory",
            path: ".".into(),
            source,
        })?,
    };
    for d in directory {
        dir = dir.join(d);
    }
    Context::open(&dir, None)
}

/// A lifecycle hook: exit 0 always; stdout is the context to add or nothing, even with
/// --json. A panic inside is caught and prints nothing too.
fn lifecycle(event: Event, directory: &[PathBuf]) -> Report {
    let answer = std::panic::catch_unwind(|| {
        let stdin = read_hook_stdin();
        ops::lifecycle::run(event, &stdin, |input| {
            open_at(directory, input.cwd.as_deref())
        })
    })
    .unwrap_or(SessionHook::Quiet {});
    let mut report = Report::rendered(&answer, render::session_hook);
    report.silent = matches!(answer, SessionHook::Quiet {});
    report
}
