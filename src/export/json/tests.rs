//! The JSON document of synthetic snapshots: a channel per row of the replica's status, the
//! 1.3 per-node fields kept (the default channel's), every key documented, and a node as an
//! older recording wrote it still turned into the same document.

use crate::store::testkit::{live, scan};
use std::collections::BTreeSet;

use serde_json::Value;

use super::{SCHEMA_VERSION, from_snapshot};
use crate::alerts::{AlertKind, LogEntry};
use crate::mysql::{IoRunning, ThreadError};
use crate::store::Snapshot;
use crate::store::lag::Lag;
use crate::store::testkit::{Topo, blocked_ddl, secs};

fn doc(s: &Snapshot) -> Value {
    serde_json::to_value(from_snapshot(s)).unwrap_or_else(|e| panic!("{e}"))
}

fn node<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["name"] == name))
        .unwrap_or_else(|| panic!("no node {name} in {doc:#}"))
}

/// r2 replicating from db1 on `''` and from a second root db2 on `p2`, whose SQL thread
/// stopped on an error while its IO thread reconnects.
fn two_channels() -> Topo {
    let mut topo = Topo::new();
    topo.add_primary("db2", 4);
    topo.add_channel("r2", "p2", "db2");
    topo.channel_mut("r2", "p2", |r| {
        r.source_address = "127.0.0.1:13309".to_owned();
        r.io_running = IoRunning::Connecting;
        r.sql_running = false;
        r.sql_state = String::new();
        r.seconds_behind_source = None;
        r.heartbeat_lag = Lag::AtLeast {
            lag: secs(3.0),
            upper: Some(secs(9.25)),
        };
        r.hop_lag = Some(secs(0.5));
        r.lag_split = crate::store::lag_split::LagSplit::of(
            &r.heartbeat_lag,
            &Lag::Unknown {
                reason: "the channel does not replicate by GTID".to_owned(),
            },
        );
        r.gtid_backlog.not_applied = Some(42);
        r.bytes_behind.io = None;
        r.applied.pos = 1_024;
        r.sql_delay = Some(0);
        r.sql_remaining_delay = None;
        r.last_sql_error = Some(ThreadError {
            errno: 1062,
            message: "Duplicate entry".to_owned(),
            timestamp: None,
        });
        r.appliers.row_events = vec![crate::mysql::RowApply {
            thread_id: 10,
            event: crate::mysql::RowEvent::Update,
            schema: Some("shop".to_owned()),
            table: Some("events".to_owned()),
            named_by: Some(crate::mysql::NamedBy::Statement),
            has_key: Some(false),
        }];
    });
    topo
}

#[test]
fn each_channel_is_an_object_of_its_own() {
    let d = doc(&two_channels().snapshot);
    assert_eq!(d["schema_version"], SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, "1.15");
    let channels = node(&d, "r2")["channels"].as_array().cloned();
    let channels = channels.unwrap_or_default();
    let names: Vec<&Value> = channels.iter().map(|c| &c["channel"]).collect();
    assert_eq!(names, ["", "p2"], "in the server's order");
    let (default, p2) = (&channels[0], &channels[1]);

    assert_eq!(default["source"], "db1");
    assert_eq!(default["source_address"], "db1:3306");
    assert_eq!(default["io_running"], "yes");
    assert_eq!(default["sql_running"], true);
    assert_eq!(default["seconds_behind_source"], 0);
    assert_eq!(default["heartbeat_lag_seconds"]["kind"], "exact");
    assert_eq!(default["heartbeat_lag_seconds"]["now"], 0.12);
    assert_eq!(default["heartbeat_lag_seconds"]["p99"], 0.24);
    assert_eq!(default["hop_lag_seconds"], Value::Null);
    assert_eq!(
        default["lag_split"],
        serde_json::json!({
            "transport": { "kind": "exact", "seconds": 0.12, "reason": null },
            "apply": { "kind": "exact", "seconds": 0.0, "reason": null },
        })
    );
    assert_eq!(default["gtid_backlog"]["total"], 0);
    assert_eq!(default["last_sql_error"], Value::Null);

    assert_eq!(p2["source"], "db2");
    assert_eq!(p2["source_address"], "127.0.0.1:13309");
    assert_eq!(p2["io_running"], "connecting");
    assert_eq!(p2["sql_running"], false);
    assert_eq!(p2["sql_state"], "");
    assert_eq!(p2["seconds_behind_source"], Value::Null, "NULL stays null");
    let lag = &p2["heartbeat_lag_seconds"];
    assert_eq!(
        (&lag["kind"], &lag["now"], &lag["upper_bound"]),
        (
            &Value::from("at_least"),
            &Value::from(3.0),
            &Value::from(9.25)
        )
    );
    assert_eq!(p2["hop_lag_seconds"], 0.5);
    let split = &p2["lag_split"];
    assert_eq!(split["transport"]["kind"], "unknown");
    assert_eq!(
        split["transport"]["seconds"],
        Value::Null,
        "unknown is null, never 0"
    );
    assert_eq!(
        split["transport"]["reason"],
        "the channel does not replicate by GTID"
    );
    assert_eq!(split["apply"]["kind"], "unknown");
    assert_eq!(
        p2["gtid_backlog"],
        serde_json::json!({ "not_received": 0, "not_applied": 42, "total": 42 })
    );
    assert_eq!(
        p2["bytes_behind"],
        serde_json::json!({ "io": null, "sql": 0 })
    );
    assert_eq!(
        p2["received"],
        serde_json::json!({ "file": "mysql-bin.000003", "pos": 4096 })
    );
    assert_eq!(p2["applied"]["pos"], 1024);
    assert_eq!(p2["sql_delay"], 0);
    assert_eq!(p2["sql_remaining_delay"], Value::Null);
    assert_eq!(
        p2["last_sql_error"],
        serde_json::json!({ "errno": 1062, "message": "Duplicate entry" })
    );
    // A root and a node that does not replicate: no channel.
    assert_eq!(node(&d, "db2")["channels"], serde_json::json!([]));
    assert_eq!(node(&d, "db1")["channels"], serde_json::json!([]));
    assert_eq!(node(&d, "r1")["channels"].as_array().map(Vec::len), Some(1));
}

