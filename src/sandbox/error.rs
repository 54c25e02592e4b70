//! What can go wrong with a sandbox, each saying what to do about it.

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "no MariaDB or MySQL server found (looked for mariadbd and mysqld in: {searched}).\n\
         Install one: `apt-get install mariadb-server mariadb-client` on Debian/Ubuntu, \
         or set RWTOP_SERVER_DIR to the folder holding mariadbd or mysqld.",
        searched = searched.join(", ")
    )]
    NoServer { searched: Vec<String> },
    #[error("{tool} not found next to the server; install the {package} package")]
    MissingTool {
        tool: &'static str,
        package: &'static str,
    },
    #[error("{binary} does not look like MariaDB or MySQL: its --version printed {output:?}")]
    UnknownServer { binary: String, output: String },
    #[error(
        "port {port} on 127.0.0.1 (for node {node}) is already in use by another process: \
         choose other ports with --base-port P, or stop what listens there"
    )]
    PortTaken { port: u16, node: String },
    #[error(
        "socket path {path} is too long for a unix socket: use a shorter --dir (e.g. under /tmp)"
    )]
    SocketPathTooLong { path: String },
    #[error("this sandbox cannot be built: {problem}")]
    BadShape { problem: String },
    #[error(
        "a Galera sandbox needs {what} ({path} not found); install it: \
         `apt-get install {package}`"
    )]
    MissingGalera {
        what: &'static str,
        path: String,
        package: &'static str,
    },
    #[error(
        "the Galera member {node} did not reach Synced in time ({state}); last lines of {log}:\n{tail}"
    )]
    NotSynced {
        node: String,
        state: String,
        log: String,
        tail: String,
    },
    #[error("a sandbox already exists in {dir}, but {problem}")]
    Exists { dir: String, problem: String },
    #[error("no sandbox in {dir}: start one with `rwtop sandbox up --dir {dir}`")]
    NoSandbox { dir: String },
    #[error("no node named {node} in this sandbox")]
    UnknownNode { node: String },
    #[error("initializing the data folder of {node} failed:\n{detail}")]
    InitFailed { node: String, detail: String },
    #[error("the server of {node} did not start; last lines of {log}:\n{tail}")]
    StartFailed {
        node: String,
        log: String,
        tail: String,
    },
    #[error("{node}: `{sql}` failed: {problem}")]
    Admin {
        node: String,
        sql: String,
        problem: String,
    },
    #[error("replication did not catch up in time: {detail}")]
    NotReplicating { detail: String },
    #[error(
        "{path} is not a sandbox state file rwtop can read ({problem}); remove the folder by hand"
    )]
    BadState { path: String, problem: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

impl SandboxError {
    pub(crate) fn io(what: String, source: std::io::Error) -> Self {
        Self::Io { what, source }
    }
}
