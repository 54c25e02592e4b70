//! The terminal UI. Only this module imports ratatui: it reads store snapshots and never touches
//! the model's state.

pub mod actions;
pub mod app;
pub mod feed;
pub mod grant_note;
pub mod keys;
pub mod kill;
pub mod panels;
pub mod render;
pub mod state;
pub mod theme;
pub mod theme_file;
pub mod whatif;

pub use state::{Cover, Mode, ReplicaRow, UiState};
pub use theme::Theme;

/// What every panel renders from: one snapshot, the UI's own state, the theme.
pub struct RenderCtx<'a> {
    pub snapshot: &'a crate::store::Snapshot,
    pub state: &'a UiState,
    pub theme: &'a Theme,
}
