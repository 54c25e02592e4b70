//! Markdown pages and their links as GitHub reads them: the pages of the documentation, each
//! relative link (`[text](target)`, `![alt](target)`, `[label]: target`, outside fenced code
//! and code spans) and whether its file and `#anchor` exist. Shared by `tests/docs_links.rs`
//! (the clone) and `tests/package_deb.rs` (the installed package), by `#[path]`.
#![allow(dead_code, reason = "each test binary uses part of this file")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// README.md, then `docs/*.md` and `docs/guide/*.md`, as paths relative to `root`.
pub fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    for dir in ["docs", "docs/guide"] {
        let mut found: Vec<PathBuf> = markdown_in(&root.join(dir))
            .into_iter()
            .map(|p| Path::new(dir).join(file_name(&p)))
            .collect();
        found.sort();
        pages.extend(found);
    }
    pages
}

pub fn guide_pages(root: &Path) -> Vec<PathBuf> {
    let mut found = markdown_in(&root.join("docs/guide"));
    found.sort();
    found
}

pub fn markdown_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
        .collect()
}

pub fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Each broken link as `page:line: [target]: why`, in page order; a target (relative to
/// `root`) that `leaves_out` names is not followed.
pub fn broken_links(
    root: &Path,
    pages: &[PathBuf],
    leaves_out: &dyn Fn(&Path) -> bool,
) -> Vec<String> {
    let mut headings: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
    let mut broken = Vec::new();
    for page in pages {
        let text = read(&root.join(page));
        let dir = page.parent().unwrap_or(Path::new(""));
        for link in links(&text) {
            let (path, anchor) = match link.target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (link.target.as_str(), None),
            };
            let target = if path.is_empty() {
                page.clone()
            } else {
                normalize(&dir.join(path))
            };
            if leaves_out(&target) {
                continue;
            }
            let at = format!("{}:{}: [{}]", page.display(), link.line, link.target);
            if !root.join(&target).exists() {
                broken.push(format!("{at}: no such file {}", target.display()));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if target.extension().is_none_or(|x| x != "md") {
                continue;
            }
            let known = headings
                .entry(target.clone())
                .or_insert_with(|| anchors(&read(&root.join(&target))));
            if !known.contains(anchor) {
                broken.push(format!(
                    "{at}: no heading #{anchor} in {}",
                    target.display()
                ));
            }
        }
    }
    broken
}

/// `a/b/../c` as `a/c`; a path that climbs above the root keeps its `..` (and will not exist).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out: Vec<std::path::Component> = Vec::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir
                if matches!(out.last(), Some(std::path::Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out.iter().collect()
}

pub struct Link {
    pub line: usize,
    pub target: String,
}

/// The lines of a Markdown text outside fenced code blocks, with their 0-based numbers.
pub fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
        } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
        } else {
            out.push((i, line));
        }
    }
    out
}

/// Relative links of a Markdown text, with their line numbers.
pub fn links(text: &str) -> Vec<Link> {
    let mut out = Vec::new();
    for (i, line) in prose_lines(text) {
        let prose = without_code_spans(line);
        let mut targets = inline_targets(&prose);
        if let Some(t) = reference_target(&prose) {
            targets.push(t);
        }
        for target in targets {
            if is_relative(&target) {
                out.push(Link {
                    line: i + 1,
                    target,
                });
            }
        }
    }
    out
}

/// The line with every `code span` blanked out.
pub fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else if in_code {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// The targets of `[text](target)` and `![alt](target "title")` on one line.
pub fn inline_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let inside = after[..end].trim();
        let target = inside.split_whitespace().next().unwrap_or_default();
        let target = target.trim_start_matches('<').trim_end_matches('>');
        if !target.is_empty() {
            out.push(target.to_owned());
        }
        rest = &after[end..];
    }
    out
}

/// The target of a reference definition, `[label]: target`.
pub fn reference_target(line: &str) -> Option<String> {
    let line = line.trim_start();
    let rest = line.strip_prefix('[')?;
    let (_, after) = rest.split_once("]:")?;
    after.split_whitespace().next().map(str::to_owned)
}

pub fn is_relative(target: &str) -> bool {
    let scheme = target.split_once(':').is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.')
    });
    !scheme && !target.starts_with("//")
}

/// The anchors GitHub gives a page's headings: each heading's slug, a repeated one followed
/// by `-1`, `-2`, … Headings inside fenced code blocks are not headings.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim().trim_end_matches('#').trim());
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// GitHub's heading slug: the heading's text (links reduced to their text) in lower case,
/// every character but letters, digits, spaces, '-' and '_' dropped, spaces as '-'.
pub fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](target)` reads as its text.
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](") else {
            break;
        };
        let Some(end) = rest[open + close..].find(')') else {
            break;
        };
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..open + close]);
        rest = &rest[open + close + end + 1..];
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .collect()
}
