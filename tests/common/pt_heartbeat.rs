//! A real pt-heartbeat (percona-toolkit) `--update`-ing the primary every 250 ms, killed when
//! dropped: the writer `--read-only` mode measures lag from.

use std::process::{Child, Command, Stdio};

use super::TestSandbox;

pub struct PtHeartbeat(Child);

impl PtHeartbeat {
    pub fn start(t: &TestSandbox) -> Self {
        t.admin(
            "primary",
            "CREATE DATABASE IF NOT EXISTS percona; \
             CREATE USER 'pt'@'127.0.0.1' IDENTIFIED BY 'pt-test-only'; \
             GRANT ALL ON percona.* TO 'pt'@'127.0.0.1'; \
             GRANT BINLOG MONITOR, SLAVE MONITOR ON *.* TO 'pt'@'127.0.0.1'; \
             GRANT SELECT ON percona.* TO 'rwtop'@'127.0.0.1'",
        );
        let port = t.sandbox().port("primary").unwrap();
        let child = Command::new("pt-heartbeat")
            .args([
                "--update",
                "--create-table",
                "--database",
                "percona",
                "--interval",
                "0.25",
            ])
            .arg(format!("h=127.0.0.1,P={port},u=pt,p=pt-test-only"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pt-heartbeat (percona-toolkit) must be installed: scripts/test installs it");
        Self(child)
    }

    /// Ends pt-heartbeat now, as a crashed or stopped daemon would.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for PtHeartbeat {
    fn drop(&mut self) {
        self.kill();
    }
}
