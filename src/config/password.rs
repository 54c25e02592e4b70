//! The monitor user's password, which never has to appear in argv or in the config file.
//!
//! Order, first found wins: a DSN's inline password (that node only), `RWTOP_PASSWORD`, the
//! password file (`--password-file` over `password_file`), then a prompt. The environment beats
//! the file so that a one-off run can override a configured file without editing it.

use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};

use super::{ConfigError, Origin};
use crate::mysql::Secret;

/// The name of the environment variable, quoted in messages.
pub const ENV_VAR: &str = crate::mysql::PASSWORD_ENV_VAR;

/// Where the shared password may come from, apart from the prompt.
pub struct Inputs {
    /// An empty value counts as unset: `RWTOP_PASSWORD= rwtop` is how a shell clears it.
    pub env: Option<String>,
    /// The file and where it was named (the flag or the config key).
    pub file: Option<(PathBuf, Origin)>,
}

/// The password shared by all nodes without an inline one.
pub fn resolve(
    inputs: Inputs,
    user: &str,
    prompt: &mut dyn FnMut(&str) -> io::Result<String>,
    warnings: &mut Vec<String>,
) -> Result<Secret, ConfigError> {
    if let Some(env) = inputs.env.filter(|value| !value.is_empty()) {
        return Ok(Secret::new(env));
    }
    if let Some((path, at)) = inputs.file {
        return read_file(&path, &at, warnings);
    }
    let text = format!(
        "Password for MySQL user {user} (or set {ENV_VAR} / use --password-file to skip this): "
    );
    match prompt(&text) {
        Ok(answer) => Ok(Secret::new(strip_newline(&answer))),
        Err(err) => Err(ConfigError::NoPassword {
            reason: format!("cannot prompt for it: {err}"),
        }),
    }
}

fn read_file(path: &Path, at: &Origin, warnings: &mut Vec<String>) -> Result<Secret, ConfigError> {
    let failed = |reason: String| ConfigError::PasswordFile {
        path: path.to_owned(),
        at: at.clone(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|err| failed(err.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|_| failed("it is not UTF-8 text".to_owned()))?;
    let password = strip_newline(&text);
    if password.is_empty() {
        return Err(failed(
            "it is empty; expected the password on its first line".to_owned(),
        ));
    }
    if let Some(mode) = loose_mode(path) {
        warnings.push(format!(
            "password file {} can be read by other users (mode {mode:o}); run chmod 600 on it",
            path.display()
        ));
    }
    Ok(Secret::new(password))
}

/// Only the line end is removed: spaces may be part of the password.
fn strip_newline(text: &str) -> &str {
    text.trim_end_matches(['\n', '\r'])
}

#[cfg(unix)]
fn loose_mode(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn loose_mode(_path: &Path) -> Option<u32> {
    None
}

/// The prompt `Config::load` uses: without a terminal there is nobody to answer, and reading a
/// password from piped stdin would silently take whatever the pipe holds.
pub fn tty_prompt(text: &str) -> io::Result<String> {
    if !io::stdin().is_terminal() {
        return Err(io::Error::other("stdin is not a terminal"));
    }
    rpassword::prompt_password(text)
}
