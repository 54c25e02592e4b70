//! MySQL GTID sets (`gtid_executed`, `Retrieved_Gtid_Set`, ...), including 8.3+ tagged GTIDs.
//!
//! A set is kept as sorted, merged intervals per (server UUID, tag), so every set operation is a
//! linear merge of interval lists: a primary that has run `uuid:1-100000000` costs two numbers,
//! not a hundred million.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::ops::RangeInclusive;

use super::{GtidParseError, Intervals, all_digits, parse_decimal};

/// Largest transaction number (GNO) MySQL hands out: the counter is a signed 64-bit integer.
const MAX_GNO: u64 = (1 << 63) - 1;

/// Longest tag MySQL accepts, in characters.
const MAX_TAG_LEN: usize = 32;

/// A server UUID (`server_uuid`), the source half of a MySQL GTID.
///
/// Held as a number so that comparing and sorting are cheap; as the number is fixed-width,
/// numeric order equals the order of the lowercase text MySQL prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerUuid(u128);

impl ServerUuid {
    #[must_use]
    pub const fn from_u128(value: u128) -> Self {
        Self(value)
    }

    #[must_use]
    pub const fn as_u128(self) -> u128 {
        self.0
    }

    /// Reads the hyphenated 8-4-4-4-12 form servers print, in either case.
    pub fn parse(text: &str) -> Result<Self, GtidParseError> {
        Self::from_token(text.trim_ascii(), text)
    }

    fn from_token(token: &str, context: &str) -> Result<Self, GtidParseError> {
        let invalid = || GtidParseError::uuid(token, context.trim_ascii());
        if token.len() != 36 {
            return Err(invalid());
        }
        let mut value = 0_u128;
        for (index, byte) in token.bytes().enumerate() {
            if matches!(index, 8 | 13 | 18 | 23) {
                if byte != b'-' {
                    return Err(invalid());
                }
                continue;
            }
            let nibble = char::from(byte).to_digit(16).ok_or_else(invalid)?;
            value = (value << 4) | u128::from(nibble);
        }
        Ok(Self(value))
    }
}

impl fmt::Display for ServerUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, digit) in format!("{:032x}", self.0).chars().enumerate() {
            if matches!(index, 8 | 12 | 16 | 20) {
                f.write_char('-')?;
            }
            f.write_char(digit)?;
        }
        Ok(())
    }
}

/// One MySQL transaction: `uuid:gno` or, from MySQL 8.3, `uuid:tag:gno`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gtid {
    pub uuid: ServerUuid,
    /// Lowercase when produced by [`Gtid::parse`]; other code may build one by hand, so set
    /// operations compare tags case-insensitively as MySQL does.
    pub tag: Option<String>,
    pub gno: u64,
}

impl Gtid {
    pub fn parse(text: &str) -> Result<Self, GtidParseError> {
        let trimmed = text.trim_ascii();
        let parts: Vec<&str> = trimmed.split(':').map(str::trim_ascii).collect();
        let (uuid, tag, gno) = match parts.as_slice() {
            [uuid, gno] => (*uuid, None, *gno),
            [uuid, tag, gno] => (*uuid, Some(*tag), *gno),
            _ => {
                let reason = "a GTID has a uuid, an optional tag and one number, separated by ':'";
                return Err(GtidParseError::gtid(trimmed, reason));
            }
        };
        let uuid = ServerUuid::from_token(uuid, trimmed)?;
        let tag = tag
            .map(|tag| normalize_tag(tag).map_err(|why| GtidParseError::tag(tag, trimmed, why)))
            .transpose()?;
        if gno.contains('-') {
            let reason = "a single GTID has one transaction number, not a range";
            return Err(GtidParseError::gtid(trimmed, reason));
        }
        let gno = parse_gno(gno).map_err(|why| GtidParseError::interval(gno, trimmed, why))?;
        Ok(Self { uuid, tag, gno })
    }
}

impl fmt::Display for Gtid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tag {
            Some(tag) => write!(f, "{}:{tag}:{}", self.uuid, self.gno),
            None => write!(f, "{}:{}", self.uuid, self.gno),
        }
    }
}

type Tags = BTreeMap<Option<String>, Intervals>;

/// Intervals as read, before sorting and merging, keyed like [`GtidSet`]'s entries.
type RawSet = BTreeMap<ServerUuid, BTreeMap<Option<String>, Vec<(u64, u64)>>>;

