//! The option file of one sandbox node.

use std::fmt::Write as _;

use super::layout::NodeDir;
use crate::mysql::{Family, Flavor};

pub struct CnfParams<'a> {
    pub node: &'a NodeDir,
    /// The node's name, which it reports to its source as `report_host` (`SHOW SLAVE HOSTS`), so
    /// rwtop's discovery names it as the sandbox does; the port it reports is its own.
    pub name: &'a str,
    pub port: u16,
    pub server_id: u32,
    pub is_replica: bool,
    /// `MariaDB`'s GTID domain of the node's own writes (a second primary's differs from the
    /// first's); `MySQL` tells sources apart by `server_uuid` and has no such setting.
    pub gtid_domain_id: u32,
    pub semisync: bool,
    /// Parallel applier workers, on a replica; 0: one applier thread.
    pub parallel: u32,
    pub as_root: bool,
    pub flavor: &'a Flavor,
    /// The node's own options, written last so they override the sandbox's.
    pub options: &'a [String],
}

/// Small and fast rather than durable: the sandbox is throwaway, so durability knobs are off and
/// memory is kept low enough for a dozen servers on a small machine.
pub fn render(p: &CnfParams<'_>) -> String {
    let section = match p.flavor.family {
        Family::Mariadb => "mariadbd",
        Family::Mysql => "mysqld",
    };
    let mut cnf = format!(
        "# Written by `rwtop sandbox up`; the sandbox owns this file.\n[{section}]\n\
         datadir={data}\ntmpdir={tmp}\nsocket={socket}\npid-file={pid}\nlog-error={log}\n\
         port={port}\nbind-address=127.0.0.1\nserver_id={id}\nreport_host={name}\n\
         report_port={port}\nlog_bin=binlog\nbinlog_format=ROW\nskip-name-resolve\n\
         innodb_buffer_pool_size=64M\ninnodb_log_file_size=32M\n\
         innodb_flush_log_at_trx_commit=2\nsync_binlog=0\nperformance_schema=OFF\n\
         max_connections=200\n",
        data = p.node.data.display(),
        tmp = p.node.tmp.display(),
        socket = p.node.socket.display(),
        pid = p.node.pid_file.display(),
        log = p.node.error_log.display(),
        port = p.port,
        id = p.server_id,
        name = p.name,
    );
    if p.as_root {
        cnf.push_str("user=root\n");
    }
    if p.is_replica {
        cnf.push_str("read_only=ON\n");
    }
    match p.flavor.family {
        Family::Mariadb => {
            cnf.push_str("log_slave_updates=ON\ngtid_strict_mode=ON\n");
            if p.gtid_domain_id != 0 {
                let _ = writeln!(cnf, "gtid_domain_id={}", p.gtid_domain_id);
            }
            if p.is_replica && p.parallel > 0 {
                // The mode stays MariaDB's default, optimistic.
                let _ = writeln!(cnf, "slave_parallel_threads={}", p.parallel);
            }
            if p.semisync {
                let side = if p.is_replica { "slave" } else { "master" };
                let _ = writeln!(cnf, "rpl_semi_sync_{side}_enabled=ON");
            }
        }
        Family::Mysql => {
            cnf.push_str(
                "gtid_mode=ON\nenforce_gtid_consistency=ON\nlog_replica_updates=ON\nmysqlx=OFF\n",
            );
            if p.is_replica && p.parallel > 0 {
                let name = if p.flavor.version.at_least(8, 0, 26) {
                    "replica_parallel_workers"
                } else {
                    "slave_parallel_workers"
                };
                let _ = writeln!(cnf, "{name}={}", p.parallel);
            }
            if p.semisync {
                let side = if p.is_replica { "replica" } else { "source" };
                let _ = writeln!(
                    cnf,
                    "plugin-load-add=semisync_{side}.so\nrpl_semi_sync_{side}_enabled=ON"
                );
            }
        }
    }
    for option in p.options {
        let _ = writeln!(cnf, "{option}");
    }
    cnf
}
