//! The run-state fold over any record sequence: each input line that decodes as a record is
//! one record, in input order and in the store's order (seq, then file name).
//! `Manifest::project` never panics and counts every record it folds.
#![no_main]

use git_pair::model::{Manifest, Observed, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut records: Vec<Record> = data
        .split(|&b| b == b'\n')
        .filter_map(|line| Record::from_json(line).ok())
        .collect();
    let manifest = Manifest::project(&records);
    assert_eq!(manifest.records, records.len() as u64);
    let _ = manifest.next_action(Observed::default());
    records.sort_by_cached_key(|r| (r.seq, r.file_name()));
    let stored = Manifest::project(&records);
    assert_eq!(stored.records, records.len() as u64);
    let _ = serde_json::to_vec(&stored);
});
