//! GTID arithmetic for backlog and errant-transaction detection.
//!
//! MySQL and MariaDB both call their global transaction ids "GTIDs" but the two are unrelated:
//!
//! * MySQL reports *sets* (`uuid:1-5:7-9,uuid2:1-3`), where every transaction ever applied is
//!   listed, so a backlog is a set difference and its size is a count of transaction numbers.
//!   See [`GtidSet`].
//! * MariaDB reports one *position* per replication domain (`0-1-100,1-2-50`), where sequence
//!   numbers within a domain are ordered, so a backlog is a subtraction per domain.
//!   See [`GtidList`].
//!
//! Both parsers are strict about content but lenient about layout: servers wrap long values
//! over several lines, and anything copied from a terminal may carry extra spaces, so ASCII
//! whitespace around every separator is ignored. Malformed input is never silently dropped,
//! because a misread GTID would show a wrong backlog, which is worse for an operator than an
//! error that quotes the offending text.

// Product names are prose here, not code identifiers.
#![allow(clippy::doc_markdown)]

/// Serialises a type as its `Display` string and deserialises it through its `parse`.
///
/// JSON snapshots and config files then hold the same text an operator would see in
/// `SHOW REPLICA STATUS`, rather than an internal interval layout.
macro_rules! string_serde {
    ($($ty:ty),+ $(,)?) => {$(
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                Self::parse(&text).map_err(serde::de::Error::custom)
            }
        }

        impl std::str::FromStr for $ty {
            type Err = GtidParseError;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                Self::parse(text)
            }
        }
    )+};
}

pub mod mariadb_list;
pub mod mysql_set;

pub use mariadb_list::{DomainDistance, DomainGtid, GtidList};
pub use mysql_set::{Gtid, GtidSet, ServerUuid};

/// Longest quoted excerpt kept in an error message, in characters.
///
/// GTID sets from busy topologies can run to kilobytes; quoting all of that would bury the one
/// token that is wrong.
const QUOTE_LIMIT: usize = 60;

/// Why a GTID set, list or single GTID could not be read.
///
/// Every variant carries the offending token and the surrounding text (both cut to about
/// 60 characters) so a message points at the mistake without needing the full input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GtidParseError {
    /// A MySQL server UUID that is not in 8-4-4-4-12 hex form.
    #[error(
        "invalid server UUID {token:?} in {input:?} \
         (expected 8-4-4-4-12 hex digits such as 3e11fa47-71ca-11e1-9e33-c80aa9429562)"
    )]
    Uuid { token: String, input: String },

    /// A MySQL 8.3+ GTID tag that breaks the naming rules.
    #[error(
        "invalid GTID tag {token:?} in {input:?}: {reason} \
         (expected 1-32 letters, digits or '_', starting with a letter or '_')"
    )]
    Tag {
        token: String,
        input: String,
        reason: &'static str,
    },

    /// A transaction-number interval that is malformed, empty or out of range.
    #[error(
        "invalid GTID interval {token:?} in {input:?}: {reason} \
         (expected N or N-M with 1 <= N <= M <= 9223372036854775807)"
    )]
    Interval {
        token: String,
        input: String,
        reason: &'static str,
    },

    /// A UUID or tag that is not followed by any interval.
    #[error(
        "GTID set entry {input:?} has no interval after {token:?} \
         (expected uuid:N[-M], with at least one interval after the uuid and after each tag)"
    )]
    MissingInterval { token: String, input: String },

    /// A single MySQL GTID with the wrong shape.
    #[error("invalid GTID {token:?}: {reason} (expected uuid:N or uuid:tag:N)")]
    Gtid { token: String, reason: &'static str },

    /// A MariaDB GTID (or an entry of a MariaDB GTID list) with the wrong shape or range.
    #[error(
        "invalid MariaDB GTID {token:?} in {input:?}: {reason} \
         (expected domain-server_id-seq such as 0-1-100)"
    )]
    MariaDb {
        token: String,
        input: String,
        reason: &'static str,
    },
}

impl GtidParseError {
    // Constructors quote (and so cut) their arguments, which no call site may forget.

    pub(crate) fn uuid(token: &str, input: &str) -> Self {
        Self::Uuid {
            token: quote(token),
            input: quote(input),
        }
    }

    pub(crate) fn tag(token: &str, input: &str, reason: &'static str) -> Self {
        Self::Tag {
            token: quote(token),
            input: quote(input),
            reason,
        }
    }

    pub(crate) fn interval(token: &str, input: &str, reason: &'static str) -> Self {
        Self::Interval {
            token: quote(token),
            input: quote(input),
            reason,
        }
    }

    pub(crate) fn missing_interval(token: &str, input: &str) -> Self {
        Self::MissingInterval {
            token: quote(token),
            input: quote(input),
        }
    }

    pub(crate) fn gtid(token: &str, reason: &'static str) -> Self {
        Self::Gtid {
            token: quote(token),
            reason,
        }
    }

    pub(crate) fn mariadb(token: &str, input: &str, reason: &'static str) -> Self {
        Self::MariaDb {
            token: quote(token),
            input: quote(input),
            reason,
        }
    }
}