/// A set of MySQL GTIDs, as in `@@gtid_executed`.
///
/// Canonical at all times (no empty entries, merged intervals), so derived equality is set
/// equality.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GtidSet {
    // `None` sorts before any tag, which gives MySQL's "untagged intervals first" order.
    entries: BTreeMap<ServerUuid, Tags>,
}

impl GtidSet {
    /// Reads a set as servers print it.
    ///
    /// Empty comma-separated entries are skipped, as MySQL itself does, so a trailing `,` is
    /// harmless. A uuid or tag without any interval after it is rejected, because MySQL 8.3+
    /// rejects a dangling tag and a bare uuid is more likely truncated output than intent.
    pub fn parse(text: &str) -> Result<Self, GtidParseError> {
        let mut raw = RawSet::new();
        for entry in text.split(',').map(str::trim_ascii) {
            if !entry.is_empty() {
                parse_entry(entry, &mut raw)?;
            }
        }
        let entries = raw
            .into_iter()
            .map(|(uuid, tags)| {
                let tags = tags
                    .into_iter()
                    .map(|(tag, raw)| (tag, Intervals::from_unsorted(raw)))
                    .collect();
                (uuid, tags)
            })
            .collect();
        Ok(Self { entries })
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
    pub fn union(&self, other: &Self) -> Self {
        let mut out = self.clone();
        for (uuid, tags) in &other.entries {
            let mine = out.entries.entry(*uuid).or_default();
            for (tag, theirs) in tags {
                let merged = mine
                    .get(tag)
                    .map_or_else(|| theirs.clone(), |m| m.union(theirs));
                mine.insert(tag.clone(), merged);
            }
        }
        out
    }

    /// Transactions in `self` but not in `other`: the backlog when `self` is the primary's
    /// executed set and `other` the replica's, or the errant set the other way round.
    #[must_use]
    pub fn subtract(&self, other: &Self) -> Self {
        self.combine(other, |mine, theirs| match theirs {
            Some(theirs) => mine.subtract(theirs),
            None => mine.clone(),
        })
    }

    #[must_use]
    pub fn intersection(&self, other: &Self) -> Self {
        self.combine(other, |mine, theirs| {
            theirs.map_or_else(Intervals::default, |theirs| mine.intersection(theirs))
        })
    }

    /// Applies `op` to each of `self`'s interval lists and the matching one in `other`,
    /// keeping only non-empty results so the canonical form survives.
    fn combine(
        &self,
        other: &Self,
        op: impl Fn(&Intervals, Option<&Intervals>) -> Intervals,
    ) -> Self {
        let mut entries = BTreeMap::new();
        for (uuid, tags) in &self.entries {
            let theirs = other.entries.get(uuid);
            let kept: Tags = tags
                .iter()
                .map(|(tag, mine)| (tag.clone(), op(mine, theirs.and_then(|t| t.get(tag)))))
                .filter(|(_, intervals)| !intervals.is_empty())
                .collect();
            if !kept.is_empty() {
                entries.insert(*uuid, kept);
            }
        }
        Self { entries }
    }

    #[must_use]
    pub fn contains(&self, gtid: &Gtid) -> bool {
        let tag = gtid.tag.as_ref().map(|tag| tag.to_ascii_lowercase());
        self.entries
            .get(&gtid.uuid)
            .and_then(|tags| tags.get(&tag))
            .is_some_and(|intervals| intervals.containing(gtid.gno).is_some())
    }

    #[must_use]
    pub fn is_superset_of(&self, other: &Self) -> bool {
        other.entries.iter().all(|(uuid, tags)| {
            self.entries.get(uuid).is_some_and(|mine| {
                tags.iter()
                    .all(|(tag, theirs)| mine.get(tag).is_some_and(|m| m.is_superset(theirs)))
            })
        })
    }

    /// Number of transactions in the set.
    ///
    /// `u128` because one interval alone can hold 2^63 - 1 transactions, and a set can hold many
    /// such intervals.
    #[must_use]
    pub fn count(&self) -> u128 {
        self.entries
            .values()
            .flat_map(BTreeMap::values)
            .fold(0, |total, intervals| {
                total.saturating_add(intervals.count())
            })
    }

    /// Adds one transaction; costs a pass over that (uuid, tag)'s intervals.
    ///
    /// A GTID no server can produce (number 0 or above 2^63 - 1, or a malformed tag) is
    /// ignored rather than stored, so that the set always prints as something MySQL accepts.
    pub fn add(&mut self, gtid: &Gtid) {
        if gtid.gno == 0 || gtid.gno > MAX_GNO {
            return;
        }
        let Ok(tag) = gtid.tag.as_deref().map(normalize_tag).transpose() else {
            return;
        };
        let single = Intervals::single(gtid.gno);
        let tags = self.entries.entry(gtid.uuid).or_default();
        let merged = tags
            .get(&tag)
            .map_or_else(|| single.clone(), |m| m.union(&single));
        tags.insert(tag, merged);
    }

    /// Server UUIDs with at least one transaction in the set, ascending.
    pub fn uuids(&self) -> impl Iterator<Item = ServerUuid> + '_ {
        self.entries.keys().copied()
    }

