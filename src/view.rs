//! Rendered views kept in step with the store: `HANDOFF.md` in the work tree (with an
//! append-only cache under `.git/pair/cache/`), and the `.git/info/exclude` line that keeps
//! it from ever showing as untracked.
//!
//! Views are rebuildable from refs at any time; losing one loses nothing.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use gix::ObjectId;

use crate::model::RunId;
use crate::render::handoff;
use crate::store::{Error, Repo};

/// The file name of the transcript in the work tree.
pub const HANDOFF_FILE: &str = "HANDOFF.md";
/// How many new commits an incremental render walks before falling back to a full one.
const MAX_INCREMENTAL_STEPS: usize = 256;
/// How often the writer re-renders because the run moved while it was writing.
const MAX_REFRESHES: usize = 64;

/// Re-renders `HANDOFF.md` for `run_id` and writes it to `path`, repeating until the file
/// reflects the run's current tip (another writer may move it meanwhile: the last writer
/// to finish always leaves the newest state on disk).
pub fn refresh_handoff(repo: &Repo, run_id: &RunId, path: &Path) -> Result<(), Error> {
    for _ in 0..MAX_REFRESHES {
        let Some(tip) = repo.run_tip(run_id)? else {
            return Err(Error::UnknownRun {
                run_id: run_id.to_string(),
            });
        };
        let text = transcript_at(repo, run_id, tip)?;
        write_atomically_via(&repo.pair_dir().join("tmp"), path, text.as_bytes())?;
        if repo.run_tip(run_id)? == Some(tip) {
            return Ok(());
        }
    }
    Ok(())
}

/// The transcript of `run_id` as of commit `tip`, using and updating the render cache.
pub fn transcript_at(repo: &Repo, run_id: &RunId, tip: ObjectId) -> Result<String, Error> {
    let cache_path = cache_path(repo, run_id);
    let cached = read_cache(&cache_path);
    if let Some((_, text)) = cached.as_ref().filter(|(cached_tip, _)| *cached_tip == tip) {
        return Ok(text.clone());
    }
    let text = match cached
        .and_then(|(cached_tip, text)| incremental(repo, run_id, cached_tip, tip, text).transpose())
    {
        Some(result) => result?,
        None => {
            let state = repo.load_at(run_id, tip)?;
            handoff::render(&repo.records(&state)?)
        }
    };
    // The cache is an optimisation: failing to write it must not fail the command.
    let _ = write_cache(&cache_path, tip, &text);
    Ok(text)
}

/// Extends `text` (the transcript at `from`) to `to` when `to` descends from `from` through
/// single-parent run commits that each added one record; None when it does not.
fn incremental(
    repo: &Repo,
    run_id: &RunId,
    from: ObjectId,
    to: ObjectId,
    mut text: String,
) -> Result<Option<String>, Error> {
    let mut chain = Vec::new();
    let mut at = to;
    while at != from {
        if chain.len() >= MAX_INCREMENTAL_STEPS {
            return Ok(None);
        }
        let parents = repo.commit_parents(at)?;
        let message = repo.commit_message_raw(at)?;
        let record_names = trailers(&message, "Pair-Record");
        if record_names.is_empty()
            || parents.len() != 1
            || trailers(&message, "Pair-Run") != [run_id.as_str()]
        {
            return Ok(None);
        }
        chain.push((
            at,
            record_names
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>(),
        ));
        at = parents[0];
    }
    for (commit, record_names) in chain.into_iter().rev() {
        let state = repo.load_at(run_id, commit)?;
        let mut records = Vec::new();
        for name in &record_names {
            let Some(record) = repo.record_named(run_id, state.tree, name)? else {
                return Ok(None);
            };
            records.push(record);
        }
        // Sections depend on the projection right after their record: replay the commit's
        // records on the parent's manifest.
        let mut manifest = match repo.commit_parents(commit)?.first() {
            Some(&parent) if records.len() > 1 => repo.load_at(run_id, parent)?.manifest,
            _ => state.manifest.clone(),
        };
        for record in &records {
            if records.len() > 1 {
                manifest.apply(record);
            }
            text.push_str(&handoff::section(record, &manifest));
        }
    }
    Ok(Some(text))
}

