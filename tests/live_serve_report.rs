//! `rwtop serve` writes DDL-window reports by itself: no screen, no key pressed. A real primary
//! rebuilds a table while `serve` watches the sandbox with `[report] dir` set; the report lands
//! in that folder once the replicas are calm again, and names the statement.

mod common;
#[path = "common/serve.rs"]
mod serve;

use std::time::Duration;

use common::{BIG_TABLE_ALTER, BIG_TABLE_ROWS, TestSandbox, eventually};

const DEADLINE: Duration = Duration::from_secs(120);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_serve_with_a_report_dir_writes_the_ddl_windows_report_by_itself() {
    let t = TestSandbox::start(1, false);
    t.load_big_table(BIG_TABLE_ROWS, DEADLINE);
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports");
    let config = dir.path().join("rwtop.toml");
    let sandbox = std::fs::read_to_string(t.sandbox().dir().join("rwtop.toml")).unwrap();
    std::fs::write(
        &config,
        format!(
            "{sandbox}\n[report]\ndir = \"{}\"\nquiet = \"4s\"\n",
            reports.display()
        ),
    )
    .unwrap();
    let serve = serve::Serve::start(&config);
    // Healthy before the ALTER: the window opens on the DDL, not on the start.
    serve.scrape_until("r1's lag exact", DEADLINE, |m| {
        m.lines().any(|l| {
            l.starts_with("rwtop_replica_heartbeat_lag_state{")
                && l.contains("replica=\"r1\"")
                && l.contains("state=\"exact\"")
                && l.ends_with(" 1")
        })
    });

    let (conn, _, _) = t.alter_big_table(&["r1"]).await;
    conn.close().await;
    let md = eventually("the report in [report] dir", DEADLINE, async || {
        let files = std::fs::read_dir(&reports).ok()?;
        let md = files
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "md"))?;
        std::fs::read_to_string(md).ok()
    })
    .await;
    let status = serve.stop();
    assert!(status.success(), "serve ended {status:?}");
    assert!(md.contains(BIG_TABLE_ALTER), "{md}");
    assert!(md.contains("r1"), "{md}");
    let html = std::fs::read_dir(&reports)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "html"))
        .count();
    assert_eq!(html, 1, "one window, one HTML page");
}
