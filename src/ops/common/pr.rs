//! The PR of a run: its body rendered from stored records (SPEC §11) into `.git/pair/pr/`,
//! its number recorded once, and opening it with `gh` (the one place that runs `gh`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::model::report::pr_body::PrBody;
use crate::model::{Body, Refusal, RunId};
use crate::ops::{Context, Error};
use crate::store::Append;

/// The PR body of a run, from its stored records and its spend as measured now.
pub fn render_body(ctx: &Context, run_id: &RunId) -> Result<String, Error> {
    let state = ctx.load(run_id)?;
    let records = ctx.repo.records(&state)?;
    let (spent, unpriced) = match ctx.spend_sources() {
        Ok(sources) => {
            let spend = crate::cost::spend::measure(&state.manifest, &sources);
            (spend.usd(), spend.unknown_models)
        }
        Err(_) => {
            let (usd, unpriced) = crate::cost::spend::stored(&state.manifest, None);
            ((usd > 0.0).then_some(usd), unpriced)
        }
    };
    Ok(crate::render::pr_body::render(&records, spent, &unpriced))
}

/// `pr-body`: the newest run's PR body, or with `update` the description in that file
/// with its generated part replaced (the file rewritten).
pub fn pr_body(ctx: &Context, update: Option<&Path>) -> Result<PrBody, Error> {
    let run_id = crate::ops::common::select::latest(ctx, None)?;
    Ok(match update {
        None => PrBody {
            body: render_body(ctx, &run_id)?,
            run_id,
            path: None,
        },
        Some(path) => PrBody {
            body: update_description(ctx, &run_id, path)?,
            run_id,
            path: Some(path.display().to_string()),
        },
    })
}

/// Where the PR body of `run_id` is rendered: `.git/pair/pr/<run>.md`.
pub fn body_path(ctx: &Context, run_id: &RunId) -> PathBuf {
    ctx.repo.pair_dir().join("pr").join(format!("{run_id}.md"))
}

/// Renders the PR body into `.git/pair/pr/<run>.md` (never into the work tree).
pub fn write_body(ctx: &Context, run_id: &RunId) -> Result<PathBuf, Error> {
    let body = render_body(ctx, run_id)?;
    let path = body_path(ctx, run_id);
    crate::ops::common::view::write_atomically(&path, body.as_bytes())?;
    Ok(path)
}

/// Replaces the generated part of the description in `path` (or appends it), keeping the
/// user's own text; returns the new description.
pub fn update_description(ctx: &Context, run_id: &RunId, path: &Path) -> Result<String, Error> {
    let body = render_body(ctx, run_id)?;
    let existing = std::fs::read_to_string(path).map_err(|source| Error::ReadFile {
        what: "description file",
        path: path.display().to_string(),
        source,
    })?;
    let updated = crate::render::pr_body::update(&existing, &body);
    crate::ops::common::view::write_atomically(path, updated.as_bytes())?;
    Ok(updated)
}

/// Records `number` as the run's PR, once; a different number on a run that has one is
/// refused (a run never gets a second PR).
pub fn record_number(ctx: &Context, run_id: &RunId, number: u64) -> Result<(), Error> {
    record_pr(ctx, run_id, number, false)
}

/// [`record_number`]; with `final_round`, the PR gets its final review before the run is
/// finished (`pair.prFinalRound`).
pub fn record_pr(
    ctx: &Context,
    run_id: &RunId,
    number: u64,
    final_round: bool,
) -> Result<(), Error> {
    let second = |n: u64| Refusal::SecondPr {
        run_id: run_id.to_string(),
        number: n,
    };
    match ctx.load(run_id)?.manifest.pr {
        Some(n) if n == number => return Ok(()),
        Some(n) => return Err(second(n).into()),
        None => {}
    }
    ctx.repo.append(run_id, |s| {
        if let Some(n) = s.manifest.pr.filter(|n| *n != number) {
            return Err(second(n));
        }
        Ok(Append::record(
            Body::Pr {
                number,
                final_round,
            },
            format!("pr: #{number}"),
        ))
    })?;
    Ok(())
}

