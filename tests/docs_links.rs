//! The documentation holds together: every relative link in README.md, `docs/*.md` and
//! `docs/guide/*.md` names a file that exists and, where it has a `#anchor`, a heading of that
//! file (GitHub's slugs); README.md stays a front page of at most 300 lines and links every
//! guide. A moved or renamed section then fails here rather than on a reader.
//!
//! Links are read as Markdown writes them, `[text](target)`, `![alt](target)` and
//! `[label]: target`, outside fenced code blocks and inline code spans; links with a scheme
//! (`https:`, `mailto:`) are not followed.

#[path = "common/markdown.rs"]
mod markdown;

use std::collections::BTreeSet;
use std::path::Path;

use markdown::{anchors, broken_links, file_name, guide_pages, links, pages, read, slug};

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
    let broken = broken_links(root, &pages, &|_| false);
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
    let broken = broken_links(root, &pages, &|_| false);
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
