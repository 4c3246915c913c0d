//! The push scan (SPEC §14): before `push` sends anything, every object it would publish that
//! the remote does not have yet — a run's new commits (messages), records, stored material
//! and reviewed-snapshot files, new notes, tombstones — is scanned for secrets. A finding
//! not allowed refuses the push as a whole. Allowances are `push --allow-secret <kind>:<path>`
//! (recorded in the run as an `allow-secret` record, so they stay visible and apply to later
//! pushes of that run) or such records already in the run.
//!
//! Cost is bounded by what is new: the store lists only blobs the new commits add
//! ([`crate::store::OutgoingReader::run_outgoing`]); blobs larger than
//! [`crate::secrets::MAX_SCANNED_BLOB`] or binary are counted, not scanned; a blob found
//! clean is not scanned again on a retry.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use gix::ObjectId;
use serde::Serialize;

pub use super::findings::{PushFinding, summarize};
use crate::model::{AllowSecret, Allowance, Body, RunId};
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

/// The guard `push` runs before sending: scans, applies allowances, records the new ones.
pub struct Guard<'a> {
    repo: &'a Repo,
    /// Made on the first check: a push with nothing new reads nothing.
    reader: Option<OutgoingReader>,
    scanner: Scanner,
    flags: Vec<Allowance>,
    /// Blobs already found clean (a retry does not scan them again).
    clean: HashSet<ObjectId>,
    pub summary: ScanSummary,
}

impl<'a> Guard<'a> {
    /// A guard allowing what `flags` (`--allow-secret`) name.
    pub fn new(repo: &'a Repo, scanner: Scanner, flags: Vec<Allowance>) -> Guard<'a> {
        Guard {
            repo,
            reader: None,
            scanner,
            flags,
            clean: HashSet::new(),
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
            } else if self.flags.contains(&allowance) {
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

    /// Every secret in what `pending` would publish that the remote lacks.
    fn scan(&mut self, pending: &[Pending]) -> Result<Vec<PushFinding>, Error> {
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
                    let out = reader.run_outgoing(run_id, *new, *expected)?;
                    let run = Some(run_id.clone());
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
                        for (kind, line) in self.scan_blob(&mut reader, blob.id, &path)? {
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
        if self.clean.contains(&id) {
            return Ok(Vec::new());
        }
        match reader.blob_text(id, MAX_SCANNED_BLOB)? {
            BlobText::Text(bytes) => {
                self.summary.blobs += 1;
                self.summary.bytes += bytes.len() as u64;
                let found = self.scanner.scan(path, &bytes);
                if found.is_empty() {
                    self.clean.insert(id);
                }
                Ok(found.into_iter().map(|f| (f.kind, f.line)).collect())
            }
            BlobText::TooLarge(_) | BlobText::Binary => {
                self.summary.skipped += 1;
                self.clean.insert(id);
                Ok(Vec::new())
            }
        }
    }
}

/// Parses `--allow-secret <kind>:<path>`, checking the kind against the scanner's table.
pub fn parse_allowance(text: &str, scanner: &Scanner) -> Result<Allowance, Error> {
    let Some((kind, path)) = text
        .split_once(':')
        .filter(|(k, p)| !k.is_empty() && !p.is_empty())
    else {
        return Err(Error::Usage(format!(
            "--allow-secret takes <kind>:<path> (e.g. generic-secret:config/test.env), got '{}'",
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
