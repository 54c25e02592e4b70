//! `rwtop --help` and every command's help fit 100 columns, and the command list is one line per
//! command: the short text leads, the long one is in `rwtop <command> --help`.

use std::process::Command;

const COLUMNS: usize = 100;

/// The help text of `rwtop <args…>`, on a terminal wider than the limit.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rwtop"))
        .args(args)
        .env("COLUMNS", "250")
        .output()
        .unwrap();
    assert!(out.status.success(), "rwtop {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The names in a help text's `Commands:` section, checking that each takes one line.
fn commands(text: &str, of: &str) -> Vec<String> {
    let section = text
        .split("\n\n")
        .find(|block| block.starts_with("Commands:"))
        .unwrap_or_else(|| panic!("{of}: no Commands section in\n{text}"));
    section
        .lines()
        .skip(1)
        .map(|line| {
            let name = line
                .strip_prefix("  ")
                .filter(|rest| !rest.starts_with(' '));
            let name = name.unwrap_or_else(|| {
                panic!("{of}: a command's text runs onto a second line: {line:?}\n{text}")
            });
            let (name, about) = name.split_once(' ').unwrap_or((name, ""));
            assert!(!about.trim().is_empty(), "{of}: {name} has no text");
            name.to_owned()
        })
        .filter(|name| name != "help")
        .collect()
}

fn fits(text: &str, of: &str) {
    for line in text.lines() {
        assert!(
            line.chars().count() <= COLUMNS,
            "{of}: {} columns: {line:?}",
            line.chars().count()
        );
    }
}

#[test]
fn every_help_fits_100_columns_with_one_line_per_command() {
    let top = help(&["--help"]);
    let names = commands(&top, "rwtop --help");
    assert!(names.len() >= 10, "{names:?}");
    assert!(names.iter().any(|n| n == "sandbox"), "{names:?}");
    let mut seen = 0;
    let mut todo: Vec<Vec<String>> = vec![vec![]];
    todo.extend(names.into_iter().map(|n| vec![n]));
    while let Some(path) = todo.pop() {
        for flag in ["-h", "--help"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(flag);
            let text = help(&args);
            let of = format!("rwtop {}", args.join(" "));
            fits(&text, &of);
            seen += 1;
            if flag == "--help" && !path.is_empty() && text.contains("\nCommands:\n") {
                for sub in commands(&text, &of) {
                    let mut deeper = path.clone();
                    deeper.push(sub);
                    todo.push(deeper);
                }
            }
        }
    }
    // The top level, each command and the sandbox's three, twice.
    assert!(seen >= 2 * (1 + 10 + 3), "{seen} help texts");
}

#[test]
fn the_long_help_says_more_than_the_short() {
    for args in [&["demo"][..], &["whatif"], &["report"]] {
        let short = help(&[args, &["-h"]].concat());
        let long = help(&[args, &["--help"]].concat());
        assert!(
            long.len() > short.len() + 100,
            "rwtop {args:?} --help adds nothing to -h:\n{long}"
        );
    }
}
