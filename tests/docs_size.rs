//! The docs meant to stay short, held to their length, and the benchmarks page held to its shape:
//! a section for every bench in `Cargo.toml`, each with the command that runs it, and its history
//! cited by commit rather than by issue.

use std::path::Path;

/// Each short doc and the most lines it may have.
const LIMITS: &[(&str, usize)] = &[("docs/benchmarks.md", 400)];

fn read(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("reading {}: {e}", full.display()))
}

/// The names of the `[[bench]]` entries of a `Cargo.toml`.
fn bench_names(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_bench = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bench = line == "[[bench]]";
        } else if in_bench && let Some(value) = line.strip_prefix("name") {
            let value = value.trim_start().trim_start_matches('=').trim();
            names.push(value.trim_matches('"').to_owned());
        }
    }
    names
}

/// What a benchmarks page lacks or should not have: a missing `cargo bench --bench NAME` per
/// bench, and any "issue N" citation (the history is in git, cited by commit).
fn shape_faults(page: &str, benches: &[String]) -> Vec<String> {
    let mut faults: Vec<String> = benches
        .iter()
        .filter(|name| !page.contains(&format!("cargo bench --bench {name}")))
        .map(|name| format!("no `cargo bench --bench {name}` to run the {name} bench"))
        .collect();
    let lower = page.to_lowercase();
    for (at, _) in lower.match_indices("issue ") {
        let after = &lower[at + "issue ".len()..];
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            let line = lower[..at].matches('\n').count() + 1;
            faults.push(format!(
                "line {line} cites an issue; cite the commit instead"
            ));
        }
    }
    faults
}

#[test]
fn short_docs_stay_short() {
    for (path, limit) in LIMITS {
        let lines = read(path).lines().count();
        assert!(
            lines <= *limit,
            "{path} has {lines} lines, over its {limit}: keep today's figures there and leave \
             the history to git (cite the commits)"
        );
    }
}

#[test]
fn the_benchmarks_page_has_every_bench_and_cites_commits() {
    let benches = bench_names(&read("Cargo.toml"));
    assert!(
        benches.len() >= 7,
        "Cargo.toml's [[bench]] entries not read: {benches:?}"
    );
    let faults = shape_faults(&read("docs/benchmarks.md"), &benches);
    assert!(
        faults.is_empty(),
        "docs/benchmarks.md:\n{}",
        faults.join("\n")
    );
}

#[test]
fn the_shape_check_finds_what_it_looks_for() {
    let benches = vec!["scale".to_owned(), "render".to_owned()];
    let good =
        "## Scale\n\n    cargo bench --bench scale\n\n## Render\n\ncargo bench --bench render\n";
    assert!(shape_faults(good, &benches).is_empty());
    let faults = shape_faults(
        "cargo bench --bench scale\nas in issue 18's steps\n",
        &benches,
    );
    assert_eq!(faults.len(), 2, "{faults:?}");
    assert!(faults[0].contains("render"), "{faults:?}");
    assert!(faults[1].starts_with("line 2 "), "{faults:?}");
    assert_eq!(
        bench_names("[[bench]]\nname = \"scale\"\nharness = false\n\n[lib]\nname = \"x\"\n"),
        vec!["scale".to_owned()]
    );
}
