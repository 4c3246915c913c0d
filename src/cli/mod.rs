//! The command layer: clap definitions, one file per subcommand, errors → exit codes.
//!
//! A command parses its arguments, calls one operation in [`crate::ops`], and renders the
//! report it returns as a [`ui::Report`]; only [`ui::Ui`] prints. No loop rule or git access
//! is implemented here; errors become exit codes and hints in `error.rs`, once.

mod abandon;
mod adopt;
mod budget_check;
mod checkpoint;
mod coder_done;
mod cost;
mod demo;
mod diff;
mod drop;
mod error;
mod finish;
mod gate;
mod handoff;
mod hook;
mod hooks;
mod list;
mod log;
mod man;
mod pr_body;
mod probe;
mod pull;
mod push;
mod review;
mod scrub;
mod set;
mod show;
mod skill;
mod start;
mod status;
mod ui;
mod verify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use crate::ops::Context;
pub use error::CommandError;
pub use ui::{Report, Ui};

const LONG_ABOUT: &str = "\
Run a coder <-> reviewer loop for AI coding agents, with all state kept inside git.

The loop:
  git pair start --task \"…\"            start a run on this branch (work tree must be clean)
  (the coder edits files)
  git pair coder-done --summary \"…\"    record the coder's round
  git pair review                       a reviewer reads the change and gives a verdict
  (repeat coder-done / review until APPROVED)
  git pair finish                       close the run and render the PR body

`git pair status --json` prints `next_action`, the one thing to do next.
A run belongs to the clone that started it; to continue one from another machine:
git pair pull, then git pair adopt RUN_ID.
State lives in refs/pair/runs/<id> and refs/notes/pair; HANDOFF.md is a view of it.";

/// git pair: a coder <-> reviewer loop for AI coding agents.
#[derive(Debug, Parser)]
#[command(
    name = "git pair",
    bin_name = "git pair",
    version,
    about = "Run a coder <-> reviewer loop for AI coding agents, with all state kept inside git",
    long_about = LONG_ABOUT,
    after_help = "Exit codes: 0 success · 1 refused or failed · 2 budget alert (budget-check; review with a paid reviewer) · 129 usage error"
)]
pub struct Cli {
    /// Run as if started in `path` (like git -C).
    #[arg(short = 'C', global = true, value_name = "path")]
    pub directory: Vec<std::path::PathBuf>,
    /// Print one compact JSON object on stdout; messages for humans go to stderr.
    #[arg(long, global = true)]
    pub json: bool,
    /// The run to act on (default: this clone's newest unfinished run on the current branch).
    #[arg(long, global = true, value_name = "id")]
    pub run: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Start(start::Args),
    Status(status::Args),
    CoderDone(coder_done::Args),
    Review(review::Args),
    Diff(diff::Args),
    Finish(finish::Args),
    PrBody(pr_body::Args),
    Demo(demo::Args),
    Probe(probe::Args),
    BudgetCheck(budget_check::Args),
    Cost(cost::Args),
    Handoff(handoff::Args),
    List(list::Args),
    Log(log::Args),
    Show(show::Args),
    Push(push::Args),
    Pull(pull::Args),
    Set(set::Args),
    Abandon(abandon::Args),
    Adopt(adopt::Args),
    Checkpoint(checkpoint::Args),
    Verify(verify::Args),
    Hooks(hooks::Args),
    #[command(hide = true)]
    Hook(hook::Args),
    Gate(gate::Args),
    Skill(skill::Args),
    Drop(drop::Args),
    Scrub(scrub::Args),
    InstallMan(man::InstallManArgs),
    Completions(man::CompletionsArgs),
}

/// Parses the command line, runs the command and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            // A usage error is still answered in JSON when `--json` was asked for (before any
            // `--`): one object with `error` on stdout, as for every other failure.
            let json = std::env::args_os()
                .skip(1)
                .take_while(|a| a != "--")
                .any(|a| a == "--json");
            // `git pair` alone prints the usage and exits 129, as git does for a usage error.
            return ExitCode::from(Ui::new(json).emit_clap(&err));
        }
    };
    let ui = Ui::new(cli.json);
    let code = match run(&cli, &ui) {
        Ok(report) => ui.emit(&report),
        Err(err) => ui.emit_error(&with_read_only_hint(err, &cli)),
    };
    ExitCode::from(code)
}

