//! A channel's `lag_split` object (docs/json-schema.md): the store's split of the heartbeat lag
//! into transport and apply (`store/lag_split.rs`), each part with its kind and, unknown, why.

use serde::Serialize;

use crate::store::lag::Lag;
use crate::store::lag_split::LagSplit;

/// A channel's lag in two parts (`store/lag_split.rs`): each part as exact, a lower bound or
/// unknown with the reason.
#[derive(Debug, Serialize)]
pub struct JsonLagSplit {
    /// How old the newest heartbeat the replica has received is.
    pub transport: JsonLagPart,
    /// How much further behind its applied position is: what waits in the relay log.
    pub apply: JsonLagPart,
}

#[derive(Debug, Serialize)]
pub struct JsonLagPart {
    /// `exact`, `at_least` or `unknown`, as the whole lag's.
    pub kind: &'static str,
    /// Seconds; `null` while unknown.
    pub seconds: Option<f64>,
    pub reason: Option<String>,
}

fn part(lag: &Lag) -> JsonLagPart {
    let (kind, reason) = match lag {
        Lag::Exact { .. } => ("exact", None),
        Lag::AtLeast { .. } => ("at_least", None),
        Lag::Unknown { reason } => ("unknown", Some(reason.clone())),
    };
    JsonLagPart {
        kind,
        seconds: lag.value().map(|d| d.as_secs_f64()),
        reason,
    }
}

pub fn lag_split(split: &LagSplit) -> JsonLagSplit {
    JsonLagSplit {
        transport: part(&split.transport),
        apply: part(&split.apply),
    }
}
