//! Binlog retention headroom: the oldest binlog each replica channel still needs from its source
//! (the older of its `Master_Log_File` and `Relay_Master_Log_File`) against what the source keeps
//! (`SHOW BINARY LOGS`) and what its expire setting will purge.
//!
//! The server purges by age at a rotation (a `FLUSH BINARY LOGS`, a full file, a restart), and
//! a closed file may be purged as soon as it is older than the expire period; SQL shows no file's
//! age, so every closed file a replica still needs is at risk from the next rotation: a warning.
//! A needed file already gone from the list is an error: the replica can never fetch it again.

use super::{LintFinding, LintSeverity, finding};
use crate::mysql::BinlogFile;
use crate::store::{NodeView, Snapshot};
use crate::units;

pub(super) fn check(s: &Snapshot, out: &mut Vec<LintFinding>) {
    for node in &s.nodes {
        if node.settings().is_none() {
            continue;
        }
        for channel in &node.channels {
            let Some(source) = channel.source.as_deref().and_then(|name| s.node(name)) else {
                continue;
            };
            if source.binlog().files.is_empty() {
                continue;
            }
            if let Some(f) = judge(
                node,
                &channel.channel,
                source,
                &channel.received.file,
                &channel.applied.file,
            ) {
                out.push(f);
            }
        }
    }
}

/// The file's number: `binlog.000012` → 12, so a file no longer listed can be placed before or
/// after the oldest one kept.
fn number(file: &str) -> Option<u64> {
    file.rsplit_once('.').and_then(|(_, n)| n.parse().ok())
}

fn judge(
    node: &NodeView,
    channel: &str,
    source: &NodeView,
    received: &str,
    applied: &str,
) -> Option<LintFinding> {
    let files: &[BinlogFile] = &source.binlog().files;
    let oldest = files.first()?;
    let newest = files.last()?;
    let with_channel = |f: LintFinding| LintFinding {
        channel: Some(channel.to_owned()),
        ..f
    };
    // The IO thread resumes from the received file: without it the channel cannot continue.
    let gone = !received.is_empty()
        && !files.iter().any(|f| f.name == received)
        && number(received)
            .zip(number(&oldest.name))
            .is_some_and(|(r, o)| r < o);
    if gone {
        return Some(with_channel(LintFinding {
            summary: format!(
                "needs {received} from {}, which has purged it (oldest kept: {})",
                source.name, oldest.name
            ),
            why: "the source no longer has the transactions this replica must fetch next: the \
                  channel cannot resume"
                .to_owned(),
            fix: format!(
                "rebuild {} from a fresh backup of {} (or of an up-to-date replica); then keep \
                 binlogs longer on {}: SET GLOBAL binlog_expire_logs_seconds = <longer than the \
                 longest outage to ride out>",
                node.name, source.name, source.name
            ),
            ..finding("binlog_purged", LintSeverity::Error, node)
        }));
    }
    let expire = source.settings()?.binlog_expire?;
    let index = |name: &str| files.iter().position(|f| f.name == name);
    let needed = [received, applied]
        .into_iter()
        .filter_map(|f| index(f).map(|i| (i, f)))
        .min()?;
    let behind = files.len() - 1 - needed.0;
    if behind == 0 {
        return None;
    }
    Some(with_channel(LintFinding {
        summary: format!(
            "still needs {} from {}, {behind} file(s) behind its current {}; {} purges binlogs \
             older than {} at its next rotation",
            needed.1,
            source.name,
            newest.name,
            source.name,
            units::format::duration(expire)
        ),
        why: "once the source purges a file the replica has not fetched (or, with \
              relay_log_recovery, not applied), the replica can never catch up and must be \
              rebuilt"
            .to_owned(),
        fix: format!(
            "get {} replicating again so it catches up, or keep binlogs longer on {}: \
             SET GLOBAL binlog_expire_logs_seconds = <longer than the replica's outage>; and in \
             my.cnf: binlog_expire_logs_seconds = <same>",
            node.name, source.name
        ),
        ..finding("binlog_retention", LintSeverity::Warning, node)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_numbers_order_purged_files_before_the_oldest_kept() {
        assert_eq!(number("binlog.000012"), Some(12));
        assert_eq!(number("mysql-bin.000003"), Some(3));
        assert_eq!(number("weird"), None);
    }
}
