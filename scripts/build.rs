//! Build script: names the commit the binary is built from, for `rwtop --version`.
//!
//! `RWTOP_COMMIT` in the environment wins (a build from a source tarball, where there is no
//! repository); otherwise `git rev-parse` of the checkout; otherwise "unknown commit". The
//! script runs again when the checkout's HEAD or the branch it points at moves.

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=RWTOP_COMMIT");
    let commit = std::env::var("RWTOP_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown commit".to_owned());
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = PathBuf::from(dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            let common = git(&["rev-parse", "--git-common-dir"]).map_or(dir, PathBuf::from);
            println!("cargo:rerun-if-changed={}", common.join(branch).display());
            println!(
                "cargo:rerun-if-changed={}",
                common.join("packed-refs").display()
            );
        }
    }
    println!("cargo:rustc-env=RWTOP_COMMIT={commit}");
}