/// Opens the PR with `gh pr create --body-file`; returns its number when gh printed the URL.
pub fn open(
    ctx: &Context,
    run_id: &RunId,
    body: &Path,
    progress: &dyn Fn(&str),
) -> Result<Option<u64>, Error> {
    let m = ctx.load(run_id)?.manifest;
    let title = crate::util::first_line_clipped(&m.task, 70);
    progress("opening the PR with gh…");
    let out = crate::process::run_tool(
        "gh",
        &[
            "pr",
            "create",
            "--title",
            &title,
            "--body-file",
            &body.display().to_string(),
        ],
        ctx.repo.work_dir()?,
        Duration::from_secs(120),
    )
    .map_err(|source| Error::Gh {
        body: body.display().to_string(),
        source,
    })?;
    // gh prints the new PR's URL: …/pull/<n>
    Ok(out
        .lines()
        .filter_map(|l| l.trim().rsplit_once("/pull/"))
        .find_map(|(_, n)| n.trim_end_matches('/').parse().ok()))
}

/// A pull request as `gh pr view --json` describes it: what its final review reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrView {
    pub head_ref: String,
    pub base_ref: String,
    pub head: gix::ObjectId,
    pub base: gix::ObjectId,
    /// git pair's own earlier comment on it (by its marker, written by this gh user): its
    /// REST id, to update rather than add another.
    pub own_comment: Option<u64>,
}

/// The fields `review --pr` asks `gh pr view` for.
pub const VIEW_FIELDS: &str = "baseRefName,headRefName,headRefOid,baseRefOid,comments";

/// Reads `gh pr view --json` output (untrusted): both commit ids full hex, both branch
/// names plain, and the newest comment this gh user wrote that starts with `marker`.
pub fn parse_view(json: &str, marker: &str) -> Result<PrView, String> {
    /// The fields read, each once: a key given twice makes the answer invalid, as for a
    /// reviewer's JSON (which of the two would be believed?).
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct View {
        head_ref_name: String,
        base_ref_name: String,
        head_ref_oid: String,
        base_ref_oid: String,
        #[serde(default)]
        comments: Vec<serde_json::Value>,
    }
    let v: View = serde_json::from_str(json.trim()).map_err(|e| format!("not its JSON: {e}"))?;
    let id = |key: &str, hex: &str| -> Result<gix::ObjectId, String> {
        if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("{key} is not a commit id"));
        }
        gix::ObjectId::from_hex(hex.as_bytes()).map_err(|e| format!("{key}: {e}"))
    };
    let branch = |key: &str, name: String| -> Result<String, String> {
        let plain = !name.is_empty()
            && name.len() <= 255
            && !name.starts_with('-')
            && !name.chars().any(|c| c.is_control() || c.is_whitespace());
        if plain {
            Ok(name)
        } else {
            Err(format!("{key} is not a branch name"))
        }
    };
    let own_comment = v
        .comments
        .iter()
        .filter(|c| {
            c.get("viewerDidAuthor")
                .and_then(serde_json::Value::as_bool)
                == Some(true)
        })
        .filter(|c| {
            c.get("body")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|b| b.starts_with(marker))
        })
        .filter_map(|c| comment_id(c.get("url")?.as_str()?))
        .next_back();
    Ok(PrView {
        head: id("headRefOid", &v.head_ref_oid)?,
        base: id("baseRefOid", &v.base_ref_oid)?,
        head_ref: branch("headRefName", v.head_ref_name)?,
        base_ref: branch("baseRefName", v.base_ref_name)?,
        own_comment,
    })
}

/// The REST id of an issue comment from its URL (`…/pull/7#issuecomment-123`).
fn comment_id(url: &str) -> Option<u64> {
    let (_, id) = url.rsplit_once("#issuecomment-")?;
    id.parse().ok().filter(|n| *n > 0)
}

/// `gh pr view <number> --json …`, read.
pub fn view(ctx: &Context, number: u64, marker: &str) -> Result<PrView, Error> {
    let n = number.to_string();
    let out = crate::process::run_tool(
        "gh",
        &["pr", "view", &n, "--json", VIEW_FIELDS],
        ctx.repo.work_dir()?,
        Duration::from_secs(120),
    )
    .map_err(|source| Error::GhPr {
        number,
        what: "gh pr view",
        detail: source.to_string(),
    })?;
    parse_view(&out, marker).map_err(|detail| Error::GhPr {
        number,
        what: "gh pr view",
        detail,
    })
}

