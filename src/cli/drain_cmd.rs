//! `rwtop drain NAME` / `rwtop undrain NAME`: one action through the configured load balancer,
//! appended to the audit log; a failure exits 1 with the backend's own message.

use rwtop::config::{Config, ConfigError, Origin};
use rwtop::drain::task::act;
use rwtop::drain::{Action, Target};

use super::TargetArgs;
use super::output::emit;

pub fn run(target: &TargetArgs, action: Action, replica: &str) -> anyhow::Result<()> {
    let config = Config::load(&target.overrides())?;
    let Some(spec) = config.settings.drain.clone() else {
        return Err(ConfigError::Invalid {
            at: config.file.clone().map_or_else(
                || Origin::Flag("--config".into()),
                |path| Origin::File {
                    path,
                    position: None,
                    key: Some("drain".into()),
                },
            ),
            message: "no [drain] section: name a backend (haproxy, proxysql, maxscale or exec) \
                      as docs/rwtop.sample.toml shows"
                .into(),
        }
        .into());
    };
    let node = config
        .nodes
        .iter()
        .find(|n| n.name == replica && n.role == rwtop::config::Role::Replica)
        .ok_or_else(|| ConfigError::Invalid {
            at: Origin::Flag(action.verb().to_owned()),
            message: format!(
                "no replica named {replica:?} in the configuration: pick one of {}",
                config
                    .nodes
                    .iter()
                    .filter(|n| n.role == rwtop::config::Role::Replica)
                    .map(|n| n.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })?;
    let target = Target {
        name: node.name.clone(),
        host: node.endpoint.host.clone(),
        port: node.endpoint.port,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let record = runtime.block_on(act(&spec, action, &target));
    let audit = spec.audit.path().display();
    if record.ok {
        emit(&format!(
            "{} {replica} via {}: {} (audit log {audit})\n",
            if action == Action::Drain {
                "drained"
            } else {
                "undrained"
            },
            record.backend,
            record.message
        ))?;
        Ok(())
    } else {
        anyhow::bail!(
            "{} {replica} via {} FAILED: {} (audit log {audit})",
            action.verb(),
            record.backend,
            record.message
        )
    }
}
