//! The code history a gate checks: the commits of a revision range (`A..B`), oldest first,
//! each with its tree, parents and `Pair-Run:` trailer. Reads commits only; writes nothing.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use super::{Error, Repo};

/// One commit of the range, as the gate needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeCommit {
    pub id: ObjectId,
    pub tree: ObjectId,
    pub parents: Vec<ObjectId>,
    /// The first line of the message.
    pub subject: String,
    /// The values of `Pair-Run:` trailer lines (as written by the `commit-msg` hook), unchecked.
    pub pair_runs: Vec<String>,
}

impl Repo {
    /// The commits reachable from `to` and not from `from` (all of `to`'s history when
    /// `from` is `None`), parents before children; among siblings, first parents first.
    pub fn commits_in_range(
        &self,
        from: Option<ObjectId>,
        to: ObjectId,
    ) -> Result<Vec<CodeCommit>, Error> {
        self.commits_in_range_with(from, to, &mut |_| {})
    }

    /// [`Repo::commits_in_range`], handing each commit to `each` as the walk reads it (newest
    /// first, before the order is known), so reading what commits name can start at once.
    pub fn commits_in_range_with(
        &self,
        from: Option<ObjectId>,
        to: ObjectId,
        each: &mut dyn FnMut(&CodeCommit),
    ) -> Result<Vec<CodeCommit>, Error> {
        let walk = self
            .repo
            .rev_walk([to])
            .with_hidden(from)
            .all()
            .map_err(Error::git("walk the commits of the range"))?;
        let mut commits = HashMap::new();
        for info in walk {
            let info = info.map_err(|e| Error::Git {
                action: "walk the commits of the range".into(),
                source: gix::Error::from_error(e),
            })?;
            let commit = self.code_commit(info.id)?;
            each(&commit);
            commits.insert(info.id, commit);
        }
        Ok(parents_first(to, commits))
    }

    /// Walks the commits reachable from `to` and not from `from` through the commit-graph,
    /// handing each id to `each` as the walk finds it (newest first) without reading the
    /// commit: whoever reads what each commit names reads the commit itself, at the same
    /// time, and hands the read commits to [`parents_first`]. `Ok(false)`: this repository
    /// has no commit-graph it can read (or does not use one), nothing was walked: read them with
    /// [`Repo::commits_in_range_with`], where the walk reads each one for its parents anyway.
    pub fn walk_range_graph(
        &self,
        from: Option<ObjectId>,
        to: ObjectId,
        each: &mut dyn FnMut(ObjectId),
    ) -> Result<bool, Error> {
        let action = "walk the commits of the range";
        // A graph that cannot be read is no graph (as for gix's own walks): the commits are
        // read the other way.
        let Some(graph) = self.repo.commit_graph_if_enabled().ok().flatten() else {
            return Ok(false);
        };
        let walk = self
            .repo
            .rev_walk([to])
            .with_hidden(from)
            .with_commit_graph(Some(graph))
            .all()
            .map_err(Error::git(action))?;
        for info in walk {
            let info = info.map_err(|e| Error::Git {
                action: action.into(),
                source: gix::Error::from_error(e),
            })?;
            each(info.id);
        }
        Ok(true)
    }

    /// The merge base of commits `a` and `b` (the best common ancestor), if they have one.
    pub fn merge_base(&self, a: ObjectId, b: ObjectId) -> Result<Option<ObjectId>, Error> {
        self.repo
            .merge_base(a, b)
            .map(|base| base.map(|id| id.detach()))
            .map_err(Error::git("find the merge base"))
    }

    /// Whether commit `ancestor` is `descendant` or one of its ancestors (`false` when either
    /// is not a commit here: nothing is proven then).
    pub fn is_ancestor(&self, ancestor: ObjectId, descendant: ObjectId) -> bool {
        if ancestor == descendant {
            return true;
        }
        self.repo
            .merge_base(ancestor, descendant)
            .is_ok_and(|base| base.is_some_and(|base| base.detach() == ancestor))
    }