/// Since 1.8 a node that stops answering keeps its channels: each by name and source, its lag
/// unknown, its live fields null (not its last values, not 0); the node's own replica fields
/// stay null, as before.
#[test]
fn a_node_that_does_not_answer_keeps_its_channels_with_nothing_live() {
    let mut topo = two_channels();
    topo.stop_answering("r2");
    let d = doc(&topo.snapshot);
    let r2 = node(&d, "r2");
    assert_eq!(r2["state"], "down");
    let channels = r2["channels"].as_array().cloned().unwrap_or_default();
    let places: Vec<(&Value, &Value)> = channels
        .iter()
        .map(|c| (&c["channel"], &c["source"]))
        .collect();
    assert_eq!(
        places,
        [
            (&Value::from(""), &Value::from("db1")),
            (&Value::from("p2"), &Value::from("db2"))
        ]
    );
    for c in &channels {
        let lag = &c["heartbeat_lag_seconds"];
        assert_eq!(
            (&lag["kind"], &lag["now"], &lag["reason"]),
            (
                &Value::from("unknown"),
                &Value::Null,
                &Value::from("node is down")
            ),
            "{c:#}"
        );
        for key in [
            "io_running",
            "sql_running",
            "io_state",
            "sql_state",
            "seconds_behind_source",
            "received",
            "applied",
            "sql_delay",
            "last_io_error",
            "last_sql_error",
            "hop_lag_seconds",
        ] {
            assert_eq!(c[key], Value::Null, "{key} of {c:#}");
        }
        assert_eq!(c["gtid_backlog"]["total"], Value::Null);
        assert_eq!(c["catch_up"]["state"], "unknown");
    }
    assert_eq!(channels[1]["source_address"], "127.0.0.1:13309");
    for key in ["io_running", "sql_running", "seconds_behind_source"] {
        assert_eq!(r2[key], Value::Null, "{key}");
    }
    assert_eq!(r2["heartbeat_lag_seconds"]["kind"], "unknown");
}

/// The 1.3 fields stay, with the default channel's values, so 1.x consumers read on.
#[test]
fn the_per_node_replica_fields_are_the_default_channels() {
    let mut topo = two_channels();
    // The server lists `p2` first: the node's fields still describe the default channel.
    topo.node_mut("r2", |n| n.channels.reverse());
    let d = doc(&topo.snapshot);
    let r2 = node(&d, "r2");
    let default = r2["channels"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["channel"] == ""))
        .cloned()
        .unwrap_or_default();
    assert_eq!(r2["channels"][0]["channel"], "p2");
    for key in [
        "io_running",
        "sql_running",
        "seconds_behind_source",
        "heartbeat_lag_seconds",
        "gtid_backlog",
        "bytes_behind",
        "sql_delay",
        "last_io_error",
        "last_sql_error",
    ] {
        assert_eq!(r2[key], default[key], "{key}");
    }
    assert_eq!(r2["source"], "db1");
    // Every 1.3 key of a node is still there, on a replica and on a primary.
    let keys_13 = [
        "name",
        "address",
        "role",
        "source",
        "flavor",
        "version",
        "state",
        "state_detail",
        "server_id",
        "read_only",
        "sample_age_seconds",
        "processes",
        "clock_offset_ms",
        "ddl",
        "io_running",
        "sql_running",
        "seconds_behind_source",
        "heartbeat_lag_seconds",
        "gtid_backlog",
        "bytes_behind",
        "sql_delay",
        "last_io_error",
        "last_sql_error",
    ];
    for name in ["r2", "db1"] {
        let n = node(&d, name);
        let missing: Vec<&str> = keys_13
            .iter()
            .copied()
            .filter(|k| n.get(k).is_none())
            .collect();
        assert!(missing.is_empty(), "{name} lost {missing:?}");
    }
    assert_eq!(node(&d, "db1")["sql_running"], Value::Null);
}

