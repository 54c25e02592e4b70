//! rwtop's model: everything that is not the terminal.
//!
//! The model never imports ratatui: parsing, GTID arithmetic, the SQL layer and the sandbox know
//! nothing of how they are shown.

pub mod alerts;
pub mod config;
pub mod demo;
pub mod drain;
pub mod export;
pub mod gtid;
pub mod mysql;
pub mod poll;
pub mod probe;
pub mod record;
pub mod sandbox;
pub mod store;
pub mod ui;
pub mod units;
