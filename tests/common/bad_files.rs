//! Files of bad input that say what their error must mention, in a first line
//! `# expect: line N, key `K`, says: TEXT`: adding a case needs no new test code. Shared by the
//! config and theme tests (included by path, without the sandbox harness).
#![allow(dead_code, reason = "each test binary uses part of this file")]

use std::fs;
use std::path::{Path, PathBuf};

pub struct BadFile {
    pub path: PathBuf,
    /// The file name, which the message must name.
    pub name: String,
    pub text: String,
    /// `line N`, followed by a comma in messages.
    pub line: String,
    pub key: String,
    pub says: String,
}

/// Every `.toml` file in `dir`, sorted, at least `min` of them.
pub fn bad_files(dir: &Path, min: usize) -> Vec<BadFile> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= min,
        "only {} files in {}",
        paths.len(),
        dir.display()
    );
    paths
        .into_iter()
        .map(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = fs::read_to_string(&path).expect("read bad file");
            let expect = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("# expect: "));
            let (line, rest) = expect.and_then(|e| e.split_once(", key ")).expect(&name);
            let (key, says) = rest.split_once(", says: ").expect(&name);
            let (line, key, says) = (line.to_owned(), key.to_owned(), says.to_owned());
            BadFile {
                path,
                name,
                text,
                line,
                key,
                says,
            }
        })
        .collect()
}

impl BadFile {
    /// Checks that `message` names `origin`, the line, the key and the text.
    pub fn assert_named_in(&self, message: &str, origin: &str) {
        assert_mentions(
            message,
            &[origin, &format!("{},", self.line), &self.key, &self.says],
        );
    }
}

pub fn assert_mentions(message: &str, needles: &[&str]) {
    for needle in needles {
        assert!(message.contains(needle), "no {needle:?} in:\n{message}");
    }
}
