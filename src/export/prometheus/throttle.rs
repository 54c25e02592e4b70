//! `rwtop_throttle`: the verdict `GET /throttle` gives with the configured `[throttle]`
//! settings, 1 while it says throttle and 0 while it says go, so a dashboard shows when an
//! online schema change was held back.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

use super::{NO_LABELS, family, flag, gauge};
use crate::alerts::throttle::Throttle;

/// Encodes one verdict, judged when the scrape came.
#[derive(Debug)]
pub struct ThrottleCollector {
    throttle: bool,
}

impl ThrottleCollector {
    pub fn new(verdict: &Throttle) -> Self {
        Self {
            throttle: !verdict.go,
        }
    }
}

impl Collector for ThrottleCollector {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        family(
            &mut e,
            "rwtop_throttle",
            "1 while GET /throttle answers throttle (a covered replica is not shown under \
             [throttle] max_lag), 0 while it answers go",
            MetricType::Gauge,
            |m| gauge(m, &NO_LABELS, flag(self.throttle)),
        )
    }
}
