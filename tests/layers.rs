//! The floors of `docs/architecture.md`, held: every `crate::…` (and, in the binary, `rwtop::…`)
//! path in `src/` may only name a module on a lower floor, so data falls one way and there is no
//! cycle between top-level modules; only `ui` names the terminal crates; and outside the floors
//! that deal in server families and tests, code asks `mysql::Flavor` for a thing and never names
//! a `Family::`. Inside `poll`, the files import one another in one direction only. And every file
//! under `src/` starts with a `//!` header saying what it holds, since the page is a map and
//! names few files.
//!
//! The check reads the source as text (comments, doc comments and string literals left out, so a
//! doc link to a higher floor is not an import) and names the file, the line and the rule it
//! breaks.

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

/// The floors that may name a server's family (`Family::…`): the flavor's own (`mysql`), the
/// sandbox that starts servers of either family, and the binary's commands. Everywhere else,
/// tests aside, code asks the flavor for the thing that differs (a statement, a parse, whether a
/// mode runs), so that a third family or a new version is one floor's change.
const FAMILY_FLOORS: &[&str] = &["mysql", "sandbox", "cli"];

/// The modules whose files must import one another in one direction only: a room whose files
/// import in a circle cannot be read, nor split, one file at a time.
const ACYCLIC_ROOMS: &[&str] = &["poll"];

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

/// The text's code, line by line: comments cut off and string and character literals emptied
/// (a path in a message or a doc link is not an import). A string that runs over lines is
/// emptied on every one of them, raw strings included.
fn code_lines(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut lines = vec![String::new()];
    // Inside a string: how many `#` close it, `None` for a plain (escaping) one.
    let mut string: Option<Option<usize>> = None;
    let mut block_comment = false;
    let mut line_comment = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            lines.push(String::new());
            line_comment = false;
            i += 1;
            continue;
        }
        let code = lines.last_mut().expect("a line");
        if line_comment {
            i += 1;
        } else if block_comment {
            block_comment = !(c == '*' && next == Some('/'));
            i += if block_comment { 1 } else { 2 };
        } else if let Some(hashes) = string {
            match (c, hashes) {
                ('\\', None) => i += if next == Some('\n') { 1 } else { 2 },
                ('"', None) => {
                    string = None;
                    code.push('"');
                    i += 1;
                }
                ('"', Some(n)) if closes(&chars[i + 1..], n) => {
                    string = None;
                    code.push('"');
                    i += 1 + n;
                }
                _ => i += 1,
            }
        } else if c == '/' && next == Some('/') {
            line_comment = true;
        } else if c == '/' && next == Some('*') {
            block_comment = true;
            i += 2;
        } else if c == '"' {
            string = Some(None);
            code.push('"');
            i += 1;
        } else if c == 'r'
            && matches!(next, Some('"' | '#'))
            && !i
                .checked_sub(1)
                .and_then(|b| chars.get(b))
                .is_some_and(|b| b.is_alphanumeric() && *b != 'b' || *b == '_')
        {
            let hashes = chars[i + 1..].iter().take_while(|h| **h == '#').count();
            if chars.get(i + 1 + hashes) == Some(&'"') {
                string = Some(Some(hashes));
                code.push('"');
                i += 2 + hashes;
            } else {
                code.push(c);
                i += 1;
            }
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}') is emptied; a lifetime is code.
            let end = if next == Some('\\') {
                let after = chars.get(i + 3..).unwrap_or_default();
                after.iter().position(|e| *e == '\'').map(|at| i + 4 + at)
            } else {
                (chars.get(i + 2) == Some(&'\'')).then_some(i + 3)
            };
            code.push('\'');
            i = end.unwrap_or(i + 1);
        } else {
            code.push(c);
            i += 1;
        }
    }
    lines
}

/// Whether `after` a raw string's `"` come the `hashes` `#` that close it.
fn closes(after: &[char], hashes: usize) -> bool {
    after.len() >= hashes && after[..hashes].iter().all(|h| *h == '#')
}

/// Which of the lines are test code: from a `#[cfg(test)]` to the end of the item it marks (a
/// module's braces, or a `mod tests;` declaration), found by counting braces in `code`.
fn test_lines(code: &[String]) -> Vec<bool> {
    let mut test = vec![false; code.len()];
    // Within a test item: its brace depth, and whether its body has opened.
    let mut item: Option<(usize, bool)> = None;
    for (index, line) in code.iter().enumerate() {
        let mut rest = line.as_str();
        if item.is_none() {
            let Some(at) = rest.find("#[cfg(test)]") else {
                continue;
            };
            rest = &rest[at + "#[cfg(test)]".len()..];
            item = Some((0, false));
        }
        test[index] = true;
        for c in rest.chars() {
            let Some((depth, opened)) = item.as_mut() else {
                break;
            };
            match c {
                '{' => {
                    *depth += 1;
                    *opened = true;
                }
                '}' => *depth = depth.saturating_sub(1),
                ';' if !*opened => *opened = true,
                _ => continue,
            }
            if *opened && *depth == 0 {
                item = None;
            }
        }
    }
    test
}

