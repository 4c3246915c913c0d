//! What the CI check reads from a run, and no more: the list of its record files, then
//! only the records of the kinds asked for (typically `review` and `finish`), never the
//! manifest or the rest, so indexing a thousand runs costs a few object reads each.

use gix::ObjectId;

use super::layout::record_kind;
use super::{Error, Repo};
use crate::model::{Record, RunId};

/// A run's record files as of one tip, in stored order; no record read yet.
#[derive(Debug, Clone)]
pub struct RecordFiles {
    run_id: RunId,
    /// (file name, blob id), by seq then name.
    entries: Vec<(String, ObjectId)>,
}

impl RecordFiles {
    /// The (file name, blob id) of each record of `kind`, in stored order (to read elsewhere
    /// and parse with [`crate::store::parse_record`]).
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = (&'a str, ObjectId)> + 'a {
        self.entries
            .iter()
            .filter(move |(name, _)| record_kind(name) == Some(kind))
            .map(|(name, oid)| (name.as_str(), *oid))
    }

    /// Whether a record of `kind` is among them.
    pub fn has_kind(&self, kind: &str) -> bool {
        self.entries
            .iter()
            .any(|(name, _)| record_kind(name) == Some(kind))
    }
}

impl Repo {
    /// Lists the record files of the run at commit `tip`.
    pub fn record_files(&self, run_id: &RunId, tip: ObjectId) -> Result<RecordFiles, Error> {
        let tree = self.commit_tree(tip).map_err(|e| e.in_run(run_id))?;
        self.record_files_in(run_id, tree)
    }

    /// Lists the record files of the run tree `tree` (of run `run_id`).
    pub fn record_files_in(&self, run_id: &RunId, tree: ObjectId) -> Result<RecordFiles, Error> {
        Ok(RecordFiles {
            run_id: run_id.clone(),
            entries: self.record_entries(tree)?,
        })
    }

    /// Reads the records among `files` whose kind is one of `kinds`, in stored order.
    pub fn read_records(&self, files: &RecordFiles, kinds: &[&str]) -> Result<Vec<Record>, Error> {
        files
            .entries
            .iter()
            .filter(|(name, _)| record_kind(name).is_some_and(|k| kinds.contains(&k)))
            .map(|(name, oid)| self.read_record(&files.run_id, name, *oid))
            .collect()
    }

    /// Runs `work` on each of `items` on a few threads (see [`reader_threads`]), each with its
    /// own handle on this repository (and its own delta-base cache); results in the order of
    /// `items`. Few items run on this thread alone.
    pub fn map_parallel<I, T>(
        &self,
        items: &[I],
        work: impl Fn(&Repo, &I) -> Result<T, Error> + Sync,
    ) -> Result<Vec<T>, Error>
    where
        I: Sync,
        T: Send,
    {
        let threads = reader_threads(items.len());
        if threads == 1 {
            return items.iter().map(|item| work(self, item)).collect();
        }
        let parts: Vec<&[I]> = items.chunks(items.len().div_ceil(threads)).collect();
        let done = self.in_parallel(&parts, |repo, part| {
            part.iter()
                .map(|item| work(repo, item))
                .collect::<Result<Vec<T>, Error>>()
        })?;
        Ok(done.into_iter().flatten().collect())
    }