/// A set of numbers as inclusive `(start, end)` intervals; for MySQL, the transactions of one
/// (uuid, tag) pair. Kept apart from the GTID syntax in [`mysql_set`] so the arithmetic can be
/// read, and trusted, on its own.
///
/// Invariant: sorted, non-empty intervals with a gap of at least one number between
/// neighbours. With that canonical form, equal sets have equal vectors, and every operation
/// below is a single pass over both inputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Intervals(pub(crate) Vec<(u64, u64)>);

impl Intervals {
    pub(crate) fn from_unsorted(mut raw: Vec<(u64, u64)>) -> Self {
        raw.sort_unstable();
        let mut out = Vec::with_capacity(raw.len());
        for interval in raw {
            push_merging(&mut out, interval);
        }
        Self(out)
    }

    pub(crate) fn single(value: u64) -> Self {
        Self(vec![(value, value)])
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn union(&self, other: &Self) -> Self {
        let mut out = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut left, mut right) = (self.0.iter().peekable(), other.0.iter().peekable());
        loop {
            let next = match (left.peek(), right.peek()) {
                (Some(a), Some(b)) if a.0 <= b.0 => left.next(),
                (Some(_) | None, Some(_)) => right.next(),
                (Some(_), None) => left.next(),
                (None, None) => break,
            };
            if let Some(&interval) = next {
                push_merging(&mut out, interval);
            }
        }
        Self(out)
    }

    pub(crate) fn intersection(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while let (Some(&(a_start, a_end)), Some(&(b_start, b_end))) =
            (self.0.get(i), other.0.get(j))
        {
            let (start, end) = (a_start.max(b_start), a_end.min(b_end));
            if start <= end {
                out.push((start, end));
            }
            if a_end < b_end {
                i += 1;
            } else {
                j += 1;
            }
        }
        Self(out)
    }

    pub(crate) fn subtract(&self, other: &Self) -> Self {
        let mut out = Vec::new();
        let mut j = 0;
        for &(start, end) in &self.0 {
            // First number of this interval not yet known to be removed or kept.
            let mut cursor = Some(start);
            while let (Some(from), Some(&(cut_start, cut_end))) = (cursor, other.0.get(j)) {
                if cut_end < from {
                    j += 1;
                } else if cut_start > end {
                    break;
                } else {
                    if cut_start > from {
                        out.push((from, cut_start - 1));
                    }
                    // Not advancing `j` here: a cut reaching past `end` may also cut the next
                    // interval, and one ending earlier is skipped by the first branch.
                    cursor = (cut_end < end).then(|| cut_end + 1);
                }
            }
            if let Some(from) = cursor {
                out.push((from, end));
            }
        }
        Self(out)
    }

    /// The interval holding `gno`, found by binary search.
    pub(crate) fn containing(&self, gno: u64) -> Option<(u64, u64)> {
        let after = self.0.partition_point(|&(start, _)| start <= gno);
        let candidate = *self.0.get(after.checked_sub(1)?)?;
        (candidate.1 >= gno).then_some(candidate)
    }

    pub(crate) fn is_superset(&self, other: &Self) -> bool {
        // Neighbours never touch, so each of `other`'s intervals must sit inside a single one.
        other.0.iter().all(|&(start, end)| {
            self.containing(start)
                .is_some_and(|(_, outer_end)| end <= outer_end)
        })
    }

    pub(crate) fn count(&self) -> u128 {
        self.0.iter().fold(0, |total, &(start, end)| {
            total.saturating_add(u128::from(end - start) + 1)
        })
    }
}

/// Appends an interval that starts at or after the last one, merging overlap and adjacency.
fn push_merging(out: &mut Vec<(u64, u64)>, (start, end): (u64, u64)) {
    match out.last_mut() {
        Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
        _ => out.push((start, end)),
    }
}

/// Cuts `text` to [`QUOTE_LIMIT`] characters for quoting in an error message.
///
/// Counting characters rather than bytes keeps the cut on a UTF-8 boundary whatever the input.
pub(crate) fn quote(text: &str) -> String {
    if text.chars().count() <= QUOTE_LIMIT {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(QUOTE_LIMIT - 3).collect();
    cut.push_str("...");
    cut
}

/// Reads an unsigned decimal number made only of ASCII digits.
///
/// `str::parse` would also take a leading `+`, which no server prints; rejecting it keeps the
/// accepted syntax equal to what servers emit. `None` means "not a number" or "too large for
/// u64"; callers that report the two differently check [`all_digits`] first.
pub(crate) fn parse_decimal(text: &str) -> Option<u64> {
    if !all_digits(text) {
        return None;
    }
    text.bytes().try_fold(0_u64, |acc, digit| {
        acc.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
    })
}

/// Whether `text` is a non-empty run of ASCII digits.
pub(crate) fn all_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_cuts_on_char_boundaries() {
        let long = "é".repeat(100);
        let cut = quote(&long);
        assert_eq!(cut.chars().count(), QUOTE_LIMIT);
        assert!(cut.ends_with("..."));
        assert_eq!(quote("short"), "short");
    }

    #[test]
    fn decimal_rejects_signs_and_overflow() {
        assert_eq!(parse_decimal("42"), Some(42));
        assert_eq!(parse_decimal("007"), Some(7));
        assert_eq!(parse_decimal("+1"), None);
        assert_eq!(parse_decimal(""), None);
        assert_eq!(parse_decimal("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_decimal("18446744073709551616"), None);
    }
}
