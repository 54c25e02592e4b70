//! The Debian package as a user gets it: `scripts/package` builds it (a release build, then
//! cargo-deb); its contents and control fields are read with `dpkg-deb`; lintian, Debian's own
//! package checker, finds no error and no warning in it; it is unpacked into a throw-away root,
//! where the binary's `--version`, `man -l` on the page and the bash completion are run, the
//! Debian changelog's newest entry is read, and every link of the README and the guides shipped
//! beside it is followed.

#[path = "common/markdown.rs"]
mod markdown;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(program: &str, args: &[&str], dir: &Path) -> Output {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{program} cannot start: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_package_installs_rwtop_with_its_man_pages_and_completions() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out_dir = tempfile::tempdir().unwrap();
    let built = run(
        "scripts/package",
        &["--output", &out_dir.path().display().to_string()],
        repo,
    );
    let deb = PathBuf::from(text(&built).trim());
    let arch = text(&run("dpkg", &["--print-architecture"], repo));
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        deb.file_name().and_then(|n| n.to_str()),
        Some(format!("rwtop_{version}_{}.deb", arch.trim()).as_str()),
        "{}",
        deb.display()
    );
    let deb = deb.display().to_string();

    // The control fields.
    let field = |name: &str| {
        text(&run("dpkg-deb", &["-f", &deb, name], repo))
            .trim()
            .to_owned()
    };
    assert_eq!(field("Package"), "rwtop");
    assert_eq!(field("Version"), version);
    assert!(field("Depends").contains("libc6"), "{}", field("Depends"));

    lintian_finds_no_error_or_warning(&deb, repo);

    // Every file where a Debian user looks for it.
    let listing = text(&run("dpkg-deb", &["-c", &deb], repo));
    for path in [
        "./usr/bin/rwtop",
        "./usr/share/man/man1/rwtop.1.gz",
        "./usr/share/man/man1/rwtop-demo.1.gz",
        "./usr/share/man/man1/rwtop-sandbox-up.1.gz",
        "./usr/share/bash-completion/completions/rwtop",
        "./usr/share/zsh/vendor-completions/_rwtop",
        "./usr/share/fish/vendor_completions.d/rwtop.fish",
        "./usr/share/doc/rwtop/copyright",
        "./usr/share/doc/rwtop/changelog.gz",
        "./usr/share/doc/rwtop/LICENSE-MIT",
        "./usr/share/doc/rwtop/LICENSE-APACHE",
        "./usr/share/doc/rwtop/rwtop.sample.toml",
        "./usr/share/doc/rwtop/prometheus/rwtop.rules.yml",
        "./usr/share/doc/rwtop/grafana/rwtop-dashboard.json",
        "./usr/share/doc/rwtop/alertmanager/rwtop-inhibit.yml",
        "./usr/share/doc/rwtop/pt-online-schema-change/rwtop-throttle.pl",
    ] {
        assert!(
            listing.lines().any(|l| l.ends_with(path)),
            "{path} missing from the package:\n{listing}"
        );
    }
    assert!(!listing.contains("rwtop-generate"), "{listing}");

    // Installed into a throw-away root.
    let root = tempfile::tempdir().unwrap();
    run(
        "dpkg-deb",
        &["-x", &deb, &root.path().display().to_string()],
        repo,
    );
    let installed = |p: &str| root.path().join(p).display().to_string();

    let shown = text(&run(&installed("usr/bin/rwtop"), &["--version"], repo));
    let commit = text(&run("git", &["rev-parse", "--short=12", "HEAD"], repo));
    assert_eq!(
        shown.trim(),
        format!("rwtop {version} ({})", commit.trim()),
        "the version names the commit it was built from"
    );

    newest_changelog_entry_is_for(version, &installed("usr/share/doc/rwtop/changelog.gz"));

    let page = Command::new("man")
        .args(["-l", &installed("usr/share/man/man1/rwtop.1.gz")])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man (man-db) is installed");
    assert!(page.status.success(), "{page:?}");
    // man justifies its lines, so words are compared with single spaces between them.
    let page = String::from_utf8_lossy(&page.stdout);
    let words = page.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("NAME rwtop - Replication monitor"), "{page}");
    assert!(words.contains("SUBCOMMANDS rwtop-demo(1)"), "{page}");

    every_link_resolves(&root.path().join("usr/share/doc/rwtop"));

    // The bash completion completes commands and a command's own subcommands.
    let complete = |line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        let script = format!(
            "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; \
             COMP_POINT={}; _rwtop rwtop '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            installed("usr/share/bash-completion/completions/rwtop"),
            words.join(" "),
            words.len() - 1,
            line.len(),
            words[words.len() - 1],
            words[words.len() - 2],
        );
        text(&run("bash", &["-c", &script], repo))
    };
    let commands = complete("rwtop de");
    assert_eq!(commands.trim(), "demo", "{commands}");
    let actions = complete("rwtop sandbox u");
    assert_eq!(actions.trim(), "up", "{actions}");
}

/// Debian's checks of a binary package: errors and warnings fail the test. Its info, pedantic and
/// experimental tags do not: the binary is not built with Debian's hardening flags
/// (`hardening-no-fortify-functions`), cargo-deb writes no `md5sums`, the binary's strings hold
/// a false spelling hit, and the README's links ship the licenses and the sample config twice.
fn lintian_finds_no_error_or_warning(deb: &str, repo: &Path) {
    let out = Command::new("lintian")
        .args(["--fail-on", "error,warning", "--no-tag-display-limit", deb])
        .current_dir(repo)
        .output()
        .expect("lintian is installed (scripts/test installs it)");
    let said = String::from_utf8_lossy(&out.stdout);
    let flagged: Vec<&str> = said
        .lines()
        .filter(|l| l.starts_with("E: ") || l.starts_with("W: "))
        .collect();
    assert!(
        out.status.success() && flagged.is_empty(),
        "lintian {deb} ({}):\n{said}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new version needs its entry in `scripts/debian/changelog`: lintian does not compare the
/// changelog with the package's version.
fn newest_changelog_entry_is_for(version: &str, changelog: &str) {
    let out = Command::new("gzip")
        .args(["-dc", changelog])
        .output()
        .expect("gzip runs");
    assert!(out.status.success(), "{changelog}: {out:?}");
    let text = text(&out);
    let newest = text.lines().next().unwrap_or_default();
    assert!(
        newest.starts_with(&format!("rwtop ({version}) ")),
        "the changelog's newest entry is not for {version} (scripts/debian/changelog): {newest}"
    );
}

/// The README and the guides installed under `doc`, with every page and picture they link.
fn every_link_resolves(doc: &Path) {
    let pages = markdown::pages(doc);
    assert!(pages.len() > 20, "{pages:?}");
    let broken = markdown::broken_links(doc, &pages, &source_tree);
    assert!(
        broken.is_empty(),
        "not in the package:\n{}",
        broken.join("\n")
    );
}

/// Whether a link's target (relative to the doc folder) is in the source tree rather than the
/// docs: the development guide's links to test fixtures and scripts are for a clone, and the
/// package ships no source.
fn source_tree(target: &Path) -> bool {
    target.components().next().is_some_and(|top| {
        ["src", "tests", "scripts", "benches", ".ci"]
            .iter()
            .any(|t| top.as_os_str() == *t)
    })
}