/// A write refused by a read-only file system gets the hint saying what to set, where, and
/// this command again.
fn with_read_only_hint(err: CommandError, cli: &Cli) -> CommandError {
    if !err.read_only_fs {
        return err;
    }
    let mut dir = std::env::current_dir().unwrap_or_default();
    for d in &cli.directory {
        dir = dir.join(d);
    }
    let git_dir = gix::discover(&dir)
        .ok()
        .and_then(|repo| std::fs::canonicalize(repo.common_dir()).ok())
        .map_or_else(
            || "/path/to/repo/.git".to_owned(),
            |p| p.display().to_string(),
        );
    let rerun = std::iter::once("git pair".to_owned())
        .chain(
            std::env::args()
                .skip(1)
                .map(|a| crate::render::common::shell_word(&a)),
        )
        .collect::<Vec<_>>()
        .join(" ");
    let hint = error::read_only_hint(&git_dir, &rerun);
    err.with_hint(hint)
}

fn run(cli: &Cli, ui: &Ui) -> Result<Report, CommandError> {
    let ctx = || open(cli);
    match &cli.command {
        Command::Demo(args) => demo::run(args, &|argv| {
            let cli = Cli::try_parse_from(std::iter::once("git pair").chain(argv.iter().copied()))
                .map_err(|e| CommandError::failed(format!("demo: {e}")))?;
            run(&cli, &Ui::capturing())
        }),
        Command::Start(args) => start::run(&ctx()?, ui, args),
        Command::Status(args) => status::run(&ctx()?, args),
        Command::CoderDone(args) => coder_done::run(&ctx()?, args),
        Command::Review(args) => review::run_anywhere(open_anywhere(cli)?, ui, args),
        Command::Diff(args) => diff::run(&ctx()?, args),
        Command::Finish(args) => finish::run(&ctx()?, ui, args),
        Command::PrBody(args) => pr_body::run(&ctx()?, args),
        Command::Probe(args) => probe::run(&ctx()?, args),
        Command::BudgetCheck(args) => budget_check::run(&ctx()?, args),
        Command::Cost(args) => cost::run(&ctx()?, args),
        Command::Handoff(args) => handoff::run(&ctx()?, args),
        Command::List(args) => list::run(&ctx()?, ui, args),
        Command::Log(args) => log::run(&ctx()?, args),
        Command::Show(args) => show::run(&ctx()?, args),
        Command::Push(args) => push::run(&ctx()?, ui, args),
        Command::Pull(args) => pull::run(&ctx()?, ui, args),
        Command::Set(args) => set::run(&ctx()?, args),
        Command::Abandon(args) => abandon::run(&ctx()?, args),
        Command::Adopt(args) => adopt::run(&ctx()?, args),
        Command::Checkpoint(args) => checkpoint::run(&ctx()?, args),
        Command::InstallMan(args) => man::install(args, <Cli as clap::CommandFactory>::command()),
        Command::Completions(args) => {
            man::completions(args, <Cli as clap::CommandFactory>::command())
        }
        Command::Verify(args) => verify::run(&ctx()?, ui, args),
        Command::Hooks(args) => hooks::run(&ctx()?, args),
        Command::Hook(args) => hook::run(&ctx, &cli.directory, args),
        Command::Gate(args) => gate::run(&ctx()?, args),
        Command::Skill(args) => skill::run(&ctx, args),
        Command::Drop(args) => drop::run(&ctx()?, ui, args),
        Command::Scrub(args) => scrub::run(&ctx()?, args),
    }
}

/// [`open`], handing back why no repository opened (a command that also works outside one
/// decides what that means).
fn open_anywhere(cli: &Cli) -> Result<Result<Context, crate::ops::Error>, CommandError> {
    let mut dir = std::env::current_dir()
        .map_err(|e| CommandError::failed(format!("cannot read the current directory: {e}")))?;
    for d in &cli.directory {
        dir = dir.join(d);
    }
    Ok(Context::open(&dir, cli.run.clone()))
}

/// Opens the repository at `-C` (or the current directory) with its configuration.
fn open(cli: &Cli) -> Result<Context, CommandError> {
    let mut dir = std::env::current_dir()
        .map_err(|e| CommandError::failed(format!("cannot read the current directory: {e}")))?;
    for d in &cli.directory {
        dir = dir.join(d);
    }
    Ok(Context::open(&dir, cli.run.clone())?)
}
