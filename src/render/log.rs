//! Human view of `log`: one line per coder record and per review, under a header line.

use std::io::Write;

use crate::model::report::log::RunLog;

pub fn human(report: &RunLog, out: &mut dyn Write) -> std::io::Result<()> {
    let spent: Option<f64> = report.spent_usd.as_f64();
    let closed = match (&report.outcome, report.pr) {
        (Some(outcome), Some(pr)) => format!("{outcome} (PR #{pr})"),
        (Some(outcome), None) => outcome.clone(),
        (None, _) => "open".to_owned(),
    };
    writeln!(
        out,
        "run {} on {}: {} · {} · {}",
        report.run_id,
        report.branch,
        report.task,
        closed,
        super::common::spend(spent, &report.unpriced_models, 2)
    )?;
    for round in &report.rounds {
        let mut label = format!("round {}", round.n);
        for coder in &round.coder {
            let addressed = coder
                .findings_addressed
                .map(|n| format!(" · addressed {n}"))
                .unwrap_or_default();
            writeln!(
                out,
                "{label:<9} coder  {:<9} {}{addressed}",
                coder.tool,
                short(&coder.summary)
            )?;
            label.clear();
        }
        for review in &round.reviews {
            let said = review.verdict.as_deref().unwrap_or(&review.outcome);
            let findings = if review.findings == 0 {
                String::new()
            } else {
                let kinds: Vec<String> = review
                    .by_severity
                    .iter()
                    .map(|(severity, n)| format!("{n} {severity}"))
                    .collect();
                format!(
                    " · {} finding{} ({})",
                    review.findings,
                    if review.findings == 1 { "" } else { "s" },
                    kinds.join(", ")
                )
            };
            let partial = if review.partial { " · partial" } else { "" };
            let what = review
                .pr
                .map_or_else(|| "review".to_owned(), |n| format!("PR #{n} final review:"));
            writeln!(
                out,
                "{label:<9} {what} {:<9} {said}{findings}{partial}",
                review.tool
            )?;
            label.clear();
        }
    }
    writeln!(out, "next: {}", report.next_action)
}

/// `text` cut to one short line.
fn short(text: &str) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        return format!("\"{text}\"");
    }
    let cut: String = text.chars().take(MAX - 1).collect();
    format!("\"{cut}…\"")
}
