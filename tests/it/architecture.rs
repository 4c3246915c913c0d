//! The shape of `src/` as STYLE.md states it, checked on the source text: no import cycle
//! between modules, and the layers calling one way (`cli` → `ops` → domain modules).
//!
//! Each file is a module. An edge A → B means A names an item that B defines: every
//! `crate::…`, `super::…` and `self::…` path in A (in `use` trees and inline), resolved to the
//! module that defines the item, following `pub use` re-exports. Declaring a child module
//! (`mod x;`) is not an edge. Inline `#[cfg(test)] mod tests` blocks are skipped: tests may
//! reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

struct Source {
    /// Non-test code, comments removed.
    code: String,
}

fn src_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every module of the library, by path (`[]` is the crate root).
fn modules() -> BTreeMap<Module, Source> {
    let mut out = BTreeMap::new();
    let root = src_root();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read src dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(&root).expect("under src");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            match parts.last().map(String::as_str) {
                Some("mod") | Some("lib") => {
                    parts.pop();
                }
                Some("main") => continue,
                _ => {}
            }
            let text = std::fs::read_to_string(&path).expect("read source");
            out.insert(parts, Source { code: strip(&text) });
        }
    }
    out
}

/// Removes comments, string literals and `#[cfg(test)]` items.
fn strip(text: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<usize> = None;
    let mut depth = 0usize;
    let mut pending_test = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("//") {
            continue;
        }
        if trimmed.starts_with("#[cfg(test)]") {
            pending_test = true;
            continue;
        }
        let code = without_strings(line);
        if pending_test && skip_depth.is_none() {
            skip_depth = Some(depth);
            pending_test = false;
        }
        for c in code.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        if let Some(d) = skip_depth {
            if depth <= d && (code.contains('}') || code.trim_end().ends_with(';')) {
                skip_depth = None;
            }
            continue;
        }
        out.push_str(&code);
        out.push('\n');
    }
    out
}

fn without_strings(line: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c == '"' {
            in_string = true;
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            break;
        }
        out.push(c);
    }
    out
}

/// Every path starting `crate::`, `super::` or `self::` in `code`, brace groups expanded.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(found) = code[from..].find(start) {
            let at = from + found;
            from = at + start.len();
            let preceded = at > 0 && {
                let c = bytes[at - 1] as char;
                c.is_alphanumeric() || c == '_' || c == ':'
            };
            if preceded {
                continue;
            }
            let head = start.trim_end_matches("::").to_owned();
            expand(&code[from..], vec![head], &mut out);
        }
    }
    out
}

/// `use child::…` statements (2018 paths relative to the module), as `self::child::…`.
fn child_uses(
    module: &Module,
    source: &Source,
    modules: &BTreeMap<Module, Source>,
) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // Inline `child::item` paths.
    for (other, _) in modules.range(module.clone()..) {
        if other.len() != module.len() + 1 || !other.starts_with(module) {
            continue;
        }
        let child = &other[module.len()];
        let needle = format!("{child}::");
        let bytes = source.code.as_bytes();
        let mut from = 0;
        while let Some(found) = source.code[from..].find(&needle) {
            let at = from + found;
            from = at + needle.len();
            let preceded = at > 0 && {
                let c = bytes[at - 1] as char;
                c.is_alphanumeric() || c == '_' || c == ':'
            };
            if !preceded {
                expand(
                    &source.code[from..],
                    vec!["self".into(), child.clone()],
                    &mut out,
                );
            }
        }
    }
    for statement in source.code.split(';') {
        let s = statement.trim();
        let s = s
            .strip_prefix("pub(crate) ")
            .or_else(|| s.strip_prefix("pub "))
            .unwrap_or(s);
        let Some(tree) = s.strip_prefix("use ") else {
            continue;
        };
        let Some((head, rest)) = tree.trim().split_once("::") else {
            continue;
        };
        let mut child = module.clone();
        child.push(head.trim().to_owned());
        if modules.contains_key(&child) {
            expand(rest, vec!["self".into(), head.trim().to_owned()], &mut out);
        }
    }
    out
}

