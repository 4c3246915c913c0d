//! `refs/notes/pair`: one note per code commit, logfmt lines, one line per run (SPEC §3).
//!
//! Owns reading a note, adding a line (compare-and-swap on the notes ref, retried), and
//! merging two notes histories by sorted line union per annotated object (git's
//! `cat_sort_uniq`). Trees are written with git's fanout rule through gix's notes plumbing,
//! so `git notes --ref=pair` and `git log --notes=pair` read them. Notes are an index; the
//! run refs stay the source of truth. Nothing here talks to a remote.

use std::collections::{BTreeMap, HashSet};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use gix::note::plumbing::State;

use super::cas::{Swap, Swapped, retry_lost_races};
use super::merge::Integration;
use super::{Error, Repo};

/// The notes ref git pair writes.
pub const NOTES_REF: &str = "refs/notes/pair";

/// One run's line in a note (SPEC §3), logfmt:
/// `pair-run=<id> verdict=APPROVED rounds=2 reviewer=codex cost_usd=0.42 tree=<oid>`, plus
/// `override=true` when the run was finished with `--force`. When some spend has no price,
/// `cost_usd` is only the priced part and `cost_unpriced=<model>,<model>` names the rest
/// (`≥ $0.42, unpriced: …`).
#[derive(Debug, Clone, PartialEq)]
pub struct NoteLine {
    pub run_id: String,
    pub verdict: String,
    pub rounds: u32,
    pub reviewer: String,
    /// `None` when the spend was never measured (the field is left out).
    pub cost_usd: Option<f64>,
    /// Models whose tokens have no price: `cost_usd` is then a lower bound.
    pub cost_unpriced: Vec<String>,
    pub tree: ObjectId,
    pub override_: bool,
}

impl std::fmt::Display for NoteLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pair-run={} verdict={} rounds={} reviewer={}",
            self.run_id, self.verdict, self.rounds, self.reviewer
        )?;
        // A spend never measured is left out rather than written as 0.
        if let Some(cost) = self.cost_usd {
            write!(f, " cost_usd={}", cost + 0.0)?;
        }
        if !self.cost_unpriced.is_empty() {
            write!(f, " cost_unpriced={}", self.cost_unpriced.join(","))?;
        }
        write!(f, " tree={}", self.tree)?;
        if self.override_ {
            f.write_str(" override=true")?;
        }
        Ok(())
    }
}

