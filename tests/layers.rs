//! The floors of `docs/architecture.md`, held: every `crate::…` (and, in the binary, `rwtop::…`)
//! path in `src/` may only name a module on a lower floor, so data falls one way and there is no
//! cycle between top-level modules; and only `ui` names the terminal crates. And every file
//! under `src/` starts with a `//!` header saying what it holds, since the page is a map and
//! names few files.
//!
//! The check reads the source as text (comments and doc comments left out, so a doc link to a
//! higher floor is not an import) and names the file, the line and the rule it breaks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lowest first. A module may import from floors below its own, never from its own floor or
/// above: the tasks on one floor (`poll`, `probe`, `drain`) know nothing of each other.
const FLOORS: &[&[&str]] = &[
    &["gtid", "units"],
    &["mysql"],
    &["topology"],
    &["poll", "probe", "drain"],
    &["store"],
    &["alerts", "whatif"],
    &["config"],
    &["engine"],
    &["export"],
    &["record"],
    &["report"],
    &["ui"],
    &["sandbox"],
    &["demo"],
    // The binary: `main.rs` and `cli/`, over the library.
    &["cli"],
    &["main"],
];

/// Crates only the terminal floor may name.
const TERMINAL_CRATES: &[&str] = &["ratatui", "crossterm"];
const TERMINAL_FLOORS: &[&str] = &["ui"];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

/// The top-level module a file under `src/` belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let first = relative
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .unwrap_or_default();
    first.trim_end_matches(".rs").to_owned()
}

/// A line's code: the comment cut off and string literals emptied (a path in a message or a
/// doc link is not an import).
fn code_part(line: &str) -> String {
    let mut code = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                '\\' => {
                    chars.next();
                }
                '"' => {
                    in_string = false;
                    code.push('"');
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                code.push('"');
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => code.push(c),
        }
    }
    code
}

/// Every top-level module a line names through `prefix` (`crate::` or `rwtop::`), including
/// the members of a group: `use crate::{a::X, b};` names `a` and `b`.
fn named_modules(code: &str, prefix: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        // `xcrate::` or `my_rwtop::` are other names.
        let before = rest[..at].chars().last();
        rest = &rest[at + prefix.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push(name);
            }
        }
    }
    found
}

/// One broken rule, as the failure prints it.
#[derive(Debug, PartialEq, Eq)]
struct Breach {
    file: String,
    line: usize,
    rule: String,
}

