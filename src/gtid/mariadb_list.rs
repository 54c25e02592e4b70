//! MariaDB GTID positions (`gtid_current_pos`, `gtid_slave_pos`, `gtid_binlog_state`, ...).
//!
//! MariaDB keeps one ordered sequence per replication domain, so "how far behind" is a
//! subtraction per domain rather than a set difference.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::fmt;

use super::{GtidParseError, all_digits, parse_decimal};

/// One MariaDB GTID, `domain-server_id-seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DomainGtid {
    pub domain: u32,
    /// The server that wrote the transaction. Not part of ordering within a domain: MariaDB
    /// orders a domain by `seq` alone.
    pub server_id: u32,
    pub seq: u64,
}

impl DomainGtid {
    pub fn parse(text: &str) -> Result<Self, GtidParseError> {
        let trimmed = text.trim_ascii();
        Self::from_token(trimmed, trimmed)
    }

    /// Reads one entry; `context` is the whole list, quoted in errors so a bad entry can be
    /// located in a long `gtid_binlog_state`.
    fn from_token(token: &str, context: &str) -> Result<Self, GtidParseError> {
        let error = |token: &str, reason| GtidParseError::mariadb(token, context, reason);
        if token.is_empty() {
            return Err(error(token, "empty entry"));
        }
        let parts: Vec<&str> = token.split('-').map(str::trim_ascii).collect();
        let [domain, server_id, seq] = parts.as_slice() else {
            return Err(error(
                token,
                "a GTID has exactly three '-'-separated numbers",
            ));
        };
        let number = |text: &str, field: &Field| {
            if text.is_empty() {
                return Err(error(token, field.missing));
            }
            if !all_digits(text) {
                return Err(error(text, field.not_number));
            }
            parse_decimal(text)
                .filter(|&value| value <= field.max)
                .ok_or_else(|| error(text, field.too_large))
        };
        let domain = number(domain, &DOMAIN)?;
        let server_id = number(server_id, &SERVER_ID)?;
        let seq = number(seq, &SEQ)?;
        // Both were checked against u32::MAX above, so these conversions cannot fail; mapping
        // the impossible error keeps the parser free of panicking paths.
        let domain = u32::try_from(domain).map_err(|_| error(token, DOMAIN.too_large))?;
        let server_id = u32::try_from(server_id).map_err(|_| error(token, SERVER_ID.too_large))?;
        Ok(Self {
            domain,
            server_id,
            seq,
        })
    }
}

/// Limits and error wording for one number of a MariaDB GTID.
///
/// Error reasons are static strings, so each field spells its own out rather than formatting
/// the field name in.
struct Field {
    max: u64,
    missing: &'static str,
    not_number: &'static str,
    too_large: &'static str,
}

const DOMAIN: Field = Field {
    max: 0xFFFF_FFFF,
    missing: "the domain is missing",
    not_number: "the domain is not a decimal number",
    too_large: "the domain is above 4294967295",
};

const SERVER_ID: Field = Field {
    max: 0xFFFF_FFFF,
    missing: "the server_id is missing",
    not_number: "the server_id is not a decimal number",
    too_large: "the server_id is above 4294967295",
};

const SEQ: Field = Field {
    max: u64::MAX,
    missing: "the sequence number is missing",
    not_number: "the sequence number is not a decimal number",
    too_large: "the sequence number is above 18446744073709551615",
};

impl fmt::Display for DomainGtid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}-{}", self.domain, self.server_id, self.seq)
    }
}

/// A MariaDB GTID position: at most one GTID per replication domain.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GtidList {
    entries: BTreeMap<u32, DomainGtid>,
}

/// How far one side is behind the other in a single domain; see [`GtidList::distance_from`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DomainDistance {
    pub domain: u32,
    /// `None` when the side that should be ahead has never seen this domain.
    pub ahead: Option<u64>,
    /// `None` when the lagging side has never seen this domain.
    pub behind: Option<u64>,
    /// `ahead - behind`, with a missing side counted as seq 0 and never below zero: a replica
    /// that is "ahead" in a domain holds errant transactions, which [`GtidList::ahead_of`]
    /// reports, not negative backlog.
    pub transactions: u64,
}

