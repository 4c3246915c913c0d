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

/// The render cache of one run: the transcript text and, beside it, which tip it is of and
/// how long it is. A mismatch (a writer killed mid-append) means "render again".
struct Cache {
    text: PathBuf,
    meta: PathBuf,
}

impl Cache {
    fn of(repo: &Repo, run_id: &RunId) -> Cache {
        let dir = repo.pair_dir().join("cache").join("handoff");
        Cache {
            text: dir.join(format!("{run_id}.md")),
            meta: dir.join(format!("{run_id}.tip")),
        }
    }

    /// The tip and length the cache claims, when its text file has that length.
    fn state(&self) -> Option<(ObjectId, u64)> {
        let meta = std::fs::read_to_string(&self.meta).ok()?;
        let (tip, len) = meta.trim().split_once(' ')?;
        let tip = match ObjectId::from_hex(tip.as_bytes()) {
            Ok(tip) => tip,
            // Not what `set_meta` writes (a torn or foreign file): the cache is a miss and the
            // view is rendered whole again, never trusted.
            Err(_) => return None,
        };
        let len: u64 = len.parse().ok()?;
        (file_len(&self.text) == Some(len)).then_some((tip, len))
    }

    fn read(&self) -> Option<(ObjectId, String)> {
        let (tip, _) = self.state()?;
        let text = std::fs::read_to_string(&self.text).ok()?;
        Some((tip, text))
    }

    fn set_meta(&self, repo: &Repo, tip: ObjectId, len: u64) -> Result<(), Error> {
        write_atomically_via(
            &repo.pair_dir().join("tmp"),
            &self.meta,
            format!("{tip} {len}\n").as_bytes(),
        )
    }

    fn write_whole(&self, repo: &Repo, tip: ObjectId, text: &str) -> Result<(), Error> {
        // Meta first: a crash in between leaves a length mismatch, never a wrong match.
        let _ = std::fs::remove_file(&self.meta);
        write_atomically_via(&repo.pair_dir().join("tmp"), &self.text, text.as_bytes())?;
        self.set_meta(repo, tip, text.len() as u64)
    }
}

fn file_len(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

/// Whether the transcript at `path` starts with `header` (reads only that far).
fn header_is(path: &Path, header: &str) -> bool {
    use std::io::Read as _;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(header.len());
    file.take(header.len() as u64)
        .read_to_end(&mut head)
        .is_ok_and(|_| head == header.as_bytes())
}

fn append(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(Error::io("open for appending", path))?;
    file.write_all(bytes).map_err(Error::io("append to", path))
}

/// Brings `HANDOFF.md` at `path` up to the run's current tip. Runs under the run's writer
/// lock, so the tip cannot move meanwhile and concurrent refreshes cannot interleave. When
/// the file and the cache hold the previous tip's text, only the new sections are appended
/// (O(new records), not O(run)); otherwise the whole transcript is rendered and replaced
/// atomically.
pub fn refresh_handoff(repo: &Repo, run_id: &RunId, path: &Path) -> Result<(), Error> {
    let _writer = repo.lock_run(run_id)?;
    let Some(tip) = repo.run_tip(run_id)? else {
        return Err(Error::UnknownRun {
            run_id: run_id.to_string(),
        });
    };
    let cache = Cache::of(repo, run_id);
    let scratch = repo.pair_dir().join("tmp");
    if let Some((cached_tip, len)) = cache.state() {
        let view_matches = file_len(path) == Some(len);
        if cached_tip == tip && view_matches {
            return Ok(());
        }
        if cached_tip != tip {
            if let Some((sections, tip_manifest)) = incremental(repo, run_id, cached_tip, tip)? {
                if !header_is(&cache.text, &handoff::header(&tip_manifest)) {
                    // The header changed (a `set`, a review naming who ran): the cached text
                    // with the new header, written whole.
                    let old = std::fs::read_to_string(&cache.text)
                        .map_err(Error::io("read", &cache.text))?;
                    let text = handoff::with_header(&tip_manifest, &old, &sections);
                    cache.write_whole(repo, tip, &text)?;
                    return write_atomically_via(&scratch, path, text.as_bytes());
                }
                append(&cache.text, sections.as_bytes())?;
                let new_len = len + sections.len() as u64;
                if view_matches {
                    append(path, sections.as_bytes())?;
                } else {
                    let text =
                        std::fs::read(&cache.text).map_err(Error::io("read", &cache.text))?;
                    write_atomically_via(&scratch, path, &text)?;
                }
                return cache.set_meta(repo, tip, new_len);
            }
        } else {
            let text = std::fs::read(&cache.text).map_err(Error::io("read", &cache.text))?;
            return write_atomically_via(&scratch, path, &text);
        }
    }
    let text = render_full(repo, run_id, tip)?;
    cache.write_whole(repo, tip, &text)?;
    write_atomically_via(&scratch, path, text.as_bytes())
}

/// Removes what was rendered for `run_id` (a dropped run): its render cache, and the
/// HANDOFF view when the view shows that run. Returns the files removed.
pub fn forget(repo: &Repo, run_id: &RunId) -> Result<Vec<PathBuf>, Error> {
    let cache = Cache::of(repo, run_id);
    let mut removed = Vec::new();
    for path in [cache.text, cache.meta] {
        if std::fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    let mut views = vec![repo.pair_dir().join(HANDOFF_FILE)];
    if let Ok(dir) = repo.work_dir()
        && !repo.is_tracked(HANDOFF_FILE)?
    {
        views.push(dir.join(HANDOFF_FILE));
    }
    let mark = [VIEW_MARK, run_id.as_str().as_bytes()].concat();
    for path in views {
        let shows_run = std::fs::read(&path)
            .is_ok_and(|text| text.starts_with(&mark) && text.get(mark.len()) == Some(&b'\n'));
        if shows_run {
            std::fs::remove_file(&path).map_err(Error::io("remove", &path))?;
            removed.push(path);
        }
    }
    Ok(removed)
}

/// The transcript of `run_id` as of commit `tip`, from the render cache when it is current.
pub fn transcript_at(repo: &Repo, run_id: &RunId, tip: ObjectId) -> Result<String, Error> {
    let cache = Cache::of(repo, run_id);
    match cache.read() {
        Some((cached_tip, text)) if cached_tip == tip => Ok(text),
        Some((cached_tip, text)) => match incremental(repo, run_id, cached_tip, tip)? {
            // The header follows the projection (a `set`, a review naming who ran): it is
            // rendered again from the tip's.
            Some((sections, tip_manifest)) => {
                Ok(handoff::with_header(&tip_manifest, &text, &sections))
            }
            None => render_full(repo, run_id, tip),
        },
        None => render_full(repo, run_id, tip),
    }
}

fn render_full(repo: &Repo, run_id: &RunId, tip: ObjectId) -> Result<String, Error> {
    let state = repo.load_at(run_id, tip)?;
    Ok(handoff::render(&repo.records(&state)?))
}

/// The sections added between `from` and `to`, and the projection at `to`, when `to`
/// descends from `from` through single-parent run commits; None when it does not (a merge,
/// another run, too far).
fn incremental(
    repo: &Repo,
    run_id: &RunId,
    from: ObjectId,
    to: ObjectId,
) -> Result<Option<(String, crate::model::Manifest)>, Error> {
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
    let mut text = String::new();
    let mut tip_manifest = None;
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
        tip_manifest = Some(state.manifest);
    }
    Ok(tip_manifest.map(|m| (text, m)))
}

fn trailers<'a>(message: &'a str, key: &str) -> Vec<&'a str> {
    message
        .lines()
        .filter_map(|line| line.strip_prefix(key)?.strip_prefix(": "))
        .map(str::trim)
        .collect()
}

