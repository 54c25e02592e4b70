//! A channel's `catch_up` object (docs/json-schema.md): the store's catch-up
//! (`store/apply_rate.rs`) as plain numbers, null where it cannot be told.

use serde::Serialize;

use crate::store::apply_rate::CatchUp;

#[derive(Debug, Serialize)]
pub struct JsonCatchUp {
    /// `caught_up`, `catching_up`, `falling_behind`, `not_shrinking` or `unknown`.
    pub state: &'static str,
    pub apply_trx_per_s: Option<f64>,
    pub source_trx_per_s: Option<f64>,
    pub apply_bytes_per_s: Option<f64>,
    pub source_bytes_per_s: Option<f64>,
    /// Negative while the lag shrinks.
    pub lag_change_s_per_s: Option<f64>,
    /// Only while catching up.
    pub eta_s: Option<f64>,
    /// What the figures span: up to the last 20 s of polls since the threads last changed.
    pub window_s: Option<f64>,
    /// As the table shows it: `catching up 2.3 s/s, ~18s`, `falling behind 40 trx/s`.
    pub text: String,
}

/// Rates to two decimals: the window is seconds of polls, not a precise instrument.
fn rounded(value: Option<f64>) -> Option<f64> {
    value.map(|v| (v * 100.0).round() / 100.0)
}

pub fn catch_up(c: &CatchUp) -> JsonCatchUp {
    JsonCatchUp {
        state: c.state.name(),
        apply_trx_per_s: rounded(c.apply_trx_per_s),
        source_trx_per_s: rounded(c.source_trx_per_s),
        apply_bytes_per_s: rounded(c.apply_bytes_per_s),
        source_bytes_per_s: rounded(c.source_bytes_per_s),
        lag_change_s_per_s: rounded(c.lag_change_s_per_s),
        eta_s: rounded(c.eta.map(|d| d.as_secs_f64())),
        window_s: rounded(c.window.map(|d| d.as_secs_f64())),
        text: c.text(),
    }
}
