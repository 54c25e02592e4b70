//! `rwtop lint --json` run over a sandbox's own config, as an operator runs it, and a finding
//! looked up in its document.

use std::process::Command;

use serde_json::Value;

use super::TestSandbox;

/// One `rwtop lint --json` over the sandbox: its exit code and document.
pub fn lint(t: &TestSandbox) -> (i32, Value) {
    let config = t.sandbox().dir().join("rwtop.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_rwtop"))
        .args(["lint", "--json", "--wait", "20s", "--config"])
        .arg(&config)
        .output()
        .expect("running rwtop lint");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "rwtop lint --json printed no JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), doc)
}

/// The finding `id` on `node`, if the document has it.
pub fn finding<'a>(doc: &'a Value, id: &str, node: &str) -> Option<&'a Value> {
    doc["lint"]
        .as_array()?
        .iter()
        .find(|f| f["id"] == id && f["node"] == node)
}