/// Writes `bytes` to `path` through a temporary file and a rename (see
/// [`crate::util::fs::write_atomically_via`]), mode 0644.
pub fn write_atomically_via(scratch: &Path, path: &Path, bytes: &[u8]) -> Result<(), Error> {
    crate::util::fs::write_atomically_via(scratch, path, bytes)
        .map_err(|(action, at, e)| Error::io(action, &at)(e))
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

/// Where the HANDOFF view goes: `HANDOFF.md` at the work tree's root when git pair owns that
/// path (nothing is there, or a view it wrote), else `.git/pair/HANDOFF.md` — a user's file,
/// tracked or not, is never overwritten (SPEC §3).
pub fn handoff_path(repo: &Repo) -> Result<PathBuf, Error> {
    let in_tree = repo.work_dir()?.join(HANDOFF_FILE);
    if owns_work_tree_view(repo, &in_tree)? {
        Ok(in_tree)
    } else {
        Ok(repo.pair_dir().join(HANDOFF_FILE))
    }
}

/// The first line of every view git pair writes (see [`handoff::header`]).
const VIEW_MARK: &[u8] = "# Pair-Loop Handoff — ".as_bytes();

fn owns_work_tree_view(repo: &Repo, path: &Path) -> Result<bool, Error> {
    if repo.is_tracked(HANDOFF_FILE)? {
        return Ok(false);
    }
    let mut head = [0u8; 64];
    match std::fs::File::open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(Error::io("open", path)(e)),
        Ok(mut file) => {
            let mut read = 0;
            while read < VIEW_MARK.len() {
                match std::io::Read::read(&mut file, &mut head[read..]) {
                    Ok(0) => break,
                    Ok(n) => read += n,
                    Err(e) => return Err(Error::io("read", path)(e)),
                }
            }
            Ok(head[..read].starts_with(VIEW_MARK))
        }
    }
}

/// The transcript of a run at its current tip.
pub fn transcript(repo: &Repo, run_id: &RunId) -> Result<String, Error> {
    let tip = repo.run_tip(run_id)?.ok_or_else(|| Error::UnknownRun {
        run_id: run_id.to_string(),
    })?;
    transcript_at(repo, run_id, tip)
}
