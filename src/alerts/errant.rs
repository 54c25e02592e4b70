//! Errant transactions: executed on a replica but never on its source. They sit harmlessly until
//! a failover makes that replica a source (or another replica asks for them), then replication
//! breaks or silently diverges, so they are critical while the topology still looks healthy.
//!
//! The source and replica are sampled at different moments. Transactions the source, or any
//! node above it, originated may simply be newer than the source's sample, so they are never
//! counted: MySQL by their server UUID, MariaDB by their server id. The rule asks for the whole
//! chain up to the primary because on a cascaded replica the newer transactions come from the
//! top, not from its direct source.

use std::collections::HashSet;

use super::format;
use super::verdict::{RuleInputs, Verdict, fact};
use crate::gtid::{DomainGtid, GtidList, GtidSet, ServerUuid};
use crate::mysql::GtidState;
use crate::store::{NodeView, Role};

pub fn verdict(inputs: &RuleInputs<'_>, node: &NodeView) -> Verdict {
    if node.role != Role::Replica {
        return Verdict::Clean;
    }
    // Every channel's source: a multi-source replica holds each source's transactions, and only
    // what none of them (nor anyone above them) had is errant.
    let Some(sources) = sources(inputs, node) else {
        return Verdict::Unknown;
    };
    let upstream: Vec<&NodeView> = sources.iter().flat_map(|s| upstream(inputs, s)).collect();
    let Some(theirs) = merged_gtid(&sources) else {
        return Verdict::Unknown;
    };
    let names: Vec<&str> = sources.iter().map(|s| s.name.as_str()).collect();
    let source_names = names.join(", ");
    let (errant, count) = match (&node.gtid(), &theirs) {
        (Some(GtidState::Mysql { executed: mine }), GtidState::Mysql { executed: theirs }) => {
            let uuids: Option<HashSet<ServerUuid>> = upstream
                .iter()
                .map(|n| {
                    n.identity
                        .server_uuid
                        .as_deref()
                        .and_then(|u| ServerUuid::parse(u).ok())
                })
                .collect();
            // Without the source's UUID every newer transaction of its would look errant.
            let Some(uuids) = uuids else {
                return Verdict::Unknown;
            };
            mysql_errant(mine, theirs, &uuids)
        }
        (
            Some(GtidState::Mariadb {
                binlog_pos,
                slave_pos,
                ..
            }),
            GtidState::Mariadb {
                binlog_pos: theirs, ..
            },
        ) => {
            let ids: Option<HashSet<u32>> = upstream.iter().map(|n| n.identity.server_id).collect();
            let Some(ids) = ids else {
                return Verdict::Unknown;
            };
            let errant: Vec<String> = mariadb_errant(binlog_pos, slave_pos, theirs, &ids)
                .iter()
                .map(ToString::to_string)
                .collect();
            let count = errant.len() as u128;
            (errant.join(","), count)
        }
        // A source not sampled yet, or two families: nothing to compare.
        _ => return Verdict::Unknown,
    };
    if count == 0 {
        return Verdict::Clean;
    }
    let family_count = match &node.gtid() {
        Some(GtidState::Mariadb { .. }) if count == 1 => "1 domain".to_owned(),
        Some(GtidState::Mariadb { .. }) => format!("{count} domains"),
        _ => format!("{count} trx"),
    };
    let evidence = vec![
        fact("errant_gtids", errant.clone()),
        fact("count", family_count),
        fact("source", source_names.clone()),
    ];
    let cause = format!(
        "{} executed {} that {source_names} never had: the next failover will break or diverge",
        node.name,
        format::quote(&errant),
    );
    Verdict::bad(evidence, cause)
}

/// The nodes each channel replicates from; `None` while one of them is not known (a channel
/// whose source rwtop does not poll may have brought any transaction).
fn sources<'a>(inputs: &'a RuleInputs<'_>, node: &'a NodeView) -> Option<Vec<&'a NodeView>> {
    if node.channels.is_empty() {
        return inputs.source_of(node).map(|s| vec![s]);
    }
    node.channels
        .iter()
        .map(|c| inputs.by_name.get(c.source.as_deref()?).copied())
        .collect()
}