/// Whether a file holds tests only, by its name (`tests.rs`, `…_tests.rs`).
fn is_test_file(name: &str) -> bool {
    let file = name.rsplit('/').next().unwrap_or(name);
    file == "tests.rs" || file.ends_with("_tests.rs")
}

/// Whether a line's code names a family of servers (`Family::…`, `mysql::Family::…`).
fn names_family(code: &str) -> bool {
    code.match_indices("Family::").any(|(at, _)| {
        !code[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
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
    let lines = code_lines(text);
    let tests = test_lines(&lines);
    let family_named = FAMILY_FLOORS.contains(&module) || is_test_file(name);
    for (index, code) in lines.iter().enumerate() {
        let code = code.as_str();
        if !family_named && !tests[index] && names_family(code) {
            breaches.push(Breach {
                file: name.to_owned(),
                line: index + 1,
                rule: format!(
                    "`{module}` names `Family::`: ask `mysql::Flavor` for what differs (a \
                     statement, a parse, whether a mode runs) rather than for the family"
                ),
            });
        }
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
        let code = code_lines(&text).join("\n");
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
        "{} line(s) break the floors' rules:\n{}",
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

/// Which of its sibling files each file of a room (a module's directory) names, with how many
/// lines: through `super::` (`super::super::` a level down) or `crate::{room}::`, directly or
/// through an item its `mod.rs` re-exports from a sibling; test code left out. `files` are the
/// room's files by their path under the room's directory; a file of tests only is test code.
fn sibling_edges(room: &str, files: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let stem = |path: &str| {
        let first = path.split('/').next().unwrap_or(path);
        first.trim_end_matches(".rs").to_owned()
    };
    let files: Vec<&(String, String)> = files.iter().filter(|(p, _)| !is_test_file(p)).collect();
    let siblings: Vec<String> = files
        .iter()
        .map(|(path, _)| stem(path))
        .filter(|s| s != "mod")
        .collect();
    // What `mod.rs` re-exports, by item: the sibling it comes from.
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    if let Some((_, text)) = files.iter().find(|(path, _)| path == "mod.rs") {
        let code = code_lines(text).join(" ");
        for from in &siblings {
            for item in named_modules(&code, &format!("pub use {from}::")) {
                reexported.insert(item, from.clone());
            }
        }
    }
    let mut edges = BTreeMap::new();
    for (path, text) in files {
        let own = stem(path);
        if own == "mod" {
            continue;
        }
        let depth = path.matches('/').count();
        let parent = "super::".repeat(depth + 1);
        let lines = code_lines(text);
        let tests = test_lines(&lines);
        for (code, _) in lines.iter().zip(&tests).filter(|(_, test)| !**test) {
            let named = named_modules(code, &parent)
                .into_iter()
                .chain(named_modules(code, &format!("crate::{room}::")));
            for name in named {
                let target = if siblings.contains(&name) {
                    name
                } else if let Some(from) = reexported.get(&name) {
                    from.clone()
                } else {
                    continue;
                };
                if target != own {
                    *edges.entry((own.clone(), target)).or_default() += 1;
                }
            }
        }
    }
    edges
}

/// A room's files, by their path under `src/{room}/`.
fn room_files(room: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(room);
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    files.sort();
    files
        .iter()
        .map(|file| {
            let path = file.strip_prefix(&dir).unwrap_or(file);
            let path = path
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned());
            let text = std::fs::read_to_string(file).expect("a readable source file");
            (path.collect::<Vec<_>>().join("/"), text)
        })
        .collect()
}

#[test]
fn a_rooms_files_import_one_another_one_way() {
    for room in ACYCLIC_ROOMS {
        let files = room_files(room);
        assert!(
            files.len() > 10,
            "read only {} files in src/{room}/",
            files.len()
        );
        let edges = sibling_edges(room, &files);
        assert!(
            !edges.is_empty(),
            "src/{room}/ names no sibling: is the reading right?"
        );
        let cycle = find_cycle(&edges);
        assert!(
            cycle.is_none(),
            "src/{room}/'s files import in a circle: {} (give what they share a file of its own \
             below them)",
            cycle.unwrap_or_default().join(" → ")
        );
    }
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

/// The family rule catches a planted `Family::` in code outside its floors, and only there: not
/// in a comment, a string (one over two lines included), a test module or a test file, nor on
/// the floors that deal in families.
#[test]
fn the_family_rule_catches_a_planted_breach() {
    let planted = "fn sql(f: &Flavor) -> &str {\n    \
                   if f.family == crate::mysql::Family::Mysql { \"a\" } else { \"b\" }\n}\n";
    let found = check_file("src/probe/modes.rs", "probe", false, planted);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].line, 2);
    assert!(found[0].rule.contains("`Family::`"), "{found:?}");
    let imported = "use crate::mysql::Family;\nlet n = match f { Family::Mariadb => 1, _ => 2 };\n";
    let found = check_file("src/poll/x.rs", "poll", false, imported);
    assert_eq!(found.iter().map(|b| b.line).collect::<Vec<_>>(), [2]);

    for (name, module, binary) in [
        ("src/mysql/flavor.rs", "mysql", false),
        ("src/sandbox/plan.rs", "sandbox", false),
        ("src/cli/lint_cmd.rs", "cli", true),
        ("src/store/apply_rate/tests.rs", "store", false),
        ("src/alerts/lint/hygiene_tests.rs", "alerts", false),
    ] {
        let found = check_file(name, module, binary, planted);
        assert!(found.is_empty(), "{name}: {found:?}");
    }

    let test_module = "fn f() {}\n#[cfg(test)]\nmod tests {\n    fn g() { let _ = Family::Mysql; }\n}\n\
                       fn h() { let _ = Family::Mariadb; }\n";
    let found = check_file("src/store/x.rs", "store", false, test_module);
    assert_eq!(found.iter().map(|b| b.line).collect::<Vec<_>>(), [6]);
    let test_file = "#[cfg(test)]\n#[path = \"x_tests.rs\"]\nmod tests;\n\
                     fn k() { let _ = Family::Mysql; }\n";
    let found = check_file("src/store/x.rs", "store", false, test_file);
    assert_eq!(found.iter().map(|b| b.line).collect::<Vec<_>>(), [4]);

    let quiet = "// Family::Mysql\nlet s = \"Family::Mysql\";\nlet t = MyFamily::X;\n\
                 /* Family::Mariadb */\nlet u = \"over \\\n    Family::Mysql two lines\";\n\
                 let v = r#\"Family::Mysql \"quoted\"\"#;\nlet w = '{';\n";
    let found = check_file("src/probe/x.rs", "probe", false, quiet);
    assert!(found.is_empty(), "{found:?}");
}

/// The room check catches a planted circle among a room's files, one made through an item its
/// `mod.rs` re-exports included; a test module's or a test file's import, a comment, and a path
/// inside a file's own submodule make no edge.
#[test]
fn the_room_check_catches_a_planted_circle() {
    let file = |path: &str, text: &str| (path.to_owned(), text.to_owned());
    let room = vec![
        file(
            "mod.rs",
            "mod a;\nmod b;\nmod c;\nmod d;\npub use b::{Other, Shared};\n",
        ),
        file("a.rs", "use super::b::Thing;\n"),
        file(
            "b.rs",
            "use super::c::Step;\n#[cfg(test)]\nmod tests {\n    use super::super::a::Help;\n}\n",
        ),
        file(
            "c.rs",
            "fn f() -> super::Shared { todo!() }\n// super::a::Nothing\n",
        ),
        file("d/inner.rs", "use super::super::a::X;\nuse super::Local;\n"),
        file("c_tests.rs", "use super::a::Help;\n"),
    ];
    let edges = sibling_edges("room", &room);
    let named: Vec<(&str, &str)> = edges
        .keys()
        .map(|(from, to)| (from.as_str(), to.as_str()))
        .collect();
    assert_eq!(named, [("a", "b"), ("b", "c"), ("c", "b"), ("d", "a")]);
    let mut cycle = find_cycle(&edges).expect("b and c import each other");
    cycle.sort();
    assert_eq!(cycle, ["b", "c"]);

    let mut one_way = room.clone();
    one_way[3] = file("c.rs", "fn f() {}\n");
    one_way[4] = file("d/inner.rs", "fn g() -> crate::room::c::Step { todo!() }\n");
    let edges = sibling_edges("room", &one_way);
    assert!(edges.contains_key(&("d".to_owned(), "c".to_owned())));
    assert!(find_cycle(&edges).is_none(), "{edges:?}");
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