#[test]
fn alerts_and_the_log_name_their_channel() {
    let mut snapshot = two_channels().snapshot;
    let since = chrono::DateTime::from_timestamp(1_699_999_990, 0).unwrap_or_default();
    let alert = crate::store::testkit::sql_stopped_alert;
    snapshot.alerts.active = vec![alert(Some("p2")), alert(None)];
    snapshot.alerts.log = vec![LogEntry {
        at: since,
        raised: true,
        kind: AlertKind::SqlThreadStopped,
        node: Some("r2".to_owned()),
        channel: Some("p2".to_owned()),
        summary: "SQL thread stopped".to_owned(),
    }]
    .into();
    let d = doc(&snapshot);
    assert_eq!(d["alerts"][0]["channel"], "p2");
    assert_eq!(d["alerts"][0]["node"], "r2");
    assert_eq!(d["alerts"][1]["channel"], Value::Null, "present, null");
    assert_eq!(d["alert_log"][0]["channel"], "p2");
    assert_eq!(d["alert_log"][0]["at"], "2023-11-14T22:13:10Z");
}

fn judged(topo: &Topo) -> crate::alerts::AlertsView {
    let mut engine = crate::alerts::AlertEngine::new(crate::alerts::AlertSettings::default());
    engine.evaluate(&topo.at(1));
    engine.evaluate(&topo.at(2))
}

/// r1's IO thread stopped; c1, under r1, is as far behind as r1 with SBM 0: one incident, and
/// c1's alert names it and its root.
#[test]
fn every_alert_names_its_incident_and_root() {
    let snapshot = crate::alerts::testkit::io_stop_incident();
    let d = doc(&snapshot);
    let alerts = d["alerts"].as_array().cloned().unwrap_or_default();
    let of = |kind: &str, node: &str| {
        alerts
            .iter()
            .find(|a| a["kind"] == kind && a["node"] == node)
            .cloned()
            .unwrap_or_else(|| panic!("no {kind} on {node}: {alerts:#?}"))
    };
    let root = of("io_thread_stopped", "r1");
    assert_eq!(root["incident"], "io_thread_stopped:r1");
    assert_eq!(root["caused_by"], Value::Null, "present, null on the root");
    assert_eq!(root["severity"], "critical");
    let c1 = of("sbm_understates_lag", "c1");
    assert_eq!(c1["incident"], "io_thread_stopped:r1");
    assert_eq!(c1["caused_by"], "io_thread_stopped:r1");
    assert_eq!(c1["inherited"], true);
    assert_eq!(c1["recovering"], false);
    assert_eq!(c1["severity"], "warning", "folded under the incident");
    assert_eq!(c1["evidence"]["caused_by"], "io_thread_stopped:r1");
    let incidents = d["incidents"].as_array().cloned().unwrap_or_default();
    assert_eq!(incidents.len(), 1, "{incidents:#?}");
    assert_eq!(incidents[0]["id"], "io_thread_stopped:r1");
    assert_eq!(incidents[0]["severity"], "critical");
    assert_eq!(incidents[0]["node"], "r1");
    assert_eq!(
        incidents[0]["alerts"],
        serde_json::json!(["io_thread_stopped:r1", "sbm_understates_lag:c1"])
    );
}