    /// The entry at `path` inside `tree` as (object id, mode bits), or `None` when there is
    /// none: what a file "is" at a path, for comparing versions across trees.
    pub fn entry_at(&self, tree: ObjectId, path: &str) -> Result<Option<(ObjectId, u16)>, Error> {
        let tree = self
            .repo
            .find_tree(tree)
            .map_err(Error::git("read a tree"))?;
        let entry = tree
            .lookup_entry_by_path(path)
            .map_err(Error::git("look up a path in a tree"))?;
        Ok(entry.map(|e| (e.object_id(), e.mode().value())))
    }

    /// Reads one commit as the gate needs it.
    pub fn code_commit(&self, id: ObjectId) -> Result<CodeCommit, Error> {
        let commit = self
            .repo
            .find_commit(id)
            .map_err(Error::git("read a commit"))?;
        let decoded = commit.decode().map_err(Error::git("decode a commit"))?;
        let message = String::from_utf8_lossy(decoded.message).into_owned();
        Ok(CodeCommit {
            id,
            tree: decoded.tree(),
            parents: decoded.parents().collect(),
            subject: message.lines().next().unwrap_or("").trim().to_owned(),
            pair_runs: pair_run_trailers(&message),
        })
    }
}

/// Orders `commits` (those of a range whose tip is `tip`) parents first: a depth-first walk
/// from `tip` that emits a commit after all its parents inside the set (first parent first),
/// iteratively so deep histories cannot overflow the stack.
pub fn parents_first(tip: ObjectId, mut commits: HashMap<ObjectId, CodeCommit>) -> Vec<CodeCommit> {
    let mut out = Vec::with_capacity(commits.len());
    let mut done = HashSet::new();
    let mut stack = vec![(tip, 0usize)];
    while let Some((id, next_parent)) = stack.pop() {
        let Some(commit) = commits.get(&id) else {
            continue;
        };
        if done.contains(&id) {
            continue;
        }
        if let Some(parent) = commit.parents.get(next_parent).copied() {
            stack.push((id, next_parent + 1));
            if commits.contains_key(&parent) && !done.contains(&parent) {
                stack.push((parent, 0));
            }
            continue;
        }
        done.insert(id);
        if let Some(commit) = commits.remove(&id) {
            out.push(commit);
        }
    }
    out
}

/// The values of `Pair-Run:` lines of a commit message (token matched case-insensitively,
/// as git matches trailer tokens). Any line counts: the value only ever links a commit to a
/// run whose own records are then read, it never approves anything by itself.
pub fn pair_run_trailers(message: &str) -> Vec<String> {
    message
        .lines()
        .filter_map(|line| {
            let (token, value) = line.split_once(':')?;
            token
                .trim()
                .eq_ignore_ascii_case("Pair-Run")
                .then(|| value.trim().to_owned())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    fn commit(n: u8, parents: &[u8]) -> (ObjectId, CodeCommit) {
        (
            id(n),
            CodeCommit {
                id: id(n),
                tree: id(100 + n),
                parents: parents.iter().map(|&p| id(p)).collect(),
                subject: format!("c{n}"),
                pair_runs: Vec::new(),
            },
        )
    }

    fn order(tip: u8, commits: &[(u8, &[u8])]) -> Vec<String> {
        let map = commits.iter().map(|(n, p)| commit(*n, p)).collect();
        parents_first(id(tip), map)
            .into_iter()
            .map(|c| c.subject)
            .collect()
    }

    #[test]
    fn parents_come_before_children_first_parent_first() {
        // 1 ← 2 ← 4 (merge of 2 and 3), 1 ← 3; 0 is outside the range.
        assert_eq!(
            order(4, &[(1, &[0]), (2, &[1]), (3, &[1]), (4, &[2, 3])]),
            ["c1", "c2", "c3", "c4"]
        );
        assert_eq!(
            order(3, &[(3, &[2]), (2, &[1]), (1, &[])]),
            ["c1", "c2", "c3"]
        );
        assert!(order(9, &[]).is_empty());
    }

    #[test]
    fn pair_run_trailers_are_read_from_any_line() {
        let message = "Subject\n\nBody\n\nPair-Run: 20261129-231500-a1b2c3\npair-run:x \nReviewed-by: codex\n";
        assert_eq!(pair_run_trailers(message), ["20261129-231500-a1b2c3", "x"]);
        assert!(pair_run_trailers("Pair-Run:\n").is_empty());
    }
}
