//! Stored bytes as a record (`model::Record::from_json`) and as a manifest
//! (`serde_json::from_slice::<model::Manifest>`): never a panic; a record that decodes
//! encodes and decodes again to itself.
#![no_main]

use git_pair::model::{Manifest, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(record) = Record::from_json(data) {
        let again = Record::from_json(&record.to_json()).expect("an encoded record decodes");
        assert_eq!(again.file_name(), record.file_name());
    }
    if let Ok(manifest) = serde_json::from_slice::<Manifest>(data) {
        let _ = serde_json::to_vec(&manifest);
    }
});
