//! `rwtop`: parse the command line and hand over; everything else lives in the library or `cli`.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
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
