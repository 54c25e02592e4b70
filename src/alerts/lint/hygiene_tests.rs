//! The link-hygiene findings (`link`, `drift`, `versions`, `retries`) over synthetic topologies
//! and recorded status rows: each raised where it holds, at the severity documented, and nothing
//! where a value is missing or NULL (an older server, a `MySQL` row without the column).

use super::{LintFinding, LintSeverity, lint};
use crate::mysql::row::fixture_row;
use crate::mysql::{Family, LinkHygiene, SafetySettings, settings::SettingNames};
use crate::store::testkit::Topo;
use crate::store::testkit::{flavor, live};

fn mariadb() -> SafetySettings {
    SafetySettings {
        net_timeout: Some(60),
        exec_mode: Some("STRICT".to_owned()),
        skip_errors: Some("OFF".to_owned()),
        relay_log_space_limit: Some(0),
        names: SettingNames::of(Family::Mariadb),
        ..SafetySettings::default()
    }
}

fn link(fixture: &str) -> LinkHygiene {
    LinkHygiene::from_row(&fixture_row(fixture))
}

/// `(id, severity, node)` of the findings with one of `ids`.
fn found<'a>(findings: &'a [LintFinding], ids: &[&str]) -> Vec<(&'a str, LintSeverity, &'a str)> {
    findings
        .iter()
        .filter(|f| ids.contains(&f.id))
        .map(|f| (f.id, f.severity, f.node.as_str()))
        .collect()
}

const HYGIENE: [&str; 11] = [
    "heartbeat_period",
    "channel_tls",
    "channel_tls_unverified",
    "replication_filter",
    "until_condition",
    "relay_log_space",
    "exec_mode_idempotent",
    "skip_errors",
    "skip_counter",
    "mixed_versions",
    "parallel_retries",
];

/// A topology whose every node has `settings` and whose replicas' channels read `link`.
fn topo(settings: &SafetySettings, link: &LinkHygiene) -> Topo {
    let mut topo = Topo::new();
    for name in ["db1", "r1", "r2"] {
        topo.node_mut(name, |n| live(n).settings = Some(settings.clone()));
    }
    for name in ["r1", "r2"] {
        topo.replica_mut(name, |c| c.link = link.clone());
    }
    topo
}

#[test]
fn a_clean_mariadb_link_has_no_finding_but_its_clear_text() {
    let running = link("mariadb-10.11/show_all_slaves_status__running.txt");
    let findings = lint(&topo(&mariadb(), &running).snapshot);
    assert_eq!(
        found(&findings, &HYGIENE),
        [
            ("channel_tls", LintSeverity::Warning, "r1"),
            ("channel_tls", LintSeverity::Warning, "r2"),
        ]
    );
}

#[test]
fn missing_or_null_values_raise_nothing() {
    // Settings and status columns not read (an older recording, a server without them).
    let findings = lint(&topo(&SafetySettings::default(), &LinkHygiene::default()).snapshot);
    assert_eq!(found(&findings, &HYGIENE), []);
    // A heartbeat period with the timeout unknown, and the other way round.
    let beat = LinkHygiene {
        heartbeat_period_ms: Some(0),
        ..LinkHygiene::default()
    };
    let no_timeout = SafetySettings {
        net_timeout: None,
        ..mariadb()
    };
    assert_eq!(
        found(&lint(&topo(&no_timeout, &beat).snapshot), &HYGIENE),
        []
    );
    assert_eq!(
        found(
            &lint(&topo(&mariadb(), &LinkHygiene::default()).snapshot),
            &HYGIENE
        ),
        []
    );
}

#[test]
fn heartbeat_severity_follows_the_period_against_the_timeout() {
    let severity = |period_ms: u64| {
        let beat = LinkHygiene {
            heartbeat_period_ms: Some(period_ms),
            ..LinkHygiene::default()
        };
        let findings = lint(&topo(&mariadb(), &beat).snapshot);
        findings
            .iter()
            .find(|f| f.id == "heartbeat_period" && f.node == "r1")
            .map(|f| (f.severity, f.fix.clone()))
    };
    // The 10.11 default, two per timeout, and shorter: fine.
    assert_eq!(severity(30_000), None);
    assert_eq!(severity(5_000), None);
    let (warn, fix) = severity(30_001).unwrap();
    assert_eq!(warn, LintSeverity::Warning);
    assert_eq!(
        fix.split(" (").next(),
        Some("STOP SLAVE; CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD = 30; START SLAVE")
    );
    assert_eq!(severity(59_999).unwrap().0, LintSeverity::Warning);
    assert_eq!(severity(60_000).unwrap().0, LintSeverity::Error);
    assert_eq!(severity(0).unwrap().0, LintSeverity::Error, "no heartbeat");
}

#[test]
fn mysql_row_is_judged_in_mysql_words_and_its_heartbeat_is_not() {
    let row = link("mysql-8.4/show_replica_status__hygiene.txt");
    let settings = SafetySettings {
        names: SettingNames::of(Family::Mysql),
        ..mariadb()
    };
    let mut t = Topo::mysql();
    t.node_mut("r1", |n| live(n).settings = Some(settings.clone()));
    t.replica_mut("r1", |c| c.link = row);
    let findings = lint(&t.snapshot);
    let mut ids: Vec<&str> = found(&findings, &HYGIENE).iter().map(|f| f.0).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        [
            "channel_tls_unverified",
            "replication_filter",
            "skip_counter",
            "until_condition"
        ]
    );
    let fix = |id: &str| {
        findings
            .iter()
            .find(|f| f.id == id)
            .map(|f| f.fix.clone())
            .unwrap_or_default()
    };
    assert!(
        fix("replication_filter").contains("CHANGE REPLICATION FILTER REPLICATE_DO_DB = ()"),
        "{}",
        fix("replication_filter")
    );
    assert!(fix("replication_filter").contains("REPLICATE_WILD_IGNORE_TABLE = ()"));
    assert!(fix("skip_counter").contains("sql_replica_skip_counter = 0"));
    assert!(fix("until_condition").contains("START REPLICA SQL_THREAD"));
    assert!(fix("channel_tls_unverified").contains("SOURCE_SSL_VERIFY_SERVER_CERT = 1"));
}

