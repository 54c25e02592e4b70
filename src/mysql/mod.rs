//! The SQL layer: connect, detect the flavor, and read what each node reports about replication
//! into typed structs.

pub mod appliers;
pub mod batch;
pub mod binlog;
pub mod conn;
pub mod ddl_wait;
pub mod disks;
pub mod endpoint;
pub mod flavor;
pub mod galera;
pub mod grants;
pub mod link;
pub mod lock_holders;
pub mod node_state;
pub mod osc;
pub mod own_tables;
pub mod prepared;
pub mod processlist;
pub mod queued;
pub mod replica_hosts;
pub mod replica_status;
pub mod row;
pub mod row_events;
pub mod semisync;
pub mod settings;
pub mod table_keys;
pub mod tls;

pub use appliers::{ApplierCounters, WorkerSample};
pub use binlog::{BinlogFile, BinlogStatus, bytes_between, reach, reached};
pub use conn::{NodeConn, SqlError};
pub use ddl_wait::DdlWait;
pub use disks::{DataDirs, Disk, DisksRead, DisksUnavailable, disk_of};
pub use endpoint::{Endpoint, Secret, Timeouts};
pub use flavor::{
    Family, Flavor, GtidWaitOutcome, ModeFit, ProxyGtidMode, SourceLink, ThreadControl, Version,
    WantedGtids,
};
pub use link::{ChannelTls, Filter, LinkHygiene};
pub use lock_holders::{
    Blockers, HolderSource, Holds, Kill, LastStatement, LockHolder, LockRows, MdlRow, ThreadRow,
    TrxRow,
};
pub use node_state::{GtidState, Identity, NodeState};
pub use osc::{OscPhase, OscRun, OscTool};
pub use processlist::{DdlStatement, ProcessSummary, Processlist};
pub use replica_hosts::ReplicaHost;
pub use replica_status::{
    BinlogPos, IoRunning, ReplicaGtid, ReplicaStatus, StatusError, ThreadError,
};
pub use row::{RawRow, RowError, Vertical, parse_vertical};
pub use row_events::{NamedBy, RowApply, RowEvent};
pub use semisync::SemiSync;
pub use settings::SafetySettings;
pub use table_keys::{KeylessTable, KeylessTables};
pub use tls::{Tls, TlsMode};

/// The environment variable that carries the monitor user's password, so that it never has to
/// appear in argv or a config file; children rwtop starts must not inherit it.
pub const PASSWORD_ENV_VAR: &str = "RWTOP_PASSWORD";

/// A string literal for SQL. Values that come from configuration or from a server (a writer id,
/// a GTID, a binlog file name) are escaped rather than trusted.
#[must_use]
pub fn literal(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}
