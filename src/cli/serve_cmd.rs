//! `rwtop serve`: no screen, the engine and the Prometheus endpoint until Ctrl-C or SIGTERM;
//! and the `--metrics-listen` flag the live view shares.

use std::net::SocketAddr;

use rwtop::engine::{Engine, EngineSpec};

use super::TargetArgs;
use super::outputs::{self, Notes, Outputs};

/// `--metrics-listen`: an IP and a port; names would resolve to several addresses.
pub fn listen_arg(text: &str) -> Result<SocketAddr, String> {
    text.parse().map_err(|_| {
        format!("{text:?} is not IP:PORT (e.g. 127.0.0.1:9899, 0.0.0.0:9899 or [::1]:9899)")
    })
}

pub fn run(
    target: &TargetArgs,
    listen: Option<SocketAddr>,
    record: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let listen =
        listen.ok_or_else(|| anyhow::anyhow!("rwtop serve needs --metrics-listen ADDR"))?;
    let config = super::load_config(target)?;
    let mut spec = EngineSpec::from_config(&config);
    let report = outputs::report_settings(&config.settings);
    let runtime = super::runtime()?;
    runtime.block_on(async {
        let prepared = Outputs::prepare(Some(listen), record, &report).await?;
        let engine = Engine::start_finding_roots(&mut spec).await;
        // No screen: a recorder's trouble is on stderr when it stops, the reports' lines as
        // they come.
        let outputs = Outputs::start(
            prepared,
            &engine,
            &config.settings,
            Some(outputs::live_reports(&config, record)),
            Notes::Stderr,
        );
        eprintln!(
            "rwtop: serving Prometheus metrics at {} (and the throttle at /throttle) for {} \
             configured node(s); DDL-window reports go to {}; Ctrl-C or SIGTERM stops",
            outputs.metrics_url().unwrap_or_default(),
            spec.nodes.len(),
            config.settings.report.folder(record).display()
        );
        let stopped = stop_signal().await;
        let saved = outputs.finish(engine).await;
        stopped?;
        saved
    })
}

/// Ctrl-C (SIGINT) or SIGTERM, the way a terminal or a service manager says stop.
async fn stop_signal() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        interrupted = tokio::signal::ctrl_c() => interrupted?,
        _ = term.recv() => {}
    }
    Ok(())
}

/// `--metrics-listen` goes with the live view, the demo or `serve`, and `serve` needs it: a
/// usage error (exit 2) otherwise, rather than a flag silently ignored.
pub fn check_flags(cli: &super::Cli) -> Result<(), clap::Error> {
    use clap::CommandFactory;
    let problem = match (&cli.command, cli.metrics_listen) {
        (Some(super::Command::Serve), None) => {
            Some("`rwtop serve` needs --metrics-listen ADDR (e.g. 127.0.0.1:9899)")
        }
        (Some(super::Command::Serve | super::Command::Demo { .. }) | None, _) | (Some(_), None) => {
            None
        }
        (Some(_), Some(_)) => Some(
            "--metrics-listen works with the live view (no command), `rwtop demo` and \
             `rwtop serve`",
        ),
    };
    match problem {
        Some(message) => {
            Err(super::Cli::command().error(clap::error::ErrorKind::ArgumentConflict, message))
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Command};
    use super::check_flags;

    fn parse(line: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(line).and_then(|cli| check_flags(&cli).map(|()| cli))
    }

    #[test]
    fn metrics_listen_goes_with_the_live_view_and_serve() {
        let serve = parse(&["rwtop", "serve", "--metrics-listen", "127.0.0.1:9899"]).unwrap();
        assert!(matches!(serve.command, Some(Command::Serve)));
        assert_eq!(
            serve.metrics_listen,
            Some("127.0.0.1:9899".parse().unwrap())
        );
        let before = parse(&["rwtop", "--metrics-listen", "[::1]:0", "serve"]).unwrap();
        assert_eq!(before.metrics_listen, Some("[::1]:0".parse().unwrap()));
        let tui = parse(&[
            "rwtop",
            "--config",
            "r.toml",
            "--metrics-listen",
            "0.0.0.0:9899",
        ]);
        assert!(tui.unwrap().command.is_none());
        let demo = parse(&["rwtop", "demo", "--metrics-listen", "127.0.0.1:9899"]).unwrap();
        assert!(matches!(demo.command, Some(Command::Demo { .. })));

        let bad = parse(&["rwtop", "serve", "--metrics-listen", "localhost"]).unwrap_err();
        assert!(bad.to_string().contains("is not IP:PORT"), "{bad}");
        let bare = parse(&["rwtop", "serve"]).unwrap_err();
        assert!(
            bare.to_string().contains("needs --metrics-listen"),
            "{bare}"
        );
        let elsewhere =
            parse(&["rwtop", "snapshot", "--metrics-listen", "127.0.0.1:9899"]).unwrap_err();
        assert_eq!(elsewhere.exit_code(), 2);
        assert!(elsewhere.to_string().contains("live view"), "{elsewhere}");
    }
}
