//! The rows a tool publishes about its run, read into it: gh-ost's changelog (its `state` and
//! `throttle` rows) and Spirit's newest checkpoint (`rows_copied`, `checksum_watermark`). A
//! table whose columns are not the tool's, or a value that is not what the tool writes, makes
//! the run unreadable with a message naming the table and what was expected.

use super::{DetailAnswer, OscPhase, OscRun, Suffix, tool_table};

/// The columns of gh-ost's changelog, as it creates it.
const CHANGELOG_COLUMNS: &str = "id, last_update, hint, value";
/// The columns of Spirit's checkpoint read here, of those it creates.
const CHECKPOINT_COLUMNS: &str = "id, copier_watermark, checksum_watermark, binlog_name, \
                                  binlog_pos, rows_copied, rows_copied_logical, alter_statement";

fn unreadable(run: &OscRun, table: Suffix, why: &str, expected: &str) -> String {
    format!(
        "{} is recognised but cannot be read: {}.{}: {why} (expected {}'s columns {expected})",
        run.title(),
        run.schema,
        tool_table(&run.table, table),
        run.tool.name()
    )
}

/// gh-ost's `state` row says the phase (`AllEventsUpToLockProcessed:…` and `Migrated` are the
/// cut-over and after), its `throttle` row the latest reason or `done throttling`.
pub(super) fn read_changelog(run: &mut OscRun, answer: &DetailAnswer) {
    let rows = match answer {
        Ok(rows) => rows,
        Err(why) => {
            run.unreadable = Some(unreadable(run, Suffix::Ghc, why, CHANGELOG_COLUMNS));
            return;
        }
    };
    for row in rows {
        let (Some(hint), Some(value)) =
            (row.optional_text(&["hint"]), row.optional_text(&["value"]))
        else {
            run.unreadable = Some(unreadable(
                run,
                Suffix::Ghc,
                "has a row without hint or value",
                CHANGELOG_COLUMNS,
            ));
            return;
        };
        match hint {
            "state" => {
                let state = value.split(':').next().unwrap_or_default();
                if matches!(state, "AllEventsUpToLockProcessed" | "Migrated") {
                    run.phase = OscPhase::CutOver;
                }
            }
            "throttle" => {
                run.throttled = (!value.is_empty() && value != "done throttling")
                    .then(|| value.chars().take(120).collect());
            }
            _ => {}
        }
    }
}

/// Spirit's newest checkpoint: its row count, and a checksum under way.
pub(super) fn read_checkpoint(run: &mut OscRun, answer: &DetailAnswer) {
    let rows = match answer {
        Ok(rows) => rows,
        Err(why) => {
            run.unreadable = Some(unreadable(run, Suffix::Chkpnt, why, CHECKPOINT_COLUMNS));
            return;
        }
    };
    let Some(row) = rows.first() else {
        // No checkpoint written yet: the copy table's estimate stands.
        return;
    };
    match row.opt_u64(&["rows_copied"]) {
        Ok(Some(rows)) => {
            run.rows_copied = Some(rows);
            run.copied_counted = true;
        }
        Ok(None) => {}
        Err(e) => {
            run.unreadable = Some(unreadable(
                run,
                Suffix::Chkpnt,
                &format!("rows_copied: {e}"),
                CHECKPOINT_COLUMNS,
            ));
            return;
        }
    }
    if row
        .optional_text(&["checksum_watermark"])
        .is_some_and(|w| !w.trim().is_empty())
    {
        run.phase = OscPhase::Checksum;
    }
}
