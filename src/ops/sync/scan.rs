//! The push scan (SPEC §14): before `push` sends anything, every object it would publish that
//! the remote does not have yet — a run's new commits (messages), records, stored material
//! and reviewed-snapshot files, new notes, tombstones — is scanned for secrets. A finding
//! not allowed refuses the push as a whole. Allowances are `push --allow-secret <kind>:<path>`
//! and `--allow-unscanned <path>` (recorded in the run as an `allow-secret` record, so they
//! stay visible and apply to later pushes of that run) or such records already in the run.
//! Beyond secrets, the guard refuses what the scanner cannot read (binary, over the limit),
//! with no allowance a blob a reviewer flagged `[secret]` (or `scrub` removed here), and,
//! without `--with-base`, project commits a run's chain holds that the remote lacks.
//!
//! Cost is bounded by what is new: the store lists only blobs the new commits add
//! ([`crate::store::OutgoingReader::run_outgoing`]); a blob found clean is not scanned again
//! on a retry. What the remote has beyond its git pair refs is what it advertises
//! (`git ls-remote`, asked once per push that sends a run).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use gix::ObjectId;
use serde::Serialize;

pub use super::findings::{PushFinding, summarize};
use crate::model::{AllowSecret, Allowance, Body, MAX_RECORD_BYTES, RunId};
use crate::ops::Error;
use crate::secrets::{MAX_SCANNED_BLOB, Scanner};
use crate::store::{Append, BlobText, OutgoingReader, Place, Repo};
use crate::sync::{Guarded, Pending, PushReport, Remote, Scope};

/// What the scans of one push covered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScanSummary {
    /// New commits looked at (their messages scanned).
    pub commits: usize,
    /// Blobs scanned.
    pub blobs: usize,
    /// Bytes scanned.
    pub bytes: u64,
    /// Blobs not scanned: binary, or larger than the cap.
    pub skipped: usize,
    /// Findings let through by an allowance, as `kind:path` with the run.
    pub allowed: Vec<PushFinding>,
    /// Allowances recorded now, by run.
    pub recorded: BTreeMap<String, Vec<String>>,
}

/// The kind of a finding for a blob the scanner cannot read because it is binary.
pub const UNSCANNED_BINARY: &str = "unscanned-binary";
/// The kind of a finding for a blob over the scan limit.
pub const UNSCANNED_LARGE: &str = "unscanned-large";
/// The allowance kind `--allow-unscanned <path>` records (`unscanned:<path>`).
pub const UNSCANNED: &str = "unscanned";
/// The kind of a finding for a blob a review of the run flagged `[secret]`: never published.
pub const FLAGGED: &str = "flagged-by-review";
/// The kind of a finding for a commit outside `refs/pair` the remote lacks (a run's base and
/// the history behind it): published only with `--with-base`.
pub const OUTSIDE: &str = "unpublished-history";

/// What the user allowed on the command line.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--allow-secret <kind>:<path>` and `--allow-unscanned <path>` (as `unscanned:<path>`).
    pub allow: Vec<Allowance>,
    /// `--with-base`: publish (and scan) the project history a run's chain holds.
    pub with_base: bool,
}

/// The guard `push` runs before sending: scans, applies allowances, records the new ones.
pub struct Guard<'a> {
    repo: &'a Repo,
    /// Made on the first check: a push with nothing new reads nothing.
    reader: Option<OutgoingReader>,
    scanner: Scanner,
    flags: Flags,
    /// Blobs already found clean (a retry does not scan them again).
    clean: HashSet<ObjectId>,
    /// The remote pushed to (set by [`Guard::push`]), and the commits it advertises, asked
    /// once, when a run first needs them.
    remote: Option<Remote>,
    advertised: Option<Vec<ObjectId>>,
    /// What [`Guard::remote_has`] found, by commit.
    remote_has: HashMap<ObjectId, bool>,
    /// This clone's scrub lists by run, listed on first need.
    scrubbed: Option<HashMap<RunId, ObjectId>>,
    pub summary: ScanSummary,
}

