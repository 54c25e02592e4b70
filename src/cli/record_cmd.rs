//! `--record FILE` beside the live view, the demo or `rwtop serve`: the recorder in a task of its
//! own, its trouble reported once, its summary at the end.

use std::path::Path;
use std::sync::Arc;

use rwtop::record::{RecordError, RecordedThresholds, Recorder, Summary};
use rwtop::store::Snapshot;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

pub struct RecordTask(JoinHandle<Result<Summary, RecordError>>);

/// Creates the file and writes its header, with the thresholds of `report` (the routing
/// threshold and the reports' quiet time) for `rwtop report` to read back: a path that cannot be
/// written stops rwtop here, before an engine starts or the TUI takes the terminal.
pub fn create(
    path: Option<&Path>,
    report: &rwtop::report::ReportSettings,
) -> anyhow::Result<Option<Recorder>> {
    let thresholds = RecordedThresholds {
        routing_max_lag_seconds: report.threshold.as_secs_f64(),
        report_quiet_seconds: report.quiet.as_secs_f64(),
    };
    Ok(path
        .map(|p| Recorder::create_with(p, Some(thresholds)))
        .transpose()?)
}

/// Records `snapshots` in a task until the engine shuts down. A write error ends the recording,
/// never the monitor: it is sent once to `notes` (the TUI's footer) and returned by [`finish`].
pub fn spawn(
    recorder: Option<Recorder>,
    snapshots: watch::Receiver<Arc<Snapshot>>,
    notes: Option<mpsc::Sender<String>>,
) -> Option<RecordTask> {
    let recorder = recorder?;
    Some(RecordTask(tokio::spawn(async move {
        let result = recorder.run(snapshots).await;
        if let (Err(e), Some(notes)) = (&result, notes) {
            let _ = notes.send(format!("not recording any more: {e}")).await;
        }
        result
    })))
}

/// Waits for the recorder (the engine must be shut down first, which ends it) and says where
/// the recording is, or why it stopped early.
pub async fn finish(task: Option<RecordTask>) -> anyhow::Result<()> {
    let Some(RecordTask(task)) = task else {
        return Ok(());
    };
    let summary = task
        .await
        .map_err(|e| anyhow::anyhow!("the recorder failed: {e}"))??;
    let size = rwtop::units::bytes(summary.bytes);
    eprintln!(
        "rwtop: recorded {} frames ({size}) to {}; play it with: rwtop replay {}",
        summary.frames,
        summary.path.display(),
        summary.path.display()
    );
    Ok(())
}

/// `--record` goes with what watches a topology over time; elsewhere it would be silently
/// ignored, so it is a usage error (exit 2).
pub fn check_flags(cli: &super::Cli) -> Result<(), clap::Error> {
    use super::Command;
    use clap::CommandFactory;
    let fits = matches!(
        cli.command,
        None | Some(Command::Demo { .. } | Command::Serve)
    );
    if cli.record.is_none() || fits {
        return Ok(());
    }
    Err(super::Cli::command().error(
        clap::error::ErrorKind::ArgumentConflict,
        "--record works with the live view (no command), `rwtop demo` and `rwtop serve`",
    ))
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
    fn record_goes_with_what_watches_and_replay_takes_a_speed() {
        for line in [
            &["rwtop", "--record", "x.jsonl"][..],
            &["rwtop", "demo", "--record", "x.jsonl"],
            &[
                "rwtop",
                "serve",
                "--metrics-listen",
                "127.0.0.1:0",
                "--record",
                "x.jsonl",
            ],
        ] {
            let cli = parse(line).unwrap();
            assert_eq!(cli.record.unwrap().to_str(), Some("x.jsonl"), "{line:?}");
        }
        let replay = parse(&["rwtop", "replay", "x.jsonl", "--speed", "0.5"]).unwrap();
        let Some(Command::Replay { file, speed }) = replay.command else {
            panic!("not a replay: {replay:?}");
        };
        assert_eq!(
            (file.to_str(), speed.to_string()),
            (Some("x.jsonl"), "0.5".into())
        );
        let default = parse(&["rwtop", "replay", "x.jsonl"]).unwrap();
        assert!(matches!(
            default.command,
            Some(Command::Replay { speed, .. }) if speed == rwtop::record::Speed::NORMAL
        ));
        for bad in [
            &["rwtop", "replay", "x.jsonl", "--record", "y.jsonl"][..],
            &["rwtop", "probe", "--record", "y.jsonl"],
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad:?}");
            assert!(err.to_string().contains("--record works with"), "{err}");
        }
        assert!(parse(&["rwtop", "replay"]).is_err(), "the file is required");
    }
}