impl GtidList {
    /// Reads a comma-separated list; empty or whitespace-only input is the empty list.
    ///
    /// A domain may appear several times: `gtid_binlog_state` lists the last GTID of every
    /// (domain, server_id) pair. The position in a domain is its highest seq, so that entry is
    /// kept; on a tie the later entry wins, matching MariaDB, which lists a domain's most
    /// recent GTID last.
    pub fn parse(text: &str) -> Result<Self, GtidParseError> {
        let trimmed = text.trim_ascii();
        let mut list = Self::default();
        if trimmed.is_empty() {
            return Ok(list);
        }
        for token in trimmed.split(',').map(str::trim_ascii) {
            let gtid = DomainGtid::from_token(token, trimmed)?;
            match list.entries.entry(gtid.domain) {
                Entry::Vacant(slot) => {
                    slot.insert(gtid);
                }
                Entry::Occupied(mut slot) => {
                    if gtid.seq >= slot.get().seq {
                        slot.insert(gtid);
                    }
                }
            }
        }
        Ok(list)
    }

    #[must_use]
    pub fn empty() -> Self {
        Self::default()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    #[must_use]
    pub fn get(&self, domain: u32) -> Option<&DomainGtid> {
        self.entries.get(&domain)
    }

    #[must_use]
    pub fn seq(&self, domain: u32) -> Option<u64> {
        self.get(domain).map(|gtid| gtid.seq)
    }

    /// Sets the position of `gtid.domain` unconditionally, returning the one it replaces.
    pub fn insert(&mut self, gtid: DomainGtid) -> Option<DomainGtid> {
        self.entries.insert(gtid.domain, gtid)
    }

    /// Domains present, ascending.
    pub fn domains(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.keys().copied()
    }

    /// Entries in ascending domain order.
    pub fn iter(&self) -> impl Iterator<Item = &DomainGtid> + '_ {
        self.entries.values()
    }

    /// Whether `gtid` has been reached, as MariaDB's `MASTER_GTID_WAIT` decides it: the domain
    /// is present with a seq at least as high. The server_id is ignored because within a
    /// domain MariaDB orders transactions by seq alone.
    #[must_use]
    pub fn contains(&self, gtid: &DomainGtid) -> bool {
        self.seq(gtid.domain).is_some_and(|seq| seq >= gtid.seq)
    }

    /// Per-domain backlog of `behind` relative to `self`, one row for every domain in either
    /// list, ascending. Typically `self` is the primary and `behind` a replica.
    #[must_use]
    pub fn distance_from(&self, behind: &GtidList) -> Vec<DomainDistance> {
        let mut domains: Vec<u32> = self.domains().chain(behind.domains()).collect();
        domains.sort_unstable();
        domains.dedup();
        domains
            .into_iter()
            .map(|domain| {
                let ahead = self.seq(domain);
                let lagging = behind.seq(domain);
                DomainDistance {
                    domain,
                    ahead,
                    behind: lagging,
                    transactions: ahead.unwrap_or(0).saturating_sub(lagging.unwrap_or(0)),
                }
            })
            .collect()
    }

    /// Sum of [`Self::distance_from`] over all domains, saturating at `u64::MAX`.
    #[must_use]
    pub fn total_distance(&self, behind: &GtidList) -> u64 {
        self.distance_from(behind)
            .iter()
            .fold(0, |total, row| total.saturating_add(row.transactions))
    }

    /// Entries of `self` that `other` has not reached: the domain is missing there or its seq
    /// is lower. Called with a replica as `self` and its primary as `other`, these are the
    /// replica's errant transactions.
    #[must_use]
    pub fn ahead_of(&self, other: &GtidList) -> Vec<DomainGtid> {
        self.iter()
            .filter(|gtid| other.seq(gtid.domain).is_none_or(|seq| gtid.seq > seq))
            .copied()
            .collect()
    }
}

impl fmt::Display for GtidList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, gtid) in self.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{gtid}")?;
        }
        Ok(())
    }
}

impl<'a> IntoIterator for &'a GtidList {
    type Item = &'a DomainGtid;
    type IntoIter = std::collections::btree_map::Values<'a, u32, DomainGtid>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.values()
    }
}

string_serde!(DomainGtid, GtidList);
