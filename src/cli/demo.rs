//! `git pair demo`: a whole loop in a throwaway repository with the built-in reviewer.

use super::{CommandError, Report};
use crate::model::report::demo::{Demo, Step};

/// Run a complete loop in a temporary repository, offline, with the built-in reviewer.
///
/// Creates a repository, starts a run, makes a change with a leftover debug print, records
/// the coder round, has the built-in reviewer request changes, fixes it, gets an approval,
/// finishes, commits the approved work (the review note attaches to that commit, and `verify`
/// proves it reviewed), and prints the PR body and where the state lives. Needs no network and
/// no AI CLI. The repository is removed afterwards; pass --keep to look around in it
/// (`git log refs/pair/runs/<id>`).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep the demo repository and print where it is.
    #[arg(long)]
    pub keep: bool,
}

/// Removes the demo repository when dropped, unless it is to be kept.
struct Scratch {
    dir: std::path::PathBuf,
    keep: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Runs the demo; `command` runs one `git pair` command line (argv without the program).
pub fn run(
    args: &Args,
    command: &dyn Fn(&[&str]) -> Result<Report, CommandError>,
) -> Result<Report, CommandError> {
    let fail = |e: crate::ops::demo::Error| CommandError::failed(format!("demo: {e}"));
    let scratch = Scratch {
        dir: crate::ops::demo::create().map_err(fail)?,
        keep: args.keep,
    };
    let dir = scratch.dir.clone();
    let dir_text = dir.display().to_string();
    let mut steps = Vec::new();
    // Runs one `git pair` command in the demo repository and keeps what it printed.
    let step = |steps: &mut Vec<Step>, args: &[&str]| -> Result<Report, CommandError> {
        let argv: Vec<&str> = ["-C", dir_text.as_str()]
            .into_iter()
            .chain(args.iter().copied())
            .collect();
        let report = command(&argv)?;
        steps.push(Step {
            program: "git pair",
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            output: with_notes(&report),
        });
        Ok(report)
    };
    let started = step(
        &mut steps,
        &[
            "start",
            "--task",
            "Add a greet() function",
            "--reviewer",
            "builtin",
        ],
    )?;
    let run_id = started.json["run_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    crate::ops::demo::write_file(&dir, "src/lib.rs", crate::ops::demo::FIRST_ATTEMPT)
        .map_err(fail)?;
    step(
        &mut steps,
        &["coder-done", "--summary", "Added greet(name)"],
    )?;
    let first = step(&mut steps, &["review"])?;
    crate::ops::demo::write_file(&dir, "src/lib.rs", crate::ops::demo::FIXED).map_err(fail)?;
    crate::ops::demo::write_file(&dir, "tests/greet.rs", crate::ops::demo::TEST).map_err(fail)?;
    // The fix addresses every finding of the first review (the debug print, the missing test).
    let addressed = first.json["findings"]
        .as_array()
        .map_or(0, Vec::len)
        .to_string();
    step(
        &mut steps,
        &[
            "coder-done",
            "--summary",
            "Removed the debug print; added a test",
            "--findings-addressed",
            addressed.as_str(),
        ],
    )?;
    let second = step(&mut steps, &["review"])?;
    let finished = step(&mut steps, &["finish"])?;
    // Commit exactly the approved work, as a coder would next; then `finish` again attaches
    // the review note to that commit, and `verify` proves it reviewed.
    let commit = crate::ops::demo::commit_work_tree(&dir, "Add greet()\n").map_err(fail)?;
    steps.push(Step {
        program: "git add -A && git",
        args: ["commit", "-m", "Add greet()"].map(str::to_owned).to_vec(),
        output: format!("committed {}", &commit.to_string()[..12]),
    });
    step(&mut steps, &["finish"])?;
    step(&mut steps, &["verify", "HEAD~1..HEAD"])?;
    let pr_body_path = finished.json["pr_body_path"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let pr_body = std::fs::read_to_string(&pr_body_path)
        .map_err(|e| CommandError::failed(format!("demo: cannot read the PR body: {e}")))?;
    let verdict = |r: &Report| r.json["verdict"].as_str().map(str::to_owned);
    let demo = Demo {
        repo: dir_text,
        kept: args.keep,
        run_id,
        verdicts: vec![verdict(&first), verdict(&second)],
        pr_body_path,
        steps,
        pr_body,
    };
    Ok(Report::rendered(&demo, crate::render::demo::human))
}

/// What a command printed for people: its text, then its notes (stderr in a real run).
fn with_notes(report: &Report) -> String {
    let mut text = report.human.clone();
    for note in &report.notes {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(note);
        text.push('\n');
    }
    text
}
