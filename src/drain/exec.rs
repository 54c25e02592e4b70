//! The exec backend: a command the operator's tooling understands, run without a shell.
//! Placeholders `{action}` (drain/undrain), `{name}`, `{host}` and `{port}` are replaced inside
//! each argument, so a replica name can never inject a second command.

use std::time::Duration;

use super::Action;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecConfig {
    /// The command and its arguments, split on whitespace when read from the config.
    pub drain: Vec<String>,
    pub undrain: Vec<String>,
}

/// Output kept from the command for the audit log and the screen.
const KEEP: usize = 400;

impl ExecConfig {
    /// The argv a drain or undrain runs.
    #[must_use]
    pub fn argv(&self, action: Action, name: &str, host: &str, port: u16) -> Vec<String> {
        let template = match action {
            Action::Drain => &self.drain,
            Action::Undrain => &self.undrain,
        };
        template
            .iter()
            .map(|arg| {
                arg.replace("{action}", action.verb())
                    .replace("{name}", name)
                    .replace("{host}", host)
                    .replace("{port}", &port.to_string())
            })
            .collect()
    }

    #[must_use]
    pub fn describe(&self, action: Action) -> String {
        let template = match action {
            Action::Drain => &self.drain,
            Action::Undrain => &self.undrain,
        };
        format!("exec `{}`", template.join(" "))
    }

    pub async fn apply(
        &self,
        action: Action,
        name: &str,
        host: &str,
        port: u16,
        timeout: Duration,
    ) -> Result<String, String> {
        let argv = self.argv(action, name, host, port);
        let Some((program, rest)) = argv.split_first() else {
            return Err(format!("drain.exec.{} is empty", action.verb()));
        };
        let mut command = tokio::process::Command::new(program);
        // The operator's command needs no database password: the monitor's stays with rwtop.
        command
            .args(rest)
            .env_remove(crate::mysql::PASSWORD_ENV_VAR)
            .kill_on_drop(true)
            .stdin(std::process::Stdio::null());
        let output = tokio::time::timeout(timeout, command.output())
            .await
            .map_err(|_| {
                format!(
                    "`{program}` did not finish within {}; it was killed",
                    crate::units::duration(timeout)
                )
            })?
            .map_err(|e| format!("cannot run `{program}`: {e} (check drain.exec in rwtop.toml)"))?;
        let mut text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let err = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        if !err.is_empty() {
            if !text.is_empty() {
                text.push_str(" | ");
            }
            text.push_str(&err);
        }
        let text: String = text.chars().take(KEEP).collect();
        if output.status.success() {
            Ok(if text.is_empty() {
                format!("`{program}` exited 0")
            } else {
                text
            })
        } else {
            Err(format!(
                "`{program}` failed ({}){}",
                output.status,
                if text.is_empty() {
                    String::new()
                } else {
                    format!(": {text}")
                }
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_inside_each_argument_only() {
        let cfg = ExecConfig {
            drain: vec![
                "lb".into(),
                "--{action}".into(),
                "{name}@{host}:{port}".into(),
            ],
            undrain: vec!["lb".into(), "up".into(), "{name}".into()],
        };
        assert_eq!(
            cfg.argv(Action::Drain, "r1; rm -rf /", "10.0.0.2", 3307),
            ["lb", "--drain", "r1; rm -rf /@10.0.0.2:3307"]
        );
        assert_eq!(cfg.argv(Action::Undrain, "r1", "h", 1), ["lb", "up", "r1"]);
    }
}
