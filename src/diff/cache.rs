//! A delta-base cache for reading objects out of packs, like git's `core.deltaBaseCacheLimit`:
//! objects stored as deltas share long chains of bases, and without keeping decoded bases
//! every read re-inflates its whole chain. gix only ships such a cache behind features this
//! crate does not enable, so this is a small memory-capped LRU of its own.

use std::collections::{HashMap, VecDeque};

use gix::odb::pack::cache::DecodeEntry;

/// git's default `core.deltaBaseCacheLimit`.
pub const DEFAULT_LIMIT: usize = 96 * 1024 * 1024;

/// Decoded pack entries keyed by pack and offset, evicted least recently used first once
/// their total size passes the limit.
pub struct DeltaBaseCache {
    limit: usize,
    used: usize,
    tick: u64,
    entries: HashMap<(u32, u64), Cached>,
    /// Keys in order of use; an entry used again appears again, and stale positions are
    /// skipped on eviction by comparing ticks.
    order: VecDeque<((u32, u64), u64)>,
}

struct Cached {
    kind: gix::objs::Kind,
    data: Vec<u8>,
    tick: u64,
}

impl DeltaBaseCache {
    /// A cache holding at most `limit` bytes of decoded objects.
    pub fn new(limit: usize) -> DeltaBaseCache {
        DeltaBaseCache {
            limit,
            used: 0,
            tick: 0,
            entries: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    fn touch(&mut self, key: (u32, u64)) -> u64 {
        self.tick += 1;
        self.order.push_back((key, self.tick));
        self.tick
    }

    fn evict(&mut self) {
        while self.used > self.limit {
            let Some((key, tick)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&key).is_some_and(|e| e.tick == tick)
                && let Some(evicted) = self.entries.remove(&key)
            {
                self.used -= evicted.data.len();
            }
        }
        // Keep the use log from growing without bound when entries are read many times.
        if self.order.len() > 4 * self.entries.len() + 1024 {
            let entries = &self.entries;
            self.order
                .retain(|(key, tick)| entries.get(key).is_some_and(|e| e.tick == *tick));
        }
    }
}

impl DecodeEntry for DeltaBaseCache {
    fn put(
        &mut self,
        pack_id: u32,
        offset: u64,
        data: &[u8],
        kind: gix::objs::Kind,
        _compressed_size: usize,
    ) {
        // One huge object must not flush everything else out.
        if data.len() > self.limit / 4 {
            return;
        }
        let key = (pack_id, offset);
        let tick = self.touch(key);
        if let Some(previous) = self.entries.insert(
            key,
            Cached {
                kind,
                data: data.to_vec(),
                tick,
            },
        ) {
            self.used -= previous.data.len();
        }
        self.used += data.len();
        self.evict();
    }

    fn get(
        &mut self,
        pack_id: u32,
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Option<(gix::objs::Kind, usize)> {
        let key = (pack_id, offset);
        if !self.entries.contains_key(&key) {
            return None;
        }
        let tick = self.touch(key);
        let entry = self.entries.get_mut(&key)?;
        entry.tick = tick;
        out.clear();
        out.extend_from_slice(&entry.data);
        Some((entry.kind, entry.data.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_past_the_limit() {
        let mut cache = DeltaBaseCache::new(100);
        let blob = gix::objs::Kind::Blob;
        let mut out = Vec::new();
        cache.put(0, 1, &[1; 20], blob, 0);
        cache.put(0, 2, &[2; 20], blob, 0);
        assert_eq!(cache.get(0, 1, &mut out), Some((blob, 20)));
        assert_eq!(out, vec![1; 20]);
        cache.put(0, 3, &[3; 25], blob, 0);
        cache.put(0, 4, &[4; 25], blob, 0);
        cache.put(0, 5, &[5; 20], blob, 0);
        // 110 bytes > 100: offset 2 is the least recently used (offset 1 was read since).
        assert!(cache.get(0, 2, &mut out).is_none());
        assert!(cache.get(0, 1, &mut out).is_some());
        assert_eq!(cache.used, 90);
        // Objects larger than a quarter of the limit are not kept.
        cache.put(1, 9, &[9; 26], blob, 0);
        assert!(cache.get(1, 9, &mut out).is_none());
    }
}