/// Reads a path (or a brace group of paths) at the start of `rest`, appending each full path.
fn expand(rest: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 1;
        let mut end = 0;
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let inner = &group[..end];
        let mut depth = 0;
        let mut item_start = 0;
        let mut items = Vec::new();
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&inner[item_start..i]);
                    item_start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&inner[item_start..]);
        for item in items {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            if item == "self" {
                out.push(prefix.clone());
            } else {
                expand(item, prefix.clone(), out);
            }
        }
        return;
    }
    let ident: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if ident.is_empty() {
        out.push(prefix);
        return;
    }
    let mut path = prefix;
    path.push(ident.clone());
    let after = &rest[ident.len()..];
    if let Some(more) = after.strip_prefix("::") {
        expand(more, path, out);
    } else {
        out.push(path);
    }
}

/// The absolute module path of a path written in module `from`.
fn absolute(from: &Module, path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        Some("self") => {
            base = from.clone();
            rest = &path[1..];
        }
        Some("super") => {
            base = from.clone();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    base.extend(rest.iter().cloned());
    base
}

/// `pub use` re-exports of a module: exported name → absolute path.
fn reexports(module: &Module, source: &Source) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for statement in source.code.split(';') {
        let s = statement.trim();
        let Some(tree) = s
            .strip_prefix("pub use ")
            .or_else(|| s.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let mut found = Vec::new();
        let tree = tree.trim();
        let (head, rest) = match tree.split_once("::") {
            Some((h, r)) => (h.trim().to_owned(), r),
            None => continue,
        };
        expand(rest, vec![head], &mut found);
        for path in found {
            let Some(last) = path.last() else { continue };
            let name = last.split(" as ").last().unwrap_or(last).trim().to_owned();
            let mut abs = if matches!(path[0].as_str(), "crate" | "self" | "super") {
                absolute(module, &path)
            } else {
                let mut p = module.clone();
                p.extend(path.iter().cloned());
                p
            };
            if let Some(l) = abs.last_mut() {
                *l = l.split(" as ").next().unwrap_or(l).trim().to_owned();
            }
            out.insert(name, abs);
        }
    }
    out
}

/// The module that defines the item at absolute path `path`.
fn resolve(
    path: &[String],
    modules: &BTreeMap<Module, Source>,
    exports: &BTreeMap<Module, BTreeMap<String, Vec<String>>>,
    hops: usize,
) -> Option<Module> {
    let mut cut = path.len();
    while cut > 0 && !modules.contains_key(&path[..cut].to_vec()) {
        cut -= 1;
    }
    let module = path[..cut].to_vec();
    if hops < 8
        && let Some(item) = path.get(cut)
        && let Some(target) = exports.get(&module).and_then(|e| e.get(item))
    {
        let mut next = target.clone();
        next.extend(path[cut + 1..].iter().cloned());
        if next != path {
            return resolve(&next, modules, exports, hops + 1);
        }
    }
    Some(module)
}

fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules();
    let exports: BTreeMap<Module, BTreeMap<String, Vec<String>>> = modules
        .iter()
        .map(|(m, s)| (m.clone(), reexports(m, s)))
        .collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, source) in &modules {
        let entry = edges.entry(module.clone()).or_default();
        let mut all = paths(&source.code);
        all.extend(child_uses(module, source, &modules));
        for path in all {
            let abs = absolute(module, &path);
            if let Some(target) = resolve(&abs, &modules, &exports, 0)
                && &target != module
            {
                entry.insert(target);
            }
        }
    }
    edges
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(targets) = s.edges.get(v) {
            for w in targets {
                let Some((w, _)) = s.edges.get_key_value(w) else {
                    continue;
                };
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(lw));
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low[v];
                    s.low.insert(v, lv.min(iw));
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(name(w));
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.out
}

