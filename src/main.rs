//! `rwtop`: parse the command line and hand over; everything else lives in the library or `cli`.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use rwtop::config::redact;

/// jemalloc, not glibc's malloc: at 1,000 nodes glibc's allocator was a third of rwtop's CPU
/// (measured in commit `488a4cb`, docs/benchmarks.md's history).
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let args = cli::Cli::try_parse().unwrap_or_else(|err| usage_error(&err));
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // Every error type here already says its cause; `{:#}` would repeat it.
            eprintln!("rwtop: {err}");
            // Bad configuration or flags exit 2, like clap's own usage errors.
            if let Some(config) = err.downcast_ref::<rwtop::config::ConfigError>() {
                ExitCode::from(config.exit_code())
            } else if let Some(theme) = err.downcast_ref::<rwtop::ui::theme::ThemeError>() {
                ExitCode::from(theme.exit_code())
            } else if let Some(keys) = err.downcast_ref::<rwtop::ui::keys::KeyMapError>() {
                ExitCode::from(keys.exit_code())
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// clap's own usage errors quote a misplaced argument verbatim (`unrecognized subcommand
/// 'mysql://rwtop:PASSWORD@db1'`), and a DSN typed without its `--primary` is just such an
/// argument: every DSN of the command line that holds a password is shown redacted instead.
fn usage_error(err: &clap::Error) -> ! {
    let plain = err.render().to_string();
    let mut masked = plain.clone();
    for arg in std::env::args_os().skip(1) {
        let Some(arg) = arg.to_str() else { continue };
        let value = arg.split_once('=').map_or(arg, |(_, value)| value);
        for text in [arg, value] {
            let redacted = redact(text);
            if text.contains("://") && redacted != text {
                masked = masked.replace(text, &redacted);
            }
        }
    }
    if masked == plain {
        err.exit();
    }
    eprint!("{masked}");
    std::process::exit(err.exit_code());
}