/// Checks one file's text; `module` is the top-level module it belongs to and `binary` whether
/// it is part of the binary (where `crate::` is the binary and `rwtop::` the library).
fn check_file(name: &str, module: &str, binary: bool, text: &str) -> Vec<Breach> {
    let mut breaches = Vec::new();
    let Some(own) = floor_of(module) else {
        return vec![Breach {
            file: name.to_owned(),
            line: 0,
            rule: format!(
                "top-level module `{module}` is on no floor: add it to FLOORS in tests/layers.rs \
                 and to docs/architecture.md"
            ),
        }];
    };
    let library_prefix = if binary { "rwtop::" } else { "crate::" };
    for (index, line) in text.lines().enumerate() {
        let code = code_part(line);
        let code = code.as_str();
        let mut imported = named_modules(code, library_prefix);
        if binary {
            imported.extend(named_modules(code, "crate::"));
        }
        for target in imported {
            if target == module || target == "self" || target == "super" {
                continue;
            }
            let rule = match floor_of(&target) {
                None => continue, // an item of the crate root (a macro, a re-export), not a module
                Some(floor) if floor < own => continue,
                Some(floor) if floor == own => format!(
                    "`{module}` imports `{target}`, a module on its own floor: tasks on one \
                     floor do not know each other (go through a floor below both)"
                ),
                Some(_) => format!(
                    "`{module}` imports `{target}`, which is on a higher floor: data falls one \
                     way (move the type down, or invert the dependency with a trait below)"
                ),
            };
            breaches.push(Breach {
                file: name.to_owned(),
                line: index + 1,
                rule,
            });
        }
        if !TERMINAL_FLOORS.contains(&module) && !binary {
            for krate in TERMINAL_CRATES {
                if named_modules(code, &format!("{krate}::")).is_empty()
                    && !code.contains(&format!("use {krate}"))
                {
                    continue;
                }
                breaches.push(Breach {
                    file: name.to_owned(),
                    line: index + 1,
                    rule: format!("`{module}` names `{krate}`: only `ui` may draw the terminal"),
                });
            }
        }
    }
    breaches
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_import_runs_down_a_floor() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 100, "read only {} files in src/", files.len());
    let mut breaches = Vec::new();
    let mut edges: BTreeMap<(String, String), usize> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        if module == "lib" {
            continue; // declares the modules, imports nothing
        }
        let binary = module == "cli" || module == "main";
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let name = file
            .strip_prefix(src.parent().unwrap_or(&src))
            .unwrap_or(file)
            .display()
            .to_string();
        let code: String = text.lines().map(|l| code_part(l) + "\n").collect();
        for target in named_modules(&code, if binary { "rwtop::" } else { "crate::" }) {
            if target != module && floor_of(&target).is_some() {
                *edges.entry((module.clone(), target)).or_default() += 1;
            }
        }
        breaches.extend(check_file(&name, &module, binary, &text));
    }
    let report: Vec<String> = breaches
        .iter()
        .map(|b| format!("{}:{}: {}", b.file, b.line, b.rule))
        .collect();
    assert!(
        report.is_empty(),
        "{} import(s) break the floors:\n{}",
        report.len(),
        report.join("\n")
    );
    // Strict floors leave no room for a cycle; say so from the edges themselves too.
    assert!(
        find_cycle(&edges).is_none(),
        "cycle: {:?}",
        find_cycle(&edges)
    );
}

/// Depth-first search from `node`: the modules on a cycle through `path`, if any.
fn visit<'a>(
    node: &'a str,
    graph: &BTreeMap<&'a str, Vec<&'a str>>,
    path: &mut Vec<&'a str>,
    done: &mut Vec<&'a str>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|n| *n == node) {
        return Some(path[at..].iter().map(|s| (*s).to_owned()).collect());
    }
    if done.contains(&node) {
        return None;
    }
    path.push(node);
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = visit(next, graph, path, done) {
            return Some(cycle);
        }
    }
    path.pop();
    done.push(node);
    None
}

/// A cycle among top-level modules, as the list of modules on it.
fn find_cycle(edges: &BTreeMap<(String, String), usize>) -> Option<Vec<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        graph.entry(from).or_default().push(to);
    }
    let mut done = Vec::new();
    for start in graph.keys() {
        if let Some(cycle) = visit(start, &graph, &mut Vec::new(), &mut done) {
            return Some(cycle);
        }
    }
    None
}

/// The checker itself must catch what it is for: a planted upward import, a sideways one, a
/// grouped one, and ratatui outside `ui`; and must not flag comments or downward imports.
#[test]
fn the_checker_catches_planted_breaches() {
    let upward = "use crate::store::Snapshot;\n";
    let found = check_file("src/probe/route.rs", "probe", false, upward);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, 1);
    assert!(found[0].rule.contains("higher floor"), "{found:?}");

    let grouped = "// fine\nuse crate::{gtid::GtidSet, engine::Engine};\n";
    let found = check_file("src/store/mod.rs", "store", false, grouped);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].line, found[0].rule.contains("`engine`")),
        (2, true)
    );

    let sideways = "    let x = crate::drain::targets(view);\n";
    let found = check_file("src/probe/runner.rs", "probe", false, sideways);
    assert!(found[0].rule.contains("own floor"), "{found:?}");

    let drawn = "use ratatui::style::Style;\n";
    assert_eq!(
        check_file("src/alerts/x.rs", "alerts", false, drawn).len(),
        1
    );
    assert!(check_file("src/ui/x.rs", "ui", false, drawn).is_empty());

    let quiet = "/// See [`crate::engine::Engine`].\nuse crate::mysql::NodeConn; // crate::ui\n\
                 let s = \"crate::ui\";\n";
    assert!(check_file("src/poll/x.rs", "poll", false, quiet).is_empty());

    let binary = "use rwtop::engine::Engine;\nuse crate::cli::output;\n";
    assert!(check_file("src/cli/x.rs", "cli", true, binary).is_empty());

    let unknown = check_file("src/newthing/x.rs", "newthing", false, "");
    assert!(unknown[0].rule.contains("on no floor"), "{unknown:?}");

    let mut edges = BTreeMap::new();
    edges.insert(("store".to_owned(), "alerts".to_owned()), 1);
    edges.insert(("alerts".to_owned(), "store".to_owned()), 1);
    assert!(find_cycle(&edges).is_some());
}

