//! A fetched `manifest.json` (a cache, never trusted): decoding arbitrary bytes never panics;
//! what decodes re-encodes to a document that decodes to the same manifest, and answering
//! the next step from it never panics.
#![no_main]

use git_pair::model::{Manifest, Observed};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(manifest) = serde_json::from_slice::<Manifest>(data) else {
        return;
    };
    let _ = manifest.next_action(Observed::default());
    let again = serde_json::to_vec(&manifest).expect("a decoded manifest encodes");
    let back: Manifest = serde_json::from_slice(&again).expect("what was encoded decodes");
    assert_eq!(back, manifest);
});
