//! The run store: the only code that reads or writes `refs/pair/*`, `refs/pair-local/*` and
//! `refs/notes/pair`.
//!
//! A run is a commit chain under `refs/pair/runs/<run-id>`; each commit's tree is the whole
//! state of the run after one record: `manifest.json` (bounded), the records in buckets of 256
//! positions (`records/<bucket>/<seq>-<kind>-<id>.json`) and per-review material. Every ref
//! move is a compare-and-swap against the tip that was read; a lost race reloads and
//! re-applies the record. Objects are written before the ref moves,
//! so a crash leaves the old state or the new one. gix types stay inside this module.
//!
//! Rooms: `runs` (a run's chain: read, append), `chain` (walking it), `merge` (the
//! record-union merge of two tips), `refdb` (bulk ref reads and writes, `packed-refs`),
//! `notes`, `owned` (which runs belong to this clone: `refs/pair-local/owned/*`), `cas` (the
//! one compare-and-swap edit and its retry policy), `lock` (every lock file and writer lock),
//! `layout` (paths inside a run's tree), `records` (reading records in either layout),
//! `packing` (packing the objects appends left loose).

mod approval_checks;
mod approvals_index;
mod cas;
mod chain;
mod dropped;
mod error;
mod history;
mod layout;
mod local_config;
mod lock;
mod merge;
pub mod notes;
mod outgoing;
mod owned;
mod packing;
mod receipts;
mod records;
mod refdb;
mod repo;
mod runs;
mod scrub;
mod summaries;

pub use approval_checks::{consistency_of, rules as approval_rules};
pub use approvals_index::{RecordFiles, reader_threads};
pub use dropped::{DROPPED_PREFIX, dropped_ref};
pub use error::Error;
pub use history::{CodeCommit, pair_run_trailers, parents_first};
pub use layout::{
    Material, Place, RUNS_PREFIX, ReviewDir, STAGING_ROOT, member_path, ref_run_id, run_ref,
};
pub use local_config::{Added as ConfigAdded, ConfigKey};
pub use merge::{Counts, Integration, MergedTree, RunsIntegrated};
pub use outgoing::{BlobText, NewBlob, Outgoing, OutgoingReader};
pub use owned::{BASES_PREFIX, Claim, OWNED_PREFIX, base_ref, owned_ref};
pub use packing::{JOIN_AT, PACK_AFTER_COMMITS};
pub use receipts::Receipt;
pub use records::NewestFirst;
pub use repo::{GlobalConfig, Head, Repo};
pub use runs::{Append, Appended, Content, PackedRefs, PreparedRun, RunState, parse_record};
pub use scrub::{SCRUBBED_PREFIX, Scrub, Scrubbed, scrub_placeholder, scrubbed_ref};
pub use summaries::{Listed, RunSummary, Summaries};
