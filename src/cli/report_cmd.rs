//! `rwtop report RECORDING`: the DDL-window report of a recording, the same one the live view
//! writes when a window closes (docs/guide/ddl.md).

use std::path::PathBuf;

use rwtop::record::Recording;
use rwtop::report::{self, DdlReport, Format, ReportSettings, Span};

#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// The recording (made with --record FILE).
    pub recording: PathBuf,
    /// The window's start: an offset into the recording (90s, 2m) or a UTC time (12:03:05).
    /// Without --from and --to, every window a DDL opened is reported.
    #[arg(long, value_name = "T")]
    pub from: Option<String>,
    /// The window's end, as --from [default: the recording's end].
    #[arg(long, value_name = "T")]
    pub to: Option<String>,
    /// md (Markdown, to paste into a ticket) or html (one self-contained page)
    /// [default: html for an --output ending in .html, else md].
    #[arg(long, value_parser = format_arg)]
    pub format: Option<Format>,
    /// Write the report to FILE (whole, or not at all) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The routing threshold in seconds [default: the one the recording was made with; for a
    /// recording without one, thresholds.routing_max_lag_seconds of --config, else 1].
    #[arg(long, value_name = "SECONDS", value_parser = threshold_arg)]
    pub threshold: Option<f64>,
}

fn format_arg(text: &str) -> Result<Format, String> {
    text.parse()
}

fn threshold_arg(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!(
            "found {}, expected a number of seconds above zero (e.g. 1 or 0.5)",
            rwtop::units::quoted(text)
        )),
    }
}

pub fn run(target: &super::TargetArgs, args: &ReportArgs) -> anyhow::Result<()> {
    let recording = Recording::open(&args.recording)?;
    if let Some(warning) = recording.warning() {
        eprintln!("rwtop: warning: {warning}");
    }
    let settings = settings(target, args, &recording)?;
    let span = if args.from.is_some() || args.to.is_some() {
        let time = |what, text: &Option<String>| {
            text.as_deref()
                .map(|t| report::parse_time(what, t, &recording))
                .transpose()
        };
        Some(Span {
            from: time("--from", &args.from)?,
            to: time("--to", &args.to)?,
        })
    } else {
        None
    };
    let windows = report::from_recording(&recording, span, &settings)?;
    let report = DdlReport {
        windows,
        source: format!("the recording {}", args.recording.display()),
        quiet: settings.quiet,
    };
    let format = args.format.unwrap_or_else(|| {
        args.output
            .as_deref()
            .map_or(Format::Markdown, Format::of_path)
    });
    let text = report.render(format);
    match &args.output {
        Some(path) => {
            report::write_atomically(path, &text, "--output")?;
            eprintln!(
                "rwtop: wrote the report of {} window(s) to {}",
                report.windows.len(),
                path.display()
            );
        }
        None => super::output::emit(&text)?,
    }
    Ok(())
}

/// What the report judges by. The threshold: `--threshold`, else the one the recording was made
/// with, else `--config`'s, else 1 s; the quiet time: the recording's, else `--config`'s, else the
/// default. A recording made before rwtop wrote its thresholds says so on standard error, with
/// what is assumed.
fn settings(
    target: &super::TargetArgs,
    args: &ReportArgs,
    recording: &Recording,
) -> anyhow::Result<ReportSettings> {
    let file = match &target.config {
        Some(path) => Some(rwtop::config::FileSettings::from_file(path)?),
        None => None,
    };
    let recorded = recording.header().thresholds;
    let threshold = args
        .threshold
        .or(recorded
            .map(|t| t.routing_max_lag_seconds)
            .filter(|v| v.is_finite() && *v > 0.0))
        .unwrap_or_else(|| {
            file.as_ref().map_or_else(
                || rwtop::config::Thresholds::default().routing_max_lag_seconds,
                |f| f.thresholds.routing_max_lag_seconds,
            )
        });
    // A hand-edited header can hold any number: one that is no duration is not used.
    let quiet = recorded
        .and_then(|t| std::time::Duration::try_from_secs_f64(t.report_quiet_seconds).ok())
        .unwrap_or_else(|| {
            file.as_ref().map_or_else(
                || rwtop::config::ReportConfig::default().quiet,
                |f| f.report.quiet,
            )
        });
    if recorded.is_none() {
        let source = if args.threshold.is_some() {
            "--threshold"
        } else if file.is_some() {
            "--config"
        } else {
            "the default"
        };
        eprintln!(
            "rwtop: note: {} carries no thresholds (recorded before rwtop wrote them): crossings \
             are marked at {} ({source}) and windows close after {} calm",
            args.recording.display(),
            rwtop::units::lag(
                std::time::Duration::try_from_secs_f64(threshold).unwrap_or_default()
            ),
            rwtop::units::duration(quiet)
        );
    }
    Ok(ReportSettings {
        quiet,
        ..ReportSettings::default()
    }
    .with_threshold_seconds(threshold))
}
