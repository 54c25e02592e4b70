//! rwtop's library: everything but the command line.
//!
//! The modules stand on floors, each importing only the floors below it (`docs/architecture.md`,
//! held by `tests/layers.rs`): `gtid` and `units` → `mysql` → `topology` → the tasks that talk to
//! servers (`poll`, `probe`, `drain`) → `store` → `alerts` and `whatif` → `config` → `engine` → the outputs
//! (`export`, `record`, `ui`) → the tools over them (`sandbox`, `demo`). Only `ui` names ratatui
//! or crossterm; every floor below it is model and knows nothing of the terminal.

pub mod alerts;
pub mod config;
pub mod demo;
pub mod drain;
pub mod engine;
pub mod export;
pub mod gtid;
pub mod mysql;
pub mod poll;
pub mod probe;
pub mod record;
pub mod report;
pub mod sandbox;
pub mod store;
pub mod topology;
pub mod ui;
pub mod units;
pub mod whatif;
