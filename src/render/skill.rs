//! The human view of `skill install`: where the skill went for each agent, and whether
//! anything changed.

use std::io::Write;

use crate::model::report::skill::{Agent, FileOutcome, SkillInstalled};

/// `git pair skill install`'s text.
pub fn human(report: &SkillInstalled, out: &mut dyn Write) -> std::io::Result<()> {
    for skill in &report.installed {
        let agent = name(skill.agent);
        let changed = skill
            .files
            .iter()
            .filter(|f| f.outcome != FileOutcome::Unchanged)
            .count();
        let what = if changed == 0 {
            "up to date"
        } else {
            "installed"
        };
        writeln!(
            out,
            "{agent}: skill pair-loop {what} in {}",
            skill.dir.display()
        )?;
    }
    for skip in &report.skipped {
        let agent = name(skip.agent);
        write!(
            out,
            "{agent}: the git-pair plugin is installed (named in {}) and carries the skill as git-pair:pair-loop; no second copy installed (--force installs one anyway)",
            skip.plugin_seen_in.display()
        )?;
        match &skip.earlier_copy {
            Some(dir) => writeln!(
                out,
                "; {agent} lists the copy an earlier install left twice: remove it with rm -r '{}'",
                dir.display()
            )?,
            None => writeln!(out)?,
        }
    }
    Ok(())
}

/// The agent as people call it.
fn name(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude => "Claude Code",
        Agent::Codex => "Codex",
    }
}