#[test]
fn drift_settings_are_errors_on_replicas_and_warnings_elsewhere() {
    let drifting = SafetySettings {
        exec_mode: Some("IDEMPOTENT".to_owned()),
        skip_errors: Some("1062,1032".to_owned()),
        ..mariadb()
    };
    let tls = LinkHygiene {
        tls: Some(crate::mysql::ChannelTls::Yes),
        verify_server_cert: Some(true),
        skip_counter: Some(0),
        ..LinkHygiene::default()
    };
    let findings = lint(&topo(&drifting, &tls).snapshot);
    let mut got = found(&findings, &HYGIENE);
    got.sort_unstable_by_key(|f| (f.0, f.2));
    assert_eq!(
        got,
        [
            ("exec_mode_idempotent", LintSeverity::Warning, "db1"),
            ("exec_mode_idempotent", LintSeverity::Error, "r1"),
            ("exec_mode_idempotent", LintSeverity::Error, "r2"),
            ("skip_errors", LintSeverity::Warning, "db1"),
            ("skip_errors", LintSeverity::Error, "r1"),
            ("skip_errors", LintSeverity::Error, "r2"),
        ]
    );
}

#[test]
fn relay_space_is_raised_while_the_io_thread_waits_or_the_applier_is_behind_at_the_limit() {
    let limited = SafetySettings {
        relay_log_space_limit: Some(1 << 20),
        ..mariadb()
    };
    let full = LinkHygiene {
        relay_log_space: Some(6 << 20),
        ..LinkHygiene::default()
    };
    let mut t = topo(&limited, &full);
    // Past the limit but caught up: the server lets the IO thread on.
    assert_eq!(found(&lint(&t.snapshot), &["relay_log_space"]), []);
    t.replica_mut("r1", |c| c.received.pos += 1);
    assert_eq!(
        found(&lint(&t.snapshot), &["relay_log_space"]),
        [("relay_log_space", LintSeverity::Warning, "r1")]
    );
    t.replica_mut("r2", |c| {
        "Waiting for the slave SQL thread to free enough relay log space"
            .clone_into(&mut c.io_state);
    });
    let findings = lint(&t.snapshot);
    let r2 = findings
        .iter()
        .find(|f| f.id == "relay_log_space" && f.node == "r2")
        .unwrap();
    assert!(
        r2.summary.contains("waits for the applier"),
        "{}",
        r2.summary
    );
}

#[test]
fn an_older_replica_under_a_newer_source_is_a_warning_a_failover_risk_a_note() {
    let mut t = topo(&mariadb(), &LinkHygiene::default());
    t.node_mut("r1", |n| {
        n.identity.flavor = Some(flavor("10.6.21-MariaDB-log"));
    });
    let findings = lint(&t.snapshot);
    assert_eq!(
        found(&findings, &["mixed_versions"]),
        [("mixed_versions", LintSeverity::Warning, "r1")]
    );
    assert!(
        findings[0..]
            .iter()
            .any(|f| f.summary.contains("MariaDB 10.6") && f.summary.contains("MariaDB 10.11"))
    );
    // The source older than a replica: the replica is fine now; the source is not, once the
    // replica is promoted above it.
    let mut t = topo(&mariadb(), &LinkHygiene::default());
    t.node_mut("db1", |n| {
        n.identity.flavor = Some(flavor("10.6.21-MariaDB"));
    });
    assert_eq!(
        found(&lint(&t.snapshot), &["mixed_versions"]),
        [("mixed_versions", LintSeverity::Info, "db1")]
    );
    // A node whose flavor is not known yet is not judged.
    let mut t = topo(&mariadb(), &LinkHygiene::default());
    t.node_mut("r1", |n| n.identity.flavor = None);
    assert_eq!(found(&lint(&t.snapshot), &["mixed_versions"]), []);
}

#[test]
fn optimistic_retries_are_a_note_with_the_rate_and_the_fix() {
    let mut t = topo(&mariadb(), &LinkHygiene::default());
    t.replica_mut("r1", |c| {
        c.appliers.mode = Some("optimistic".to_owned());
        c.appliers.retried_transactions = Some(35);
        c.appliers.retries_per_second = Some(3.5);
    });
    t.replica_mut("r2", |c| {
        c.appliers.mode = Some("optimistic".to_owned());
        c.appliers.retried_transactions = Some(35);
        c.appliers.retries_per_second = None;
    });
    let findings = lint(&t.snapshot);
    assert_eq!(
        found(&findings, &["parallel_retries"]),
        [("parallel_retries", LintSeverity::Info, "r1")]
    );
    let f = findings
        .iter()
        .find(|f| f.id == "parallel_retries")
        .unwrap();
    assert!(f.summary.contains("3.5/s"), "{}", f.summary);
    assert!(
        f.fix.starts_with(
            "STOP SLAVE; SET GLOBAL slave_parallel_mode = 'conservative'; START SLAVE"
        ),
        "{}",
        f.fix
    );
    // Conservative mode retrying (a deadlock, a lock wait): not this finding.
    t.replica_mut("r1", |c| c.appliers.mode = Some("conservative".to_owned()));
    assert_eq!(found(&lint(&t.snapshot), &["parallel_retries"]), []);
}