fn keys(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.insert(k.clone());
                if k != "evidence" {
                    keys(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

/// Every key of a two-channel document (alerts and log included) stands in
/// docs/json-schema.md, and the page says which version it describes.
#[test]
fn every_key_is_documented() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-schema.md");
    let page = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(
        page.starts_with(&format!(
            "# `rwtop snapshot --json` schema, version {SCHEMA_VERSION}\n"
        )),
        "{path} names another version"
    );
    assert!(page.contains(&format!("\"schema_version\": \"{SCHEMA_VERSION}\"")));
    let mut topo = two_channels();
    topo.node_mut("db1", |n| {
        *scan(n) = vec![blocked_ddl("ALTER TABLE t FORCE", 95, false)];
        live(n).semisync = Some(super::semisync::example());
        live(n).galera = Some(super::galera::example());
        n.missing_grants = vec![crate::mysql::grants::MissingGrant {
            privilege: "FILE".to_owned(),
            on: "*.*".to_owned(),
            off: "free disk space is not read".to_owned(),
            fix: "GRANT FILE ON *.* TO `rwtop`@`%`".to_owned(),
        }];
    });
    topo.replica_mut("r1", |r| r.sql_running = false);
    let mut snapshot = topo.snapshot.clone();
    snapshot.alerts = judged(&topo);
    snapshot.exposure = crate::alerts::exposure::judge(&snapshot);
    assert!(!snapshot.exposure.is_empty());
    let cluster = crate::store::cluster::ClusterSpec {
        name: "c".to_owned(),
        members: vec!["db1".to_owned()],
        writer: Some("db1".to_owned()),
    };
    snapshot.clusters = vec![crate::store::cluster::ClusterView::of(
        &cluster,
        &snapshot.nodes,
    )];
    snapshot.alerts.log = vec![LogEntry {
        at: snapshot.taken_at,
        raised: false,
        kind: AlertKind::NodeDown,
        node: None,
        channel: None,
        summary: "cleared".to_owned(),
    }]
    .into();
    let mut all = BTreeSet::new();
    keys(&doc(&snapshot), &mut all);
    let missing: Vec<&String> = all
        .iter()
        .filter(|k| !page.contains(&format!("\"{k}\"")))
        .collect();
    assert!(missing.is_empty(), "not in {path}: {missing:?}");
}

/// A recording made before 1.4 holds one channel under `replica` (or `null`): it still reads,
/// and gives the document a recording of today would.
#[test]
fn a_node_as_an_older_recording_wrote_it_gives_the_same_document() {
    let snapshot = Topo::new().snapshot;
    let mut old = serde_json::to_value(&snapshot).unwrap_or_else(|e| panic!("{e}"));
    let nodes = old["nodes"].as_array_mut().map(std::mem::take);
    let nodes: Vec<Value> = nodes
        .unwrap_or_default()
        .into_iter()
        .map(|mut n| {
            let channels = n
                .as_object_mut()
                .and_then(|o| o.remove("channels"))
                .unwrap_or_default();
            let one = channels.as_array().and_then(|c| c.first()).cloned();
            n["replica"] = one.unwrap_or(Value::Null);
            n
        })
        .collect();
    assert!(nodes.iter().all(|n| n.get("channels").is_none()));
    old["nodes"] = Value::Array(nodes);
    let read: Snapshot = serde_json::from_value(old).unwrap_or_else(|e| panic!("{e}"));
    let counts: Vec<usize> = read.nodes.iter().map(|n| n.channels.len()).collect();
    assert_eq!(counts, [0, 1, 1]);
    assert_eq!(
        read.nodes[1].replica().map(|r| r.channel.as_str()),
        Some("")
    );
    assert_eq!(doc(&read), doc(&snapshot));
}

/// Each channel has its `appliers`: what the server did not report is `null`, never 0, and a
/// MariaDB pool serving both of r2's channels says so on each.
#[test]
fn appliers_per_channel_with_nulls_for_what_is_not_known() {
    let mut topo = two_channels();
    let busy = crate::store::BusyWorkers {
        workers: 4,
        busy: 2,
        commit_order_waits: Some(1),
        age: std::time::Duration::from_millis(1_500),
        shared: true,
    };
    for channel in ["", "p2"] {
        topo.channel_mut("r2", channel, |r| {
            r.appliers = crate::store::ApplierView {
                workers: Some(4),
                mode: Some("optimistic".to_owned()),
                busy: Some(busy),
                retried_transactions: Some(3),
                retries_per_second: Some(0.5),
                ..crate::store::ApplierView::default()
            };
        });
    }
    let d = doc(&topo.snapshot);
    let p2 = &node(&d, "r2")["channels"][1]["appliers"];
    assert_eq!(p2["workers"], 4);
    assert_eq!(p2["mode"], "optimistic");
    assert_eq!(
        (&p2["busy"], &p2["commit_order_waits"]),
        (&2.into(), &1.into())
    );
    assert_eq!(p2["sample_age_seconds"], 1.5);
    assert_eq!(p2["pool_shared"], true);
    assert_eq!(p2["retries_per_second"], 0.5);
    assert_eq!(p2["groups"]["ddl"], Value::Null);
    assert_eq!(p2["preserve_commit_order"], Value::Null);
    // r1 reports nothing of its appliers: every field present and null.
    let r1 = &node(&d, "r1")["channels"][0]["appliers"];
    for key in [
        "workers",
        "busy",
        "sample_age_seconds",
        "retried_transactions",
    ] {
        assert_eq!(r1[key], Value::Null, "{key}: {r1}");
    }
}

/// Each channel carries its own catch-up; what cannot be told is null, never 0.
#[test]
fn each_channel_has_its_catch_up() {
    let mut topo = two_channels();
    topo.channel_mut("r2", "p2", |r| {
        r.catch_up = crate::store::testkit::falling_behind(0.0, 1.0);
    });
    topo.replica_mut("r1", |r| {
        r.catch_up = crate::store::testkit::catching_up(1.1, secs(11.04));
    });
    topo.add_replica("r3", "db1", 9);
    topo.replica_mut("r3", |r| {
        r.catch_up = crate::store::apply_rate::CatchUp::default();
    });
    let d = doc(&topo.snapshot);
    let r1 = &node(&d, "r1")["channels"][0]["catch_up"];
    assert_eq!(r1["state"], "catching_up");
    assert_eq!(r1["eta_s"], 11.04);
    assert_eq!(r1["lag_change_s_per_s"], -1.1);
    assert_eq!(r1["apply_trx_per_s"], 105.0);
    assert_eq!(r1["source_trx_per_s"], 50.0);
    assert_eq!(r1["apply_bytes_per_s"], Value::Null);
    assert_eq!(r1["text"], "catching up 1.1 s/s, ~11s");
    let channels = node(&d, "r2")["channels"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let p2 = channels
        .iter()
        .find(|c| c["channel"] == "p2")
        .map(|c| &c["catch_up"]);
    let p2 = p2.unwrap_or_else(|| panic!("{channels:#?}"));
    assert_eq!(p2["state"], "falling_behind");
    assert_eq!(p2["eta_s"], Value::Null);
    assert_eq!(p2["text"], "falling behind 50 trx/s");
    let r3 = &node(&d, "r3")["channels"][0]["catch_up"];
    assert_eq!(r3["state"], "unknown");
    for key in [
        "apply_trx_per_s",
        "source_trx_per_s",
        "lag_change_s_per_s",
        "eta_s",
        "window_s",
    ] {
        assert_eq!(r3[key], Value::Null, "{key}");
    }
}

#[test]
fn a_waiting_ddl_names_its_blockers_and_the_kill() {
    let mut topo = two_channels();
    topo.node_mut("db1", |n| {
        *scan(n) = vec![blocked_ddl("ALTER TABLE t FORCE", 95, false)];
    });
    let d = doc(&topo.snapshot);
    let ddl = &node(&d, "db1")["ddl"][0];
    assert_eq!(ddl["waiting_for_lock"], "table metadata lock");
    assert_eq!(ddl["blocked_by"]["source"], "metadata_lock_info");
    let holder = &ddl["blocked_by"]["holders"][0];
    assert_eq!(holder["connection_id"], 1234);
    assert_eq!(holder["user"], "app");
    assert_eq!(holder["host"], "10.0.0.5");
    assert_eq!(holder["idle_seconds"], 95);
    assert_eq!(holder["transaction_seconds"], 97);
    assert_eq!(holder["statement_kind"], "not_told");
    assert_eq!(holder["statement"], Value::Null);
    assert_eq!(holder["evidence"], "lock");
    assert_eq!(holder["lock_object"], "shop.t");
    assert_eq!(holder["kill"], "KILL 1234");
    // A DDL that waits for nothing has no holders.
    topo.node_mut("db1", |n| scan(n)[0].blockers = None);
    assert_eq!(
        node(&doc(&topo.snapshot), "db1")["ddl"][0]["blocked_by"],
        Value::Null
    );
}

/// A channel's appliers name the tables row events are applied on and whether each has a key
/// (since 1.10); a channel applying none has an empty list.
#[test]
fn row_events_name_the_table_and_its_key() {
    let d = doc(&two_channels().snapshot);
    let events = &node(&d, "r2")["channels"][1]["appliers"]["row_events"];
    assert_eq!(
        events,
        &serde_json::json!([{
            "thread_id": 10, "event": "update", "schema": "shop", "table": "events",
            "named_by": "statement", "has_key": false
        }])
    );
    let r1 = &node(&d, "r1")["channels"][0]["appliers"]["row_events"];
    assert_eq!(r1, &serde_json::json!([]));
}
