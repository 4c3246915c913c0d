//! The human view of `skill install`: where the skill went for each agent, and whether
//! anything changed.

use std::io::Write;

use crate::model::report::skill::{Agent, FileOutcome, SkillInstalled};

/// `git pair skill install`'s text.
pub fn human(report: &SkillInstalled, out: &mut dyn Write) -> std::io::Result<()> {
    for skill in &report.installed {
        let agent = match skill.agent {
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex",
        };
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
    Ok(())
}