    /// Every interval as (uuid, tag, numbers), in display order.
    pub fn intervals(
        &self,
    ) -> impl Iterator<Item = (ServerUuid, Option<&str>, RangeInclusive<u64>)> + '_ {
        self.entries.iter().flat_map(|(uuid, tags)| {
            tags.iter().flat_map(move |(tag, intervals)| {
                intervals
                    .0
                    .iter()
                    .map(move |&(start, end)| (*uuid, tag.as_deref(), start..=end))
            })
        })
    }
}

impl fmt::Display for GtidSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, (uuid, tags)) in self.entries.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            write!(f, "{uuid}")?;
            for (tag, intervals) in tags {
                if let Some(tag) = tag {
                    write!(f, ":{tag}")?;
                }
                for &(start, end) in &intervals.0 {
                    if start == end {
                        write!(f, ":{start}")?;
                    } else {
                        write!(f, ":{start}-{end}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

string_serde!(ServerUuid, Gtid, GtidSet);

/// Reads one `uuid[:interval...][:tag:interval...]` entry into `raw`, unsorted.
fn parse_entry(entry: &str, raw: &mut RawSet) -> Result<(), GtidParseError> {
    let mut tokens = entry.split(':').map(str::trim_ascii);
    let uuid_token = tokens.next().unwrap_or_default();
    let uuid = ServerUuid::from_token(uuid_token, entry)?;
    let tags = raw.entry(uuid).or_default();
    let mut tag = None;
    // The tag most recently switched to, until an interval follows it.
    let mut dangling_tag: Option<&str> = None;
    let mut any_interval = false;
    for token in tokens {
        let looks_numeric = token
            .bytes()
            .next()
            .is_none_or(|first| first.is_ascii_digit() || first == b'-' || first == b'+');
        if looks_numeric {
            let interval =
                parse_interval(token).map_err(|why| GtidParseError::interval(token, entry, why))?;
            tags.entry(tag.clone()).or_default().push(interval);
            dangling_tag = None;
            any_interval = true;
        } else {
            if let Some(previous) = dangling_tag {
                return Err(GtidParseError::missing_interval(previous, entry));
            }
            tag = Some(normalize_tag(token).map_err(|why| GtidParseError::tag(token, entry, why))?);
            dangling_tag = Some(token);
        }
    }
    match dangling_tag {
        Some(previous) => Err(GtidParseError::missing_interval(previous, entry)),
        None if !any_interval => Err(GtidParseError::missing_interval(uuid_token, entry)),
        None => Ok(()),
    }
}

fn parse_interval(token: &str) -> Result<(u64, u64), &'static str> {
    if token.is_empty() {
        return Err("empty interval");
    }
    let (start, end) = token.split_once('-').unwrap_or((token, token));
    let (start, end) = (parse_gno(start.trim_ascii())?, parse_gno(end.trim_ascii())?);
    if start > end {
        return Err("start is after end");
    }
    Ok((start, end))
}

fn parse_gno(text: &str) -> Result<u64, &'static str> {
    if text.is_empty() {
        return Err("missing number");
    }
    if !all_digits(text) {
        return Err("not a decimal number");
    }
    match parse_decimal(text) {
        Some(0) => Err("transaction numbers start at 1"),
        Some(gno) if gno <= MAX_GNO => Ok(gno),
        _ => Err("number is above the MySQL limit 9223372036854775807"),
    }
}

/// Checks a tag against MySQL's rules and lowercases it, since MySQL compares tags
/// case-insensitively and prints them in lowercase.
fn normalize_tag(token: &str) -> Result<String, &'static str> {
    let mut chars = token.chars();
    match chars.next() {
        None => return Err("empty tag"),
        Some(first) if !(first.is_ascii_alphabetic() || first == '_') => {
            return Err("a tag must start with a letter or '_'");
        }
        Some(_) => {}
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err("a tag may only hold ASCII letters, digits and '_'");
    }
    if token.len() > MAX_TAG_LEN {
        return Err("a tag is at most 32 characters long");
    }
    Ok(token.to_ascii_lowercase())
}
