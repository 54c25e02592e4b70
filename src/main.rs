//! `rwtop`: parse the command line and hand over; everything else lives in the library or `cli`.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("rwtop: {err:#}");
            ExitCode::FAILURE
        }
    }
}