#[test]
fn no_import_cycle_between_modules() {
    let edges = graph();
    let found = cycles(&edges);
    let explain: Vec<String> = found
        .iter()
        .map(|c| {
            let members: BTreeSet<&String> = c.iter().collect();
            let inner: Vec<String> = edges
                .iter()
                .filter(|(from, _)| members.contains(&name(from)))
                .flat_map(|(from, to)| {
                    to.iter()
                        .filter(|t| members.contains(&name(t)))
                        .map(move |t| format!("{} -> {}", name(from), name(t)))
                })
                .collect();
            format!("cycle [{}]: {}", c.join(", "), inner.join("; "))
        })
        .collect();
    assert!(found.is_empty(), "import cycles:\n{}", explain.join("\n"));
}

#[test]
fn layers_call_one_way() {
    let edges = graph();
    for (from, targets) in &edges {
        for to in targets {
            let top = |m: &Module| m.first().cloned().unwrap_or_default();
            let (f, t) = (top(from), top(to));
            // Nothing calls the command layer; only the command layer calls operations.
            assert!(
                t != "cli" || f == "cli",
                "{} uses the command layer ({})",
                name(from),
                name(to)
            );
            assert!(
                t != "ops" || f == "cli" || f == "ops",
                "{} uses an operation ({}); domain modules never call ops",
                name(from),
                name(to)
            );
            // Pure modules know nothing of git.
            if ["model", "render", "cost", "secrets", "hook", "config"].contains(&f.as_str()) {
                assert!(
                    !["store", "worktree", "sync", "ops", "install", "process"]
                        .contains(&t.as_str()),
                    "{} is pure but uses {}",
                    name(from),
                    name(to)
                );
            }
        }
    }
}

#[test]
fn the_checker_sees_edges() {
    let edges = graph();
    let record = vec!["ops".to_owned(), "review".to_owned(), "record".to_owned()];
    assert!(
        edges[&record].iter().any(|t| name(t).starts_with("store")),
        "ops::review::record should use the store: {:?}",
        edges[&record]
    );
    let cli_review = vec!["cli".to_owned(), "review".to_owned()];
    assert!(
        edges[&cli_review]
            .iter()
            .any(|t| name(t).starts_with("ops"))
    );
}

/// The pure layers know nothing of git: no `gix::` item is named in `model`, `render`,
/// `cost`, `secrets`, `hook` or `config` — except `model::ids`, the one place an object id is
/// wrapped. (Values of git's syntax come through `util::git_value`.)
#[test]
fn pure_modules_name_no_gix_item() {
    let pure = ["model", "render", "cost", "secrets", "hook", "config"];
    let allowed: [&[&str]; 1] = [&["model", "ids"]];
    let mut offenders = Vec::new();
    for (module, source) in modules() {
        let Some(top) = module.first() else { continue };
        if !pure.contains(&top.as_str()) || allowed.iter().any(|a| module == *a) {
            continue;
        }
        for (n, line) in source.code.lines().enumerate() {
            if names_gix(line) {
                offenders.push(format!(
                    "{} (code line {}): {}",
                    name(&module),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "pure modules naming gix:\n{}",
        offenders.join("\n")
    );
    // The detector sees what it looks for: the store names gix on many lines.
    let store = &modules()[&vec!["store".to_owned(), "repo".to_owned()]];
    assert!(
        store.code.lines().any(names_gix),
        "the gix detector is blind"
    );
}

/// Whether `line` names a `gix::` path (`gix::ObjectId`, `use gix::{…}`), not `gix_hash`.
fn names_gix(line: &str) -> bool {
    line.match_indices("gix").any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let word_start = !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
        word_start && line[at + 3..].starts_with("::")
    })
}

/// `config` turns `pair.*` values into `Options` and nothing more: it imports neither the
/// reviewer machinery nor the packet.
#[test]
fn config_imports_neither_review_nor_packet() {
    let edges = graph();
    for (from, targets) in &edges {
        if from.first().map(String::as_str) != Some("config") {
            continue;
        }
        for to in targets {
            let top = to.first().map(String::as_str).unwrap_or_default();
            assert!(
                top != "review" && top != "packet",
                "{} uses {}",
                name(from),
                name(to)
            );
        }
    }
}