/// What the sources had together: the union of `MySQL` sets, or per `MariaDB` domain the
/// furthest position; `None` while one is not sampled or the families differ.
fn merged_gtid(sources: &[&NodeView]) -> Option<GtidState> {
    let mut merged: Option<GtidState> = None;
    for source in sources {
        merged = Some(match (merged, source.gtid()?) {
            (None, gtid) => gtid.clone(),
            (Some(GtidState::Mysql { executed }), GtidState::Mysql { executed: more }) => {
                GtidState::Mysql {
                    executed: executed.union(more),
                }
            }
            (
                Some(GtidState::Mariadb {
                    mut binlog_pos,
                    slave_pos,
                    current_pos,
                }),
                GtidState::Mariadb {
                    binlog_pos: more, ..
                },
            ) => {
                for gtid in more.iter() {
                    if binlog_pos.seq(gtid.domain).is_none_or(|seq| seq < gtid.seq) {
                        binlog_pos.insert(*gtid);
                    }
                }
                GtidState::Mariadb {
                    binlog_pos,
                    slave_pos,
                    current_pos,
                }
            }
            _ => return None,
        });
    }
    merged
}

/// The source and every node above it, stopping at a loop.
fn upstream<'a>(inputs: &'a RuleInputs<'_>, source: &'a NodeView) -> Vec<&'a NodeView> {
    let mut chain = vec![source];
    let mut at = source;
    while let Some(next) = inputs.source_of(at) {
        if chain.iter().any(|n| n.name == next.name) {
            break;
        }
        chain.push(next);
        at = next;
    }
    chain
}

/// A MariaDB position holds one GTID per domain, so two signs are read, each ignoring GTIDs by
/// upstream servers:
///
/// * the replica's binlog position is ahead of its source's in a domain
///   ([`GtidList::ahead_of`]);
/// * the replica's binlog position is ahead of what its own replication applied
///   (`gtid_slave_pos`), which is MariaDB's sign of a local write (it is what makes
///   `gtid_current_pos` differ from `gtid_slave_pos`), unless the source shows that very GTID.
///
/// The second catches the usual case the first misses: the primary keeps writing, its sequence
/// numbers overtake the replica's local write within a second, and from then on that write is
/// "behind" the source by position while the source never had it.
fn mariadb_errant(
    binlog_pos: &GtidList,
    slave_pos: &GtidList,
    source: &GtidList,
    upstream: &HashSet<u32>,
) -> Vec<DomainGtid> {
    let local = binlog_pos
        .ahead_of(slave_pos)
        .into_iter()
        .filter(|gtid| source.get(gtid.domain) != Some(gtid));
    let mut errant: Vec<DomainGtid> = binlog_pos
        .ahead_of(source)
        .into_iter()
        .chain(local)
        .filter(|gtid| !upstream.contains(&gtid.server_id))
        .collect();
    errant.sort_by_key(|gtid| gtid.domain);
    errant.dedup_by_key(|gtid| gtid.domain);
    errant
}

