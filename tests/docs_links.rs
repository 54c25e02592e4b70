//! The documentation holds together: every relative link in README.md, `docs/*.md` and
//! `docs/guide/*.md` names a file that exists and, where it has a `#anchor`, a heading of that
//! file (GitHub's slugs); README.md stays a front page of at most 300 lines and links every
//! guide. A moved or renamed section then fails here rather than on a reader.
//!
//! Links are read as Markdown writes them, `[text](target)`, `![alt](target)` and
//! `[label]: target`, outside fenced code blocks and inline code spans; links with a scheme
//! (`https:`, `mailto:`) are not followed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most lines README.md may have: beyond a front page, the text belongs in a guide.
const README_MAX_LINES: usize = 300;

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = pages(root);
    assert!(
        pages.len() > 10,
        "found only {} pages under {}",
        pages.len(),
        root.display()
    );
    let broken = broken_links(root, &pages);
    assert!(
        broken.is_empty(),
        "{} broken link(s): fix the target or the anchor (a heading's slug is its text in lower \
         case, punctuation dropped, spaces as '-'):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_readme_is_a_front_page() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = read(&root.join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move the detail into a page \
         of docs/guide/ and link it"
    );
    let linked: BTreeSet<String> = links(&readme)
        .into_iter()
        .map(|l| l.target.split('#').next().unwrap_or_default().to_owned())
        .collect();
    let unlinked: Vec<String> = guide_pages(root)
        .into_iter()
        .map(|p| format!("docs/guide/{}", file_name(&p)))
        .filter(|p| !linked.contains(p))
        .collect();
    assert!(
        unlinked.is_empty(),
        "README.md links no guide page {unlinked:?}: add it to the list under \"Guides\""
    );
}

/// A checker that finds nothing finds nothing wrong: a tree with a missing file, a missing
/// anchor and a good link of each kind must report exactly the two bad ones.
#[test]
fn the_checker_reports_a_missing_file_and_a_missing_anchor() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::fs::create_dir_all(root.join("docs/guide")).unwrap();
    std::fs::write(
        root.join("README.md"),
        "# Top\n\n## The keys\n\nSee [lag](docs/guide/watching.md#lag-by-position-mariadb), \
         [gone](docs/gone.md), [keys](#the-keys) and [bad](docs/guide/watching.md#nope).\n\n\
         ```sh\n[not a link](nowhere.md)\n```\n\nAnd `[code](nowhere.md)` too.\n",
    )
    .unwrap();
    std::fs::write(
        root.join("docs/guide/watching.md"),
        "# Watching\n\n## Lag by position (MariaDB)\n\nBack to [the keys](../../README.md#the-keys).\n",
    )
    .unwrap();
    let pages = pages(root);
    let broken = broken_links(root, &pages);
    assert_eq!(broken.len(), 2, "{broken:#?}");
    assert!(broken[0].contains("docs/gone.md") && broken[0].contains("no such file"));
    assert!(broken[1].contains("#nope") && broken[1].contains("no heading"));
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug("Lag by position (MariaDB)"), "lag-by-position-mariadb");
    assert_eq!(
        slug("Nodes, discovery and `snapshot`"),
        "nodes-discovery-and-snapshot"
    );
    assert_eq!(slug("`[probe]` in the config"), "probe-in-the-config");
    assert_eq!(slug("The `disk_filling` alert"), "the-disk_filling-alert");
    assert_eq!(
        slug("The proxies' consistency modes as strategies"),
        "the-proxies-consistency-modes-as-strategies"
    );
    assert_eq!(slug("Past one machine: fleets"), "past-one-machine-fleets");
    assert_eq!(
        slug("Quick start (fresh Debian 12 with Rust)"),
        "quick-start-fresh-debian-12-with-rust"
    );
    assert_eq!(
        slug("The throttle: `GET /throttle`"),
        "the-throttle-get-throttle"
    );
    assert_eq!(slug("What-if, no writes"), "what-if-no-writes");
}

#[test]
fn repeated_headings_take_a_number() {
    let anchors = anchors("# A\n\n## Results\n\n## Results\n\n```\n# Results\n```\n");
    let expected: BTreeSet<String> = ["a", "results", "results-1"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(anchors, expected);
}

/// README.md, then `docs/*.md` and `docs/guide/*.md`, as paths relative to `root`.
fn pages(root: &Path) -> Vec<PathBuf> {
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

fn guide_pages(root: &Path) -> Vec<PathBuf> {
    let mut found = markdown_in(&root.join("docs/guide"));
    found.sort();
    found
}

fn markdown_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
        .collect()
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Each broken link as `page:line: [target]: why`, in page order.
fn broken_links(root: &Path, pages: &[PathBuf]) -> Vec<String> {
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
fn normalize(path: &Path) -> PathBuf {
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

struct Link {
    line: usize,
    target: String,
}

/// The lines of a Markdown text outside fenced code blocks, with their 0-based numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
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
fn links(text: &str) -> Vec<Link> {
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
fn without_code_spans(line: &str) -> String {
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
fn inline_targets(line: &str) -> Vec<String> {
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
fn reference_target(line: &str) -> Option<String> {
    let line = line.trim_start();
    let rest = line.strip_prefix('[')?;
    let (_, after) = rest.split_once("]:")?;
    after.split_whitespace().next().map(str::to_owned)
}

fn is_relative(target: &str) -> bool {
    let scheme = target.split_once(':').is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.')
    });
    !scheme && !target.starts_with("//")
}

/// The anchors GitHub gives a page's headings: each heading's slug, a repeated one followed
/// by `-1`, `-2`, … Headings inside fenced code blocks are not headings.
fn anchors(text: &str) -> BTreeSet<String> {
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
fn slug(heading: &str) -> String {
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