impl<'a> Guard<'a> {
    /// A guard allowing what `flags` (`--allow-secret`) name.
    pub fn new(repo: &'a Repo, scanner: Scanner, flags: Flags) -> Guard<'a> {
        Guard {
            repo,
            reader: None,
            scanner,
            flags,
            clean: HashSet::new(),
            remote: None,
            advertised: None,
            remote_has: HashMap::new(),
            scrubbed: None,
            summary: ScanSummary::default(),
        }
    }

    /// Pushes `scope` to `remote`, this guard checking every plan before it is sent.
    pub fn push(
        &mut self,
        remote: &Remote,
        scope: &Scope,
        keep: crate::sync::Keep<'_>,
    ) -> Result<PushReport, Error> {
        let repo = self.repo;
        self.remote = Some(remote.clone());
        crate::sync::push(repo, remote, scope, keep, &mut |pending| {
            Ok::<_, Error>(if self.check(&remote.name, pending)? {
                Guarded::Replan
            } else {
                Guarded::Proceed
            })
        })
    }

    /// Checks what a push would send. `Ok(true)`: allowances were recorded, plan again;
    /// `Ok(false)`: send it; an error refuses the push.
    pub fn check(&mut self, remote: &str, pending: &[Pending]) -> Result<bool, Error> {
        let findings = self.scan(pending)?;
        if findings.is_empty() {
            return Ok(false);
        }
        let mut blocking = Vec::new();
        let mut to_record: BTreeMap<RunId, BTreeSet<Allowance>> = BTreeMap::new();
        let mut recorded_cache: BTreeMap<RunId, BTreeSet<Allowance>> = BTreeMap::new();
        for f in findings {
            // A blob a review flagged, or history the user did not ask to publish: no
            // allowance, recorded or given, lets it through.
            if f.kind == FLAGGED || f.kind == OUTSIDE {
                blocking.push(f);
                continue;
            }
            let allowance = f.allowance();
            let recorded = match &f.run {
                Some(run) => {
                    if !recorded_cache.contains_key(run) {
                        let allowed = self.recorded_allowances(run)?;
                        recorded_cache.insert(run.clone(), allowed);
                    }
                    recorded_cache[run].contains(&allowance)
                }
                None => false,
            };
            if recorded {
                self.summary.allowed.push(f);
            } else if self.flags.allow.contains(&allowance) {
                if let Some(run) = f.run.clone() {
                    to_record.entry(run).or_default().insert(allowance);
                }
                self.summary.allowed.push(f);
            } else {
                blocking.push(f);
            }
        }
        if !blocking.is_empty() {
            return Err(Error::SecretsInPush {
                remote: remote.to_owned(),
                findings: blocking,
            });
        }
        if to_record.is_empty() {
            return Ok(false);
        }
        for (run_id, allowed) in to_record {
            let allowed: Vec<Allowance> = allowed.into_iter().collect();
            let listed: Vec<String> = allowed.iter().map(ToString::to_string).collect();
            let subject = format!(
                "allow-secret: {} (push --allow-secret)",
                crate::util::first_line_clipped(&listed.join(", "), 200)
            );
            let body = Body::AllowSecret(AllowSecret { allowed });
            self.repo.append(&run_id, |_| {
                Ok(Append::record(body.clone(), subject.clone()))
            })?;
            self.summary.recorded.insert(run_id.to_string(), listed);
        }
        Ok(true)
    }

    /// The allowances already recorded in `run`.
    fn recorded_allowances(&self, run_id: &RunId) -> Result<BTreeSet<Allowance>, Error> {
        let state = self.repo.load(run_id)?;
        Ok(self
            .repo
            .records(&state)?
            .into_iter()
            .filter_map(|r| match r.body {
                Body::AllowSecret(allow) => Some(allow.allowed),
                _ => None,
            })
            .flatten()
            .collect())
    }

    /// Every secret in what `pending` would publish that the remote lacks, in `pending`'s
    /// order. Many runs are scanned on a few threads, a share of `pending` each, every share
    /// by a guard of its own that starts from what this one knows (blobs found clean, the
    /// remote's commits) and hands back what it learnt; a blob two shares hold is scanned by
    /// both, never by neither.
    fn scan(&mut self, pending: &[Pending]) -> Result<Vec<PushFinding>, Error> {
        let runs = pending
            .iter()
            .filter(|p| matches!(p, Pending::Run { .. }))
            .count();
        let threads = crate::store::reader_threads(runs);
        if threads == 1 {
            return self.scan_here(pending);
        }
        // Asked here, once: every run needs them.
        self.advertised()?;
        self.scrubbed()?;
        let parts: Vec<&[Pending]> = pending.chunks(pending.len().div_ceil(threads)).collect();
        let (scanner, flags, clean) = (&self.scanner, &self.flags, &self.clean);
        let (remote, advertised, remote_has) = (&self.remote, &self.advertised, &self.remote_has);
        let scrubbed = &self.scrubbed;
        let shares = self.repo.in_parallel(&parts, |repo, part| {
            let mut share = Guard {
                repo,
                reader: None,
                scanner: scanner.clone(),
                flags: flags.clone(),
                clean: clean.clone(),
                remote: remote.clone(),
                advertised: advertised.clone(),
                remote_has: remote_has.clone(),
                scrubbed: scrubbed.clone(),
                summary: ScanSummary::default(),
            };
            let found = share.scan_here(part)?;
            Ok::<_, Error>((found, share.clean, share.remote_has, share.summary))
        })?;
        let mut found = Vec::new();
        for (share_found, share_clean, share_remote_has, share_summary) in shares {
            found.extend(share_found);
            self.clean.extend(share_clean);
            self.remote_has.extend(share_remote_has);
            self.summary.commits += share_summary.commits;
            self.summary.blobs += share_summary.blobs;
            self.summary.bytes += share_summary.bytes;
            self.summary.skipped += share_summary.skipped;
        }
        Ok(found)
    }

    /// [`Guard::scan`] on this thread.
    fn scan_here(&mut self, pending: &[Pending]) -> Result<Vec<PushFinding>, Error> {
        let mut found = Vec::new();
        let mut reader = self
            .reader
            .take()
            .unwrap_or_else(|| self.repo.outgoing_reader());
        for p in pending {
            match p {
                Pending::Run {
                    run_id,
                    expected,
                    new,
                } => {
                    let tree = reader.commit_tree(*new)?;
                    let public_base = self.public_base(run_id, *new)?;
                    // The review records read for the flags, kept for their scan below.
                    let mut read = HashMap::new();
                    let flagged = self.flagged_blobs(&mut reader, run_id, tree, &mut read)?;
                    let out = reader.run_outgoing(run_id, *new, *expected, public_base)?;
                    let run = Some(run_id.clone());
                    for outside in &out.outside {
                        let advertised = self.advertised()?.to_vec();
                        let history =
                            self.repo
                                .commits_beyond(*outside, &advertised, usize::MAX)?;
                        if history.is_empty() {
                            continue;
                        }
                        if !self.flags.with_base {
                            found.push(PushFinding {
                                run: run.clone(),
                                round: None,
                                kind: OUTSIDE.to_owned(),
                                path: format!("commit {}", &outside.to_string()[..12]),
                                line: 0,
                                place: "base history",
                            });
                            continue;
                        }
                        let published = reader.history_outgoing(&history)?;
                        for (commit, message) in &published.commits {
                            self.summary.commits += 1;
                            let path = format!("commit {}", &commit.to_string()[..12]);
                            for f in self.scanner.scan(&path, message.as_bytes()) {
                                found.push(PushFinding {
                                    run: run.clone(),
                                    round: None,
                                    kind: f.kind,
                                    path: path.clone(),
                                    line: f.line,
                                    place: "commit message",
                                });
                            }
                        }
                        for blob in &published.blobs {
                            for (kind, line) in self.scan_blob(&mut reader, blob.id, &blob.path)? {
                                found.push(PushFinding {
                                    run: run.clone(),
                                    round: None,
                                    kind,
                                    path: blob.path.clone(),
                                    line,
                                    place: "base history",
                                });
                            }
                        }
                    }
                    for (commit, message) in &out.commits {
                        self.summary.commits += 1;
                        self.summary.bytes += message.len() as u64;
                        let path = format!("commit {}", &commit.to_string()[..12]);
                        for f in self.scanner.scan(&path, message.as_bytes()) {
                            found.push(PushFinding {
                                run: run.clone(),
                                round: None,
                                kind: f.kind,
                                path: path.clone(),
                                line: f.line,
                                place: "commit message",
                            });
                        }
                    }
                    for blob in &out.blobs {
                        let (round, path, place) = match Place::of(&blob.path) {
                            Place::Snapshot { round, file } => {
                                (Some(round), file.to_owned(), "snapshot")
                            }
                            Place::CheckpointSnapshot { file } => {
                                (None, file.to_owned(), "checkpoint snapshot")
                            }
                            Place::Material { round } => {
                                (Some(round), blob.path.clone(), "review material")
                            }
                            Place::Record => (None, blob.path.clone(), "record"),
                            Place::Other => (None, blob.path.clone(), "run state"),
                        };
                        if flagged.contains(&blob.id) {
                            found.push(PushFinding {
                                run: run.clone(),
                                round,
                                kind: FLAGGED.to_owned(),
                                path: path.clone(),
                                line: 0,
                                place,
                            });
                            continue;
                        }
                        let text = read.remove(&blob.id);
                        for (kind, line) in self.scan_read(&mut reader, blob.id, &path, text)? {
                            found.push(PushFinding {
                                run: run.clone(),
                                round,
                                kind,
                                path: path.clone(),
                                line,
                                place,
                            });
                        }
                    }
                }
                Pending::Notes { expected, new } => {
                    let out = reader.notes_outgoing(*new, *expected)?;
                    self.summary.commits += out.commits.len();
                    for blob in &out.blobs {
                        let path = format!("notes/{}", blob.path.replace('/', ""));
                        for (kind, line) in self.scan_blob(&mut reader, blob.id, &path)? {
                            found.push(PushFinding {
                                run: None,
                                round: None,
                                kind,
                                path: path.clone(),
                                line,
                                place: "note",
                            });
                        }
                    }
                }
                Pending::Tombstone { run_id, blob } => {
                    let path = crate::store::dropped_ref(run_id);
                    for (kind, line) in self.scan_blob(&mut reader, *blob, &path)? {
                        found.push(PushFinding {
                            run: None,
                            round: None,
                            kind,
                            path: path.clone(),
                            line,
                            place: "tombstone",
                        });
                    }
                }
                Pending::Deletion { .. } => {}
            }
        }
        self.reader = Some(reader);
        Ok(found)
    }

    /// The (kind, line) of each secret in blob `id`, scanned as the file at `path`.
    fn scan_blob(
        &mut self,
        reader: &mut OutgoingReader,
        id: ObjectId,
        path: &str,
    ) -> Result<Vec<(String, usize)>, Error> {
        self.scan_read(reader, id, path, None)
    }

    /// [`Guard::scan_blob`], given the blob's text when it was read already.
    fn scan_read(
        &mut self,
        reader: &mut OutgoingReader,
        id: ObjectId,
        path: &str,
        text: Option<Vec<u8>>,
    ) -> Result<Vec<(String, usize)>, Error> {
        if self.clean.contains(&id) {
            return Ok(Vec::new());
        }
        let text = match text {
            Some(bytes) if bytes.len() as u64 <= MAX_SCANNED_BLOB => BlobText::Text(bytes),
            _ => reader.blob_text(id, MAX_SCANNED_BLOB)?,
        };
        match text {
            BlobText::Text(bytes) => {
                self.summary.blobs += 1;
                self.summary.bytes += bytes.len() as u64;
                let found = self.scanner.scan(path, &bytes);
                if found.is_empty() {
                    self.clean.insert(id);
                }
                Ok(found.into_iter().map(|f| (f.kind, f.line)).collect())
            }
            // What the scanner cannot read is refused like a secret, unless allowed by path.
            BlobText::TooLarge(_) => {
                self.summary.skipped += 1;
                Ok(vec![(UNSCANNED_LARGE.to_owned(), 0)])
            }
            BlobText::Binary => {
                self.summary.skipped += 1;
                Ok(vec![(UNSCANNED_BINARY.to_owned(), 0)])
            }
        }
    }

    /// The commits the remote advertises, asked once per push.
    fn advertised(&mut self) -> Result<&[ObjectId], Error> {
        if self.advertised.is_none() {
            let tips = match &self.remote {
                Some(remote) => crate::sync::advertised(self.repo, remote)?,
                None => Vec::new(),
            };
            self.advertised = Some(tips);
        }
        Ok(self.advertised.as_deref().unwrap_or_default())
    }

    /// Whether the remote has commit `id` (it is reachable from what the remote advertises).
    /// A commit that is not here counts as not there. Answered once per commit (runs often
    /// share a base).
    fn remote_has(&mut self, id: ObjectId) -> Result<bool, Error> {
        if let Some(known) = self.remote_has.get(&id) {
            return Ok(*known);
        }
        let has = if self.repo.commit_parents(id).is_err() {
            false
        } else {
            let advertised = self.advertised()?.to_vec();
            self.repo.commits_beyond(id, &advertised, 1)?.is_empty()
        };
        self.remote_has.insert(id, has);
        Ok(has)
    }

    /// The base of run `run_id` at `tip` when the remote has it (then files of the base are
    /// not new to the remote). A remote that advertises nothing has no base: the run's
    /// manifest is not read at all (a first push of many runs reads one object fewer each).
    fn public_base(&mut self, run_id: &RunId, tip: ObjectId) -> Result<Option<ObjectId>, Error> {
        if self.advertised()?.is_empty() {
            return Ok(None);
        }
        let known = self.repo.is_loaded(tip);
        let state = self.repo.load_at(run_id, tip)?;
        if !known {
            // One pass over every run: holding each manifest is what cost a push of 100,000
            // runs most of its memory.
            self.repo.forget_loaded(tip);
        }
        match state.manifest.base.map(ObjectId::from) {
            Some(base) if self.remote_has(base)? => Ok(Some(base)),
            _ => Ok(None),
        }
    }

    /// The scrub lists of this clone, listed once per push.
    fn scrubbed(&mut self) -> Result<&HashMap<RunId, ObjectId>, Error> {
        if self.scrubbed.is_none() {
            self.scrubbed = Some(self.repo.scrubbed_lists()?);
        }
        Ok(self.scrubbed.get_or_insert_default())
    }

    /// The blobs of the run's reviewed snapshots (run `run_id`, its run tree `tree`) that a
    /// review flagged `[secret]` itself (a reviewer's finding, not one the scanner raised:
    /// those the push scan finds again, and `--allow-secret` can pass): never published. The
    /// review records are read through `reader`, and their text is left in `read`.
    fn flagged_blobs(
        &mut self,
        reader: &mut OutgoingReader,
        run_id: &RunId,
        tree: ObjectId,
        read: &mut HashMap<ObjectId, Vec<u8>>,
    ) -> Result<HashSet<ObjectId>, Error> {
        // What scrub removed here stays unpublished wherever it appears again.
        let mut flagged = match self.scrubbed()?.get(run_id).copied() {
            Some(list) => self.repo.scrubbed_in(list)?,
            None => HashSet::new(),
        };
        // Only the reviews are read (every record is scanned as a blob anyway).
        let files = self.repo.record_files_in(run_id, tree)?;
        for (name, oid) in files.of_kind("review") {
            let record = match reader.blob_text(oid, MAX_RECORD_BYTES as u64)? {
                BlobText::Text(bytes) => {
                    let record = crate::store::parse_record(run_id, name, &bytes)?;
                    read.insert(oid, bytes);
                    record
                }
                // Read again the usual way, for the usual error.
                BlobText::TooLarge(_) | BlobText::Binary => {
                    self.repo.read_record(run_id, name, oid)?
                }
            };
            let Body::Review(review) = record.body else {
                continue;
            };
            for f in &review.findings {
                if !f.category.trim().eq_ignore_ascii_case("secret")
                    || f.text.contains(crate::ops::review::SCANNER_SECRET_TEXT)
                {
                    continue;
                }
                let path = location_path(&f.location);
                if path.is_empty() {
                    continue;
                }
                let stored = format!(
                    "{}/{path}",
                    crate::store::Material::Snapshot.path(review.round)
                );
                // A scrubbed copy is the placeholder: nothing of the file is left to flag.
                if let Some(id) = self.repo.run_blob_id(tree, &stored)?
                    && id
                        != self
                            .repo
                            .blob_id_of(crate::store::scrub_placeholder(path).as_bytes())
                {
                    flagged.insert(id);
                }
            }
        }
        Ok(flagged)
    }
}

/// The path of a finding's `path:line` (or `path`) location.
fn location_path(location: &str) -> &str {
    let location = location.trim();
    match location.rsplit_once(':') {
        Some((path, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => path,
        _ => location,
    }
}

/// `--allow-unscanned <path>` as the allowance it records.
pub fn unscanned_allowance(path: &str) -> Result<Allowance, Error> {
    if path.is_empty() || path.chars().any(char::is_control) {
        return Err(Error::Usage(format!(
            "--allow-unscanned takes the path of a binary or large file, got '{}'",
            path.escape_debug()
        )));
    }
    Ok(Allowance {
        kind: UNSCANNED.to_owned(),
        path: path.to_owned(),
    })
}

/// Parses `--allow-secret <kind>:<path>`, checking the kind against the scanner's table.
pub fn parse_allowance(text: &str, scanner: &Scanner) -> Result<Allowance, Error> {
    let Some((kind, path)) = text
        .split_once(':')
        .filter(|(k, p)| !k.is_empty() && !p.is_empty())
    else {
        return Err(Error::Usage(format!(
            "--allow-secret takes KIND:PATH (e.g. generic-secret:config/test.env), got '{}'",
            text.escape_debug()
        )));
    };
    if !scanner.kinds().contains(&kind) {
        return Err(Error::Usage(format!(
            "--allow-secret: unknown kind '{}' (kinds: {})",
            kind.escape_debug(),
            scanner.kinds().join(", ")
        )));
    }
    Ok(Allowance {
        kind: kind.to_owned(),
        path: path.to_owned(),
    })
}