    /// Runs `produce` on this thread while reader threads (each with its own handle on this
    /// repository, and its own state from `init`) run `work` on every item it hands to its
    /// feed, so reading overlaps producing (a walk of commits, and what each commit names);
    /// once `produce` is done, this thread takes its share of what is left. Returns what
    /// `produce` returns and what `work` made of each item, in no set order.
    ///
    /// The producer keeps a core busy, so there is a reader for each other core (up to
    /// three); items travel in batches of [`FEED_BATCH`], so a reader is woken once per batch
    /// rather than once per item. A reader's handle keeps no decoded objects: it reads what
    /// one item names, once. A thread that cannot open its handle reads nothing: its items
    /// are left to the others, or (on a one-core machine, or when none opens) run here.
    pub fn map_while_producing<I, S, T, P>(
        &self,
        produce: impl FnOnce(&mut dyn FnMut(I)) -> P,
        init: impl Fn(&Repo) -> S + Sync,
        work: impl Fn(&Repo, &mut S, I) -> T + Sync,
    ) -> (P, Vec<T>)
    where
        I: Send,
        T: Send,
    {
        let readers = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .saturating_sub(1)
            .min(3);
        if readers == 0 {
            let mut items = Vec::new();
            let produced = produce(&mut |item| items.push(item));
            let mut state = init(self);
            let done = items
                .into_iter()
                .map(|item| work(self, &mut state, item))
                .collect();
            return (produced, done);
        }
        let (feed, queue) = std::sync::mpsc::channel::<Vec<I>>();
        let queue = std::sync::Mutex::new(queue);
        // The next batch, waiting for one (`None`: the feed is closed and drained).
        let next = |wait: bool| {
            let queue = queue.lock().ok()?;
            if wait {
                queue.recv().ok()
            } else {
                queue.try_recv().ok()
            }
        };
        std::thread::scope(|scope| {
            let readers: Vec<_> = (0..readers)
                .map(|_| {
                    let mut handle = self.repo.clone();
                    handle.object_cache_size(0);
                    let (init, work, next) = (&init, &work, &next);
                    scope.spawn(move || {
                        let Ok(repo) = Repo::from_gix(handle) else {
                            return Vec::new();
                        };
                        let mut state = init(&repo);
                        let mut out = Vec::new();
                        while let Some(batch) = next(true) {
                            out.extend(batch.into_iter().map(|item| work(&repo, &mut state, item)));
                        }
                        out
                    })
                })
                .collect();
            let mut batch = Vec::with_capacity(FEED_BATCH);
            let produced = produce(&mut |item| {
                batch.push(item);
                if batch.len() == FEED_BATCH {
                    // Every reader gone (none could open): the batch stays in the queue.
                    let _ = feed.send(std::mem::replace(
                        &mut batch,
                        Vec::with_capacity(FEED_BATCH),
                    ));
                }
            });
            if !batch.is_empty() {
                let _ = feed.send(batch);
            }
            drop(feed);
            let mut state = init(self);
            let mut done = Vec::new();
            while let Some(batch) = next(false) {
                done.extend(batch.into_iter().map(|item| work(self, &mut state, item)));
            }
            for reader in readers {
                done.extend(reader.join().expect("a reader thread does not panic"));
            }
            (produced, done)
        })
    }

    /// Runs `work` on each of `parts` at once, a thread for each, each with its own handle on
    /// this repository; results in the order of `parts`. A single part runs on this thread.
    pub fn in_parallel<I, T, E>(
        &self,
        parts: &[I],
        work: impl Fn(&Repo, &I) -> Result<T, E> + Sync,
    ) -> Result<Vec<T>, E>
    where
        I: Sync,
        T: Send,
        E: From<Error> + Send,
    {
        if parts.len() <= 1 {
            return parts.iter().map(|part| work(self, part)).collect();
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .iter()
                .map(|part| {
                    let handle = self.repo.clone();
                    let work = &work;
                    scope.spawn(move || -> Result<T, E> { work(&Repo::from_gix(handle)?, part) })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().expect("a reader thread does not panic"))
                .collect()
        })
    }

    /// The records of the run at commit `tip` whose kind is one of `kinds`, in stored order.
    pub fn records_of_kinds(
        &self,
        run_id: &RunId,
        tip: ObjectId,
        kinds: &[&str],
    ) -> Result<Vec<Record>, Error> {
        self.read_records(&self.record_files(run_id, tip)?, kinds)
    }
}

/// How many items [`Repo::map_while_producing`] hands its readers at a time.
const FEED_BATCH: usize = 32;

/// How many threads a pass reading `items` runs (each its own repository handle): up to four,
/// one per 64 items, never more than the machine's cores.
pub fn reader_threads(items: usize) -> usize {
    const ITEMS_PER_THREAD: usize = 64;
    std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(4)
        .min(items / ITEMS_PER_THREAD)
        .max(1)
}