/// The replica's transactions the source has not executed, without those originated upstream.
fn mysql_errant(
    mine: &GtidSet,
    theirs: &GtidSet,
    upstream: &HashSet<ServerUuid>,
) -> (String, u128) {
    let mut pieces = Vec::new();
    let mut count: u128 = 0;
    for (uuid, tag, range) in mine.subtract(theirs).intervals() {
        if upstream.contains(&uuid) {
            continue;
        }
        count = count.saturating_add(u128::from(range.end() - range.start()) + 1);
        let numbers = if range.start() == range.end() {
            range.start().to_string()
        } else {
            format!("{}-{}", range.start(), range.end())
        };
        pieces.push(match tag {
            Some(tag) => format!("{uuid}:{tag}:{numbers}"),
            None => format!("{uuid}:{numbers}"),
        });
    }
    let joined = pieces.join(",");
    // Re-read so intervals of one UUID print together, as servers print them.
    let text = GtidSet::parse(&joined).map_or(joined, |set| set.to_string());
    (text, count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alerts::AlertKind;
    use crate::alerts::testkit::Judge;
    use crate::store::testkit::live;
    use crate::store::testkit::{Topo, mariadb_gtid, mysql_gtid};

    const KIND: AlertKind = AlertKind::ErrantTransactions;
    const SRC: &str = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    const R1: &str = "4e11fa47-71ca-11e1-9e33-c80aa9429562";

    #[test]
    fn mysql_errant_lists_the_gtids() {
        let mut topo = Topo::mysql();
        topo.node_mut("r1", |n| {
            live(n).gtid = mysql_gtid(&format!("{SRC}:1-100,{R1}:1-3"));
        });
        let alert = topo.raise(KIND, Some("r1"));
        assert_eq!(alert.evidence[0], fact("errant_gtids", format!("{R1}:1-3")));
        assert_eq!(alert.evidence[1], fact("count", "3 trx"));
        assert!(alert.cause.contains("failover"), "{}", alert.cause);
    }

    #[test]
    fn mysql_newer_sample_of_the_source_is_not_errant() {
        let mut topo = Topo::mysql();
        // The replica was sampled after the source committed 5 more.
        topo.node_mut("r1", |n| live(n).gtid = mysql_gtid(&format!("{SRC}:1-105")));
        topo.assert_quiet(KIND);
    }

    #[test]
    fn mariadb_errant_by_server_id() {
        let mut topo = Topo::new();
        topo.node_mut("r2", |n| live(n).gtid = mariadb_gtid("0-1-100,1-3-7"));
        let alert = topo.raise(KIND, Some("r2"));
        assert_eq!(alert.evidence[0], fact("errant_gtids", "1-3-7"));
        assert_eq!(alert.evidence[1], fact("count", "1 domain"));
    }

    #[test]
    fn mariadb_newer_sample_of_the_source_is_not_errant() {
        let mut topo = Topo::new();
        topo.node_mut("r2", |n| live(n).gtid = mariadb_gtid("0-1-140"));
        topo.assert_quiet(KIND);
        // Written on the replica in the source's own domain: errant.
        topo.node_mut("r2", |n| live(n).gtid = mariadb_gtid("0-3-101"));
        assert_eq!(topo.raise(KIND, Some("r2")).evidence[0].1, "0-3-101");
    }

    #[test]
    fn mariadb_local_write_overtaken_by_the_source_is_still_errant() {
        let mut topo = Topo::new();
        topo.node_mut("db1", |n| live(n).gtid = mariadb_gtid("0-1-105"));
        topo.node_mut("r1", |n| {
            live(n).gtid = crate::mysql::GtidState::Mariadb {
                binlog_pos: GtidList::parse("0-2-102").unwrap_or_default(),
                slave_pos: GtidList::parse("0-1-100").unwrap_or_default(),
                current_pos: GtidList::parse("0-2-102").unwrap_or_default(),
            };
        });
        let alert = topo.raise(KIND, Some("r1"));
        assert_eq!(alert.evidence[0], fact("errant_gtids", "0-2-102"));
        // A replica that once was the primary: its old write is the source's latest too.
        topo.node_mut("db1", |n| live(n).gtid = mariadb_gtid("0-1-100,1-2-50"));
        topo.node_mut("r1", |n| {
            live(n).gtid = crate::mysql::GtidState::Mariadb {
                binlog_pos: GtidList::parse("0-1-100,1-2-50").unwrap_or_default(),
                slave_pos: GtidList::parse("0-1-100").unwrap_or_default(),
                current_pos: GtidList::parse("0-1-100,1-2-50").unwrap_or_default(),
            };
        });
        topo.assert_quiet(KIND);
    }

    #[test]
    fn cascaded_replica_ignores_newer_transactions_from_the_top() {
        let mut topo = Topo::new();
        topo.add_replica("c1", "r1", 4);
        topo.node_mut("c1", |n| live(n).gtid = mariadb_gtid("0-1-120"));
        topo.assert_quiet(KIND);
    }
}