impl NoteLine {
    /// Parses one line as written by [`NoteLine`]'s `Display`; `None` for any other line
    /// (notes are shared: a line written by someone else is not ours to interpret).
    pub fn parse(line: &str) -> Option<NoteLine> {
        let mut fields = BTreeMap::new();
        for pair in line.split_whitespace() {
            let (key, value) = pair.split_once('=')?;
            fields.insert(key, value);
        }
        Some(NoteLine {
            run_id: (*fields.get("pair-run")?).to_owned(),
            verdict: (*fields.get("verdict")?).to_owned(),
            rounds: fields.get("rounds")?.parse().ok()?,
            reviewer: (*fields.get("reviewer")?).to_owned(),
            cost_usd: fields.get("cost_usd").and_then(|c| c.parse().ok()),
            cost_unpriced: fields
                .get("cost_unpriced")
                .map(|m| {
                    m.split(',')
                        .filter(|m| !m.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            tree: match ObjectId::from_hex(fields.get("tree")?.as_bytes()) {
                Ok(tree) => tree,
                // Not a line of ours (see above): someone else's, left alone.
                Err(_) => return None,
            },
            override_: fields.get("override") == Some(&"true"),
        })
    }
}

/// Normalizes note text the way git's `cat_sort_uniq` combines notes: the non-empty lines,
/// sorted bytewise, duplicates dropped, each ending in a newline.
pub fn normalize(text: &str) -> String {
    let mut lines: Vec<&str> = text.split('\n').filter(|l| !l.is_empty()).collect();
    lines.sort_unstable();
    lines.dedup();
    let mut out = String::with_capacity(text.len() + 1);
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The note on `commit` in `refs/notes/pair`, if any.
pub fn read(repo: &Repo, commit: ObjectId) -> Result<Option<String>, Error> {
    Reader::open(repo)?.get(repo, commit)
}

/// Reads many notes from one `refs/notes/pair` tip, opening the notes tree once.
pub struct Reader {
    state: Option<State>,
}

impl Reader {
    /// Opens the notes as they are now (no notes ref: every lookup finds nothing).
    pub fn open(repo: &Repo) -> Result<Reader, Error> {
        let state = match tip(repo)? {
            Some(tip) => Some(
                State::new(repo.commit_tree(tip)?, &repo.repo)
                    .map_err(Error::git("read the notes tree"))?,
            ),
            None => None,
        };
        Ok(Reader { state })
    }

    /// Whether `refs/notes/pair` exists.
    pub fn exists(&self) -> bool {
        self.state.is_some()
    }

    /// The note on `commit`, if any.
    pub fn get(&mut self, repo: &Repo, commit: ObjectId) -> Result<Option<String>, Error> {
        let Some(state) = self.state.as_mut() else {
            return Ok(None);
        };
        let Some(blob) = state
            .get(&commit, &repo.repo)
            .map_err(Error::git("look up a note"))?
        else {
            return Ok(None);
        };
        Ok(Some(note_text(repo, blob)?))
    }
}

/// Adds `line` to the note on `commit` (creating the note and the ref as needed), keeping
/// the note's lines sorted and unique. Returns `false` when the line was already there.
/// A concurrent writer of the notes ref is never overwritten: the edit is redone on its tip.
pub fn add_line(repo: &Repo, commit: ObjectId, line: &str) -> Result<bool, Error> {
    let line = checked_line(line)?;
    let written = edit_note(repo, commit, |existing| {
        normalize(&format!("{existing}\n{line}\n"))
    })?;
    Ok(written != NoteWrite::Unchanged)
}

/// What writing a run's line did to a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteWrite {
    /// The note had no line for the run: the line was added.
    Added,
    /// The note had another line for the run: it was replaced by this one.
    Replaced,
    /// The note already held exactly this line (and no other for the run).
    Unchanged,
}

/// Sets the run's line in the note on `commit`: every line naming the same `pair-run` is
/// replaced by `line`, so a commit carries at most one line per run however often (and in
/// whichever order) `finish` and the `post-commit` hook write it. Other lines are kept; the
/// note stays sorted and unique. Compare-and-swap on the notes ref, redone after a lost race.
pub fn set_run_line(repo: &Repo, commit: ObjectId, line: &NoteLine) -> Result<NoteWrite, Error> {
    let text = line.to_string();
    let text = checked_line(&text)?;
    let mut replaced = false;
    let written = edit_note(repo, commit, |existing| {
        let mut kept = String::with_capacity(existing.len() + text.len() + 1);
        replaced = false;
        for l in existing.lines() {
            let same_run = NoteLine::parse(l).is_some_and(|other| other.run_id == line.run_id);
            if same_run && l != text {
                replaced = true;
                continue;
            }
            kept.push_str(l);
            kept.push('\n');
        }
        kept.push_str(text);
        kept.push('\n');
        normalize(&kept)
    })?;
    Ok(match written {
        NoteWrite::Unchanged => NoteWrite::Unchanged,
        _ if replaced => NoteWrite::Replaced,
        _ => NoteWrite::Added,
    })
}

fn checked_line(line: &str) -> Result<&str, Error> {
    let line = line.trim();
    if line.is_empty() || !crate::util::is_single_line(line) {
        return Err(Error::BadNoteLine {
            line: line.escape_debug().to_string(),
        });
    }
    Ok(line)
}

/// Rewrites the note on `commit` as `edit(existing text)` (the empty string when there is no
/// note), unless that changes nothing. Retried on a fresh tip after a lost race.
fn edit_note(
    repo: &Repo,
    commit: ObjectId,
    mut edit: impl FnMut(&str) -> String,
) -> Result<NoteWrite, Error> {
    retry_lost_races(
        |_| {
            let parent = tip(repo)?;
            let root = match parent {
                Some(parent) => repo.commit_tree(parent)?,
                None => ObjectId::empty_tree(repo.repo.object_hash()),
            };
            // A fresh state per attempt: it caches the tree it was opened on.
            let mut state =
                State::new(root, &repo.repo).map_err(Error::git("read the notes tree"))?;
            let existing = match state
                .get(&commit, &repo.repo)
                .map_err(Error::git("look up a note"))?
            {
                Some(blob) => note_text(repo, blob)?,
                None => String::new(),
            };
            let text = edit(&existing);
            if text == existing {
                return Ok(NoteWrite::Unchanged);
            }
            let blob = repo.write_blob(text.as_bytes())?;
            let edit = state
                .replace(commit, blob, &repo.repo)
                .map_err(Error::git("write the notes tree"))?;
            let new = repo.write_commit(
                "Notes added by 'git pair'\n",
                edit.tree,
                parent.into_iter().collect(),
            )?;
            move_notes_ref(repo, parent, new)?;
            Ok(NoteWrite::Added)
        },
        || {},
        |attempts| Error::RefContention {
            name: NOTES_REF.into(),
            attempts,
        },
    )
}

/// Whether `line` is the note line of one of `run_ids` (`pair-run=<id> …`).
pub fn is_line_of(line: &str, run_ids: &std::collections::BTreeSet<String>) -> bool {
    line.split_whitespace()
        .filter_map(|field| field.strip_prefix("pair-run="))
        .any(|id| run_ids.contains(id))
}

/// Removes the lines of `run_ids` from every note (a note left empty goes), in one commit
/// on the notes tip; compare-and-swap, redone on a race. Returns how many lines went (0: the
/// ref did not move). Reads every note: called when runs are dropped, not on every pull.
pub fn remove_run_lines(
    repo: &Repo,
    run_ids: &std::collections::BTreeSet<String>,
) -> Result<usize, Error> {
    if run_ids.is_empty() {
        return Ok(0);
    }
    retry_lost_races(
        |_| {
            let Some(parent) = tip(repo)? else {
                return Ok(0);
            };
            let root = repo.commit_tree(parent)?;
            let mut state =
                State::new(root, &repo.repo).map_err(Error::git("read the notes tree"))?;
            let mut removed = 0;
            for (object, blob) in all_notes(repo, root)? {
                let text = note_text(repo, blob)?;
                let kept: Vec<&str> = text
                    .split('\n')
                    .filter(|l| !l.is_empty() && !is_line_of(l, run_ids))
                    .collect();
                let gone = text.split('\n').filter(|l| is_line_of(l, run_ids)).count();
                if gone == 0 {
                    continue;
                }
                removed += gone;
                let note = if kept.is_empty() {
                    None
                } else {
                    Some(repo.write_blob(normalize(&kept.join("\n")).as_bytes())?)
                };
                state
                    .edit(object, note, &repo.repo)
                    .map_err(Error::git("edit a note"))?;
            }
            if removed == 0 {
                return Ok(0);
            }
            let tree = state
                .write(&repo.repo)
                .map_err(Error::git("write the notes tree"))?;
            let new = repo.write_commit(
                "Notes: lines of dropped runs removed by 'git pair'\n",
                tree,
                vec![parent],
            )?;
            move_notes_ref(repo, Some(parent), new)?;
            Ok(removed)
        },
        || {},
        |attempts| Error::RefContention {
            name: NOTES_REF.into(),
            attempts,
        },
    )
}

/// The commit `refs/notes/pair` points to, if it exists.
pub fn tip(repo: &Repo) -> Result<Option<ObjectId>, Error> {
    repo.ref_target(NOTES_REF)
}

/// Integrates another notes commit (typically the remote's) into `refs/notes/pair`: create,
/// fast-forward, nothing, or — when the two diverged — a merge commit with both as parents
/// whose notes are the per-object sorted line union. Compare-and-swap, redone on a race.
pub fn integrate(repo: &Repo, other: ObjectId) -> Result<Integration, Error> {
    retry_lost_races(
        |_| {
            let local = tip(repo)?;
            let (integration, new) = match local {
                None => (Integration::Created, other),
                Some(tip) if tip == other => return Ok(Integration::Unchanged),
                Some(tip) if contains(repo, tip, other)? => return Ok(Integration::LocalAhead),
                Some(tip) if contains(repo, other, tip)? => (Integration::FastForwarded, other),
                Some(tip) => (Integration::Merged, merge_tips(repo, tip, other)?),
            };
            move_notes_ref(repo, local, new)?;
            Ok(integration)
        },
        || {},
        |attempts| Error::RefContention {
            name: NOTES_REF.into(),
            attempts,
        },
    )
}

/// The deterministic merge commit of two diverged notes commits (see [`union_tree`]).
pub fn merge_tips(repo: &Repo, a: ObjectId, b: ObjectId) -> Result<ObjectId, Error> {
    let tree = union_tree(repo, [repo.commit_tree(a)?, repo.commit_tree(b)?])?;
    let mut parents = [a, b];
    parents.sort();
    repo.write_deterministic_commit(
        "Notes merged by 'git pair' (cat_sort_uniq)\n",
        tree,
        &parents,
    )
}

/// The union of two notes trees: a note only one side has is kept; a note both sides have
/// with different text becomes the sorted, deduplicated union of its lines. The tree is
/// built from scratch with git's fanout rule, so it depends only on the resulting notes.
pub fn union_tree(repo: &Repo, trees: [ObjectId; 2]) -> Result<ObjectId, Error> {
    let left = all_notes(repo, trees[0])?;
    let mut merged = left.clone();
    for (object, blob) in all_notes(repo, trees[1])? {
        match left.get(&object) {
            None => {
                merged.insert(object, blob);
            }
            Some(mine) if *mine == blob => {}
            Some(mine) => {
                let text = format!("{}\n{}", note_text(repo, *mine)?, note_text(repo, blob)?);
                merged.insert(object, repo.write_blob(normalize(&text).as_bytes())?);
            }
        }
    }
    let empty = ObjectId::empty_tree(repo.repo.object_hash());
    let mut state = State::new(empty, &repo.repo).map_err(Error::git("start a notes tree"))?;
    for (object, blob) in merged {
        state
            .edit(object, Some(blob), &repo.repo)
            .map_err(Error::git("add a note to a merged notes tree"))?;
    }
    state
        .write(&repo.repo)
        .map_err(Error::git("write a merged notes tree"))
}

/// Every (annotated object → note blob) of a notes tree, whatever its fanout.
fn all_notes(repo: &Repo, tree: ObjectId) -> Result<BTreeMap<ObjectId, ObjectId>, Error> {
    let hex_len = repo.repo.object_hash().len_in_hex();
    let mut out = BTreeMap::new();
    let mut stack = vec![(tree, String::new())];
    while let Some((tree, prefix)) = stack.pop() {
        let tree = repo
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a notes tree"))?;
        let decoded = tree.decode().map_err(Error::git("decode a notes tree"))?;
        for entry in &decoded.entries {
            let Ok(name) = entry.filename.to_str() else {
                continue;
            };
            if !name.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            let path = format!("{prefix}{}", name.to_ascii_lowercase());
            if entry.mode.is_tree() && name.len() == 2 && path.len() < hex_len {
                stack.push((entry.oid.to_owned(), path));
            } else if entry.mode.is_blob()
                && path.len() == hex_len
                // Hex of the repository's id length, checked above: this cannot fail, and
                // an entry it failed on would annotate nothing of ours.
                && let Ok(object) = ObjectId::from_hex(path.as_bytes())
            {
                out.insert(object, entry.oid.to_owned());
            }
        }
    }
    Ok(out)
}

/// Whether notes commit `ancestor` is `descendant` or one of its ancestors.
pub fn contains(repo: &Repo, descendant: ObjectId, ancestor: ObjectId) -> Result<bool, Error> {
    let mut seen = HashSet::new();
    let mut queue = vec![descendant];
    while let Some(id) = queue.pop() {
        if id == ancestor {
            return Ok(true);
        }
        if seen.insert(id) {
            queue.extend(repo.commit_parents(id)?);
        }
    }
    Ok(false)
}

fn move_notes_ref(repo: &Repo, expected: Option<ObjectId>, new: ObjectId) -> Result<(), Error> {
    let committer = repo
        .repo
        .committer()
        .expect("a fallback committer is installed at open")
        .map_err(Error::git("read the committer identity"))?;
    let swap = Swap {
        name: NOTES_REF,
        expected,
        new: Some(new),
    };
    match repo.compare_and_swap(&[swap], "git-pair: notes", Some(committer), || {
        format!("update {NOTES_REF}")
    })? {
        Swapped::Done => Ok(()),
        Swapped::Lost => Err(Error::LostRace {
            run_id: NOTES_REF.into(),
        }),
    }
}

/// The largest note read: a note holds one short line per run that approved its commit, so a
/// larger one is not git pair's (a fetched note can be gigabytes that compress to kilobytes).
pub const MAX_NOTE_BYTES: u64 = 4 << 20;

/// The text of a note blob; one over [`MAX_NOTE_BYTES`] reads as empty, unread (notes are
/// hints `verify` confirms against the records, so a dropped one approves nothing).
fn note_text(repo: &Repo, blob: ObjectId) -> Result<String, Error> {
    Ok(match repo.blob_within(blob, MAX_NOTE_BYTES)? {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_sorts_dedups_and_drops_empty_lines_like_cat_sort_uniq() {
        let cases = [
            ("", ""),
            ("\n\n", ""),
            ("b\na\n", "a\nb\n"),
            ("a\na\n", "a\n"),
            ("b\n\na", "a\nb\n"),
            ("x=1 y=2\nx=1 y=2\n", "x=1 y=2\n"),
            (
                "pair-run=2 verdict=APPROVED\npair-run=1 verdict=APPROVED\n",
                "pair-run=1 verdict=APPROVED\npair-run=2 verdict=APPROVED\n",
            ),
            // Bytewise order, as git's strcmp: upper case before lower case.
            ("b\nB\na\n", "B\na\nb\n"),
        ];
        for (input, want) in cases {
            assert_eq!(normalize(input), want, "{input:?}");
        }
    }

    #[test]
    fn lines_of_a_run_are_told_by_their_pair_run_field() {
        let ids: std::collections::BTreeSet<String> = ["20261129-231500-a1b2c3".to_owned()].into();
        assert!(is_line_of(
            "pair-run=20261129-231500-a1b2c3 verdict=APPROVED rounds=2",
            &ids
        ));
        assert!(!is_line_of(
            "pair-run=20261129-231500-a1b2c4 verdict=APPROVED",
            &ids
        ));
        assert!(!is_line_of("someone else's line", &ids));
        assert!(!is_line_of("xpair-run=20261129-231500-a1b2c3", &ids));
    }

    #[test]
    fn an_unpriced_spend_is_written_as_a_lower_bound_and_read_back() {
        let tree = ObjectId::from_hex(b"4b825dc642cb6eb9a060e54bf8d69288fbee4904").expect("oid");
        let line = NoteLine {
            run_id: "20261129-231500-a1b2c3".to_owned(),
            verdict: "APPROVED".to_owned(),
            rounds: 1,
            reviewer: "claude".to_owned(),
            cost_usd: Some(-0.0),
            cost_unpriced: vec!["claude-opus-9".to_owned(), "gpt-7".to_owned()],
            tree,
            override_: false,
        };
        let text = line.to_string();
        assert!(
            text.contains(" cost_usd=0 cost_unpriced=claude-opus-9,gpt-7 "),
            "{text}"
        );
        assert!(!text.contains("-0"), "{text}");
        let back = NoteLine::parse(&text).expect("ours");
        assert_eq!(back.cost_unpriced, line.cost_unpriced);
        assert_eq!(back.cost_usd, Some(0.0));
        let priced = NoteLine {
            cost_usd: Some(0.42),
            cost_unpriced: Vec::new(),
            ..line
        };
        assert!(!priced.to_string().contains("cost_unpriced"));
    }

    #[test]
    fn a_runs_line_is_replaced_never_duplicated() {
        let dir = tempfile::tempdir().expect("temp dir");
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .expect("git init");
        assert!(status.success());
        let repo = Repo::open_isolated(dir.path()).expect("open");
        let target = repo.write_blob(b"annotated\n").expect("blob");
        let line = |run: &str, rounds: u32| NoteLine {
            run_id: run.to_owned(),
            verdict: "APPROVED".to_owned(),
            rounds,
            reviewer: "codex".to_owned(),
            cost_usd: Some(0.5),
            cost_unpriced: Vec::new(),
            tree: target,
            override_: false,
        };
        let other = "someone-else=1";
        assert!(add_line(&repo, target, other).expect("add"));
        assert_eq!(
            set_run_line(&repo, target, &line("r1", 1)).expect("set"),
            NoteWrite::Added
        );
        assert_eq!(
            set_run_line(&repo, target, &line("r1", 1)).expect("again"),
            NoteWrite::Unchanged
        );
        assert_eq!(
            set_run_line(&repo, target, &line("r1", 2)).expect("replace"),
            NoteWrite::Replaced
        );
        assert_eq!(
            set_run_line(&repo, target, &line("r2", 1)).expect("second run"),
            NoteWrite::Added
        );
        let note = read(&repo, target).expect("read").expect("note");
        assert_eq!(
            note,
            format!("{}\n{}\n{other}\n", line("r1", 2), line("r2", 1))
        );
    }
}
