//! `rwtop grants`: the `CREATE USER` and `GRANT` statements for what rwtop needs, per flavor and
//! mode, from the one list in `mysql::grants` (the connect-time check reads the same list).

use std::fmt::Write as _;

use rwtop::mysql::Family;
use rwtop::mysql::grants::{self, Mode, Uses};

use super::output::emit;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FlavorArg {
    Mariadb,
    Mysql,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// The monitor, the heartbeat writer on every root and test reads (rwtop's default).
    Full,
    /// `rwtop --read-only`: nothing written anywhere, lag from pt-heartbeat's table.
    ReadOnly,
}

#[derive(Debug, Clone, clap::Args)]
pub struct GrantsArgs {
    /// Only this flavor's statements [default: both].
    #[arg(long, value_enum)]
    pub flavor: Option<FlavorArg>,
    /// The account, as CREATE USER names it.
    #[arg(long, default_value = grants::README_ACCOUNT)]
    pub account: String,
    /// full: monitor, heartbeat writer, test reads; read-only: writes nothing (--read-only).
    #[arg(long, value_enum, default_value = "full")]
    pub mode: ModeArg,
    /// pt-heartbeat's table, read in read-only mode (as [heartbeat] pt_table).
    #[arg(long, value_name = "DB.TABLE", default_value = "percona.heartbeat")]
    pub pt_table: String,
    /// Add FILE, for free disk space ([headroom] read_disks; MariaDB only).
    #[arg(long)]
    pub disks: bool,
    /// Add what killing a waiting DDL's blocker needs ([ddl] allow_kill).
    #[arg(long)]
    pub kill: bool,
    /// Add SELECT and TRIGGER on a schema whose online schema changes rwtop should follow;
    /// repeat for more.
    #[arg(long = "osc-schema", value_name = "SCHEMA")]
    pub osc_schemas: Vec<String>,
}

pub fn run(args: &GrantsArgs) -> anyhow::Result<()> {
    let text = statements(args)?;
    emit(&text)?;
    Ok(())
}

/// The statements `args` ask for, every privilege with a comment saying what it is for.
fn statements(args: &GrantsArgs) -> anyhow::Result<String> {
    let account = args.account.trim();
    let plain = |s: &str| !s.is_empty() && !s.contains([';', '\n', '\r']);
    if !plain(account) {
        anyhow::bail!(
            "--account {:?} is not an account name: give it as CREATE USER does, e.g. \
             'rwtop'@'%' or 'rwtop'@'10.0.%'",
            args.account
        );
    }
    if !plain(&args.pt_table) || !args.pt_table.contains('.') {
        anyhow::bail!(
            "--pt-table {:?} is not DB.TABLE: give pt-heartbeat's table as rwtop.toml's \
             [heartbeat] pt_table does, e.g. percona.heartbeat",
            args.pt_table
        );
    }
    let (mode, mode_text) = match args.mode {
        ModeArg::Full => (
            Mode::Full,
            "full: the monitor, the heartbeat writer, test reads",
        ),
        ModeArg::ReadOnly => (
            Mode::ReadOnly,
            "read-only: rwtop --read-only, which writes nothing",
        ),
    };
    let uses = Uses {
        disks: args.disks,
        kill: args.kill,
        osc_schemas: args.osc_schemas.clone(),
        ..mode.uses(&args.pt_table)
    };
    let families: &[Family] = match args.flavor {
        Some(FlavorArg::Mariadb) => &[Family::Mariadb],
        Some(FlavorArg::Mysql) => &[Family::Mysql],
        None => &[Family::Mariadb, Family::Mysql],
    };
    let mut out = String::new();
    for (i, family) in families.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let name = match family {
            Family::Mariadb => "MariaDB 10.5 and later",
            Family::Mysql => "MySQL 8.0 and 8.4 (5.7: SUPER in place of CONNECTION_ADMIN)",
        };
        let _ = writeln!(out, "-- rwtop's grants for {name}; mode {mode_text}.");
        let _ = writeln!(
            out,
            "-- Put the password in place of <password>; docs/grants.md says what goes off \
             without each privilege."
        );
        let _ = writeln!(
            out,
            "CREATE USER IF NOT EXISTS {account} IDENTIFIED BY '<password>';"
        );
        let needs = grants::needs(*family, &uses);
        for need in &needs {
            let _ = writeln!(
                out,
                "-- {} ON {}: {}",
                need.privilege,
                need.scope.sql(),
                need.used_for
            );
        }
        for statement in grants::grant_statements(&needs, account) {
            let _ = writeln!(out, "{statement};");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(flavor: Option<FlavorArg>) -> GrantsArgs {
        GrantsArgs {
            flavor,
            account: grants::README_ACCOUNT.to_owned(),
            mode: ModeArg::Full,
            pt_table: "percona.heartbeat".to_owned(),
            disks: false,
            kill: false,
            osc_schemas: Vec::new(),
        }
    }

    #[test]
    fn the_statements_are_the_checked_list_and_no_password() {
        let text = statements(&args(Some(FlavorArg::Mariadb))).unwrap();
        let grants: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("GRANT"))
            .map(|l| l.trim_end_matches(';'))
            .collect();
        assert_eq!(
            grants,
            grants::monitor_grants(Family::Mariadb, grants::README_ACCOUNT)
        );
        assert!(text.contains("IDENTIFIED BY '<password>';"), "{text}");
        let both = statements(&args(None)).unwrap();
        assert!(both.contains("performance_schema"), "MySQL too: {both}");
    }

    #[test]
    fn a_bad_account_or_table_is_refused_with_the_form() {
        let mut bad = args(None);
        bad.account = "'x'@'%'; DROP USER root".to_owned();
        let err = statements(&bad).unwrap_err().to_string();
        assert!(err.contains("'rwtop'@'%'"), "{err}");
        let mut bad = args(None);
        bad.pt_table = "heartbeat".to_owned();
        let err = statements(&bad).unwrap_err().to_string();
        assert!(err.contains("DB.TABLE"), "{err}");
    }
}