/// What a file's leading `//!` header says: its lines joined, `None` when the file does not
/// start with one (blank lines and inner attributes such as `#![expect(...)]` may come first).
fn module_doc(text: &str) -> Option<String> {
    let mut doc = Vec::new();
    let mut in_attribute = false;
    for line in text.lines().map(str::trim) {
        if in_attribute {
            in_attribute = !line.ends_with(']');
            continue;
        }
        if let Some(words) = line.strip_prefix("//!") {
            doc.push(words.trim());
        } else if line.starts_with("#![") {
            in_attribute = !line.ends_with(']');
        } else if !line.is_empty() || !doc.is_empty() {
            break;
        }
    }
    let joined = doc.join(" ").trim().to_owned();
    (!joined.is_empty()).then_some(joined)
}

/// A header says what the file holds: a sentence, not a word. The threshold only catches an
/// empty or placeholder header; whether it is a good one is the reviewer's call.
const HEADER_MIN_WORDS: usize = 4;

/// Every file under `src/` says what it holds in a `//!` header, so `docs/architecture.md` can
/// stay a map of the floors and the few types that matter rather than a catalogue of files.
#[test]
fn every_source_file_starts_with_a_header_saying_what_it_holds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    assert!(files.len() > 100, "read only {} files in src/", files.len());
    let mut missing = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let name = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        match module_doc(&text) {
            None => missing.push(format!("{name}: no `//!` header")),
            Some(doc) if doc.split_whitespace().count() < HEADER_MIN_WORDS => {
                missing.push(format!("{name}: a header of a few words ({doc:?})"));
            }
            Some(_) => {}
        }
    }
    assert!(
        missing.is_empty(),
        "every file under src/ starts with a `//!` header saying what it holds \
         (docs/architecture.md):\n{}",
        missing.join("\n")
    );
}

/// A file that passes this many lines is asking to be split, by concept: one type's methods
/// spread over three files to meet the number would make the room harder to find, not easier.
const MAX_LINES: usize = 600;

#[test]
fn no_source_file_is_over_six_hundred_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 100, "read only {} files in src/", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).ok()?.lines().count();
            let name = file.strip_prefix(root).unwrap_or(file).display();
            (lines > MAX_LINES).then(|| format!("{name}: {lines} lines"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split by concept):\n{}",
        long.join("\n")
    );
}

/// The header check reads what a header is and is not.
#[test]
fn the_header_check_reads_headers() {
    let plain = "//! The store's task: events in, snapshots out.\n\nuse std::time::Duration;\n";
    assert_eq!(
        module_doc(plain).as_deref(),
        Some("The store's task: events in, snapshots out.")
    );
    let after_attribute = "#![expect(\n    clippy::float_cmp,\n    reason = \"exact\"\n)]\n\n\
                           //! What-if's own tests.\n//! Two lines.\nuse super::*;\n";
    assert_eq!(
        module_doc(after_attribute).as_deref(),
        Some("What-if's own tests. Two lines.")
    );
    assert_eq!(module_doc("use super::*;\n//! Too late.\n"), None);
    assert_eq!(module_doc("/// An item's doc.\nfn f() {}\n"), None);
    assert_eq!(module_doc("//!\n//!\nmod x;\n"), None);
}