/// Whether `comment` posted a new comment or updated git pair's own earlier one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commented {
    Posted,
    Updated,
}

impl Commented {
    pub fn as_str(self) -> &'static str {
        match self {
            Commented::Posted => "posted",
            Commented::Updated => "updated",
        }
    }
}

/// Puts `body` on PR `number` as one comment: git pair's own earlier comment (`existing`) is
/// updated in place (`gh api -X PATCH`), else a new one is added (`gh pr comment`).
pub fn comment(
    ctx: &Context,
    number: u64,
    existing: Option<u64>,
    body: &Path,
) -> Result<Commented, Error> {
    let dir = ctx.repo.work_dir()?;
    let failed = |what: &'static str| {
        move |source: crate::process::ToolError| Error::GhPr {
            number,
            what,
            detail: source.to_string(),
        }
    };
    let file = body.display().to_string();
    match existing {
        Some(id) => {
            let endpoint = format!("repos/{{owner}}/{{repo}}/issues/comments/{id}");
            let field = format!("body=@{file}");
            crate::process::run_tool(
                "gh",
                &["api", "--method", "PATCH", &endpoint, "-F", &field],
                dir,
                Duration::from_secs(120),
            )
            .map_err(failed("gh api (update the comment)"))?;
            Ok(Commented::Updated)
        }
        None => {
            let n = number.to_string();
            crate::process::run_tool(
                "gh",
                &["pr", "comment", &n, "--body-file", &file],
                dir,
                Duration::from_secs(120),
            )
            .map_err(failed("gh pr comment"))?;
            Ok(Commented::Posted)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: &str = "<!-- git-pair:pr-review -->";

    fn view_json(comments: &str) -> String {
        format!(
            r#"{{"baseRefName":"main","headRefName":"feature/x","headRefOid":"{}","baseRefOid":"{}","comments":{comments}}}"#,
            "a".repeat(40),
            "b".repeat(40)
        )
    }

    #[test]
    fn a_view_gives_ids_branches_and_our_own_newest_comment() {
        let comments = format!(
            r#"[{{"body":"{MARKER}\nold","viewerDidAuthor":true,"url":"https://github.com/o/r/pull/7#issuecomment-11"}},
               {{"body":"{MARKER}\nforged","viewerDidAuthor":false,"url":"https://github.com/o/r/pull/7#issuecomment-12"}},
               {{"body":"quoting {MARKER}","viewerDidAuthor":true,"url":"https://github.com/o/r/pull/7#issuecomment-13"}},
               {{"body":"{MARKER}\nnew","viewerDidAuthor":true,"url":"https://github.com/o/r/pull/7#issuecomment-14"}}]"#
        );
        let v = parse_view(&view_json(&comments), MARKER).expect("parses");
        assert_eq!(v.head_ref, "feature/x");
        assert_eq!(v.base.to_string(), "b".repeat(40));
        assert_eq!(v.own_comment, Some(14));
        assert_eq!(
            parse_view(&view_json("[]"), MARKER)
                .expect("parses")
                .own_comment,
            None
        );
    }

    #[test]
    fn a_hostile_view_is_refused() {
        let bad_id = view_json("[]").replace(&"a".repeat(40), "HEAD~1");
        assert!(parse_view(&bad_id, MARKER).is_err());
        let option = view_json("[]").replace("feature/x", "--upload-pack=evil");
        assert!(parse_view(&option, MARKER).is_err());
        assert!(parse_view("not json", MARKER).is_err());
        assert!(parse_view("{}", MARKER).is_err());
        let twice =
            view_json("[]").replacen('{', &format!(r#"{{"headRefOid":"{}","#, "c".repeat(40)), 1);
        assert!(parse_view(&twice, MARKER).is_err(), "a key given twice");
        let comments_not_a_list = view_json("{}");
        assert!(parse_view(&comments_not_a_list, MARKER).is_err());
    }
}
