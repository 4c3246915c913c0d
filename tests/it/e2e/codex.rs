//! `git pair` with `--reviewer codex` through the real, pinned `codex exec`.