fn trailers<'a>(message: &'a str, key: &str) -> Vec<&'a str> {
    message
        .lines()
        .filter_map(|line| line.strip_prefix(key)?.strip_prefix(": "))
        .map(str::trim)
        .collect()
}

fn cache_path(repo: &Repo, run_id: &RunId) -> PathBuf {
    repo.pair_dir()
        .join("cache")
        .join("handoff")
        .join(format!("{run_id}.md"))
}

fn read_cache(path: &Path) -> Option<(ObjectId, String)> {
    let content = std::fs::read_to_string(path).ok()?;
    let (first, text) = content.split_once('\n')?;
    let tip = ObjectId::from_hex(first.strip_prefix("tip ")?.as_bytes()).ok()?;
    Some((tip, text.to_owned()))
}

fn write_cache(path: &Path, tip: ObjectId, text: &str) -> Result<(), Error> {
    let mut content = format!("tip {tip}\n");
    content.push_str(text);
    write_atomically(path, content.as_bytes())
}

/// Writes `bytes` to `path` through a temporary file and a rename, so readers see the old or
/// the new content, never a torn one. The temporary file is made in `scratch` (under `.git`,
/// so a killed writer never leaves litter in the work tree), or beside `path` when the two
/// are on different file systems.
pub fn write_atomically_via(scratch: &Path, path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(Error::io("create directory", dir))?;
    let _ = std::fs::create_dir_all(scratch);
    let temp_in = |at: &Path| -> Result<tempfile::NamedTempFile, Error> {
        let mut file = tempfile::Builder::new()
            .prefix(".git-pair-")
            .suffix(".tmp")
            .tempfile_in(at)
            .map_err(Error::io("create a temporary file in", at))?;
        file.write_all(bytes)
            .map_err(Error::io("write", file.path()))?;
        Ok(file)
    };
    let file = temp_in(scratch).or_else(|_| temp_in(dir))?;
    match file.persist(path) {
        Ok(_) => Ok(()),
        Err(e) if e.error.raw_os_error() == Some(18) => {
            // EXDEV: scratch is on another file system; write beside the target instead.
            temp_in(dir)?
                .persist(path)
                .map(|_| ())
                .map_err(|e| Error::io("replace", path)(e.error))
        }
        Err(e) => Err(Error::io("replace", path)(e.error)),
    }
}

/// [`write_atomically_via`] with the temporary file beside `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    write_atomically_via(dir, path, bytes)
}

/// Adds `HANDOFF.md` to `.git/info/exclude` unless a line already names it.
pub fn ensure_excluded(repo: &Repo) -> Result<(), Error> {
    let path = repo.common_dir().join("info").join("exclude");
    let existing = std::fs::read_to_string(&path).unwrap_or_default();
    let wanted = format!("/{HANDOFF_FILE}");
    if existing
        .lines()
        .any(|l| l.trim() == wanted || l.trim() == HANDOFF_FILE)
    {
        return Ok(());
    }
    let mut content = existing;
    if !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    content.push_str("# git pair: the transcript view is never committed\n");
    content.push_str(&wanted);
    content.push('\n');
    write_atomically(&path, content.as_bytes())
}

/// The handoff path for a repository's work tree.
pub fn handoff_path(repo: &Repo) -> Result<PathBuf, Error> {
    Ok(repo.work_dir()?.join(HANDOFF_FILE))
}

/// The transcript of a run at its current tip.
pub fn transcript(repo: &Repo, run_id: &RunId) -> Result<String, Error> {
    let tip = repo.run_tip(run_id)?.ok_or_else(|| Error::UnknownRun {
        run_id: run_id.to_string(),
    })?;
    transcript_at(repo, run_id, tip)
}
