//! Finding the server, install and client binaries, and what they are.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::SandboxError;
use crate::mysql::{Family, Flavor};

/// Where to look when `RWTOP_SERVER_DIR` is not set: PATH first, then where distributions and
/// tarballs put server binaries (often outside a normal user's PATH).
const EXTRA_DIRS: &[&str] = &[
    "/usr/sbin",
    "/usr/libexec",
    "/usr/local/mysql/bin",
    "/usr/local/sbin",
];

/// The programs one sandbox runs, all from the same installation.
#[derive(Debug, Clone)]
pub struct Binaries {
    pub server: PathBuf,
    /// `mariadb-install-db`; `MySQL` initializes with `mysqld --initialize-insecure` instead.
    pub install_db: Option<PathBuf>,
    pub client: PathBuf,
    pub flavor: Flavor,
}

impl Binaries {
    /// Looks for `mariadbd`, then `mysqld` (on `MariaDB` installs a link to `mariadbd`; the version
    /// output tells which it is). `RWTOP_SERVER_DIR` replaces the search path entirely.
    pub fn discover() -> Result<Self, SandboxError> {
        let find = find_in_path;
        let not_found = || SandboxError::NoServer {
            searched: search_dirs()
                .iter()
                .map(|d| d.display().to_string())
                .collect(),
        };
        let server = find(&["mariadbd", "mysqld"]).ok_or_else(not_found)?;
        let flavor = server_flavor(&server)?;
        let (install_names, client_names): (&[&str], &[&str]) = match flavor.family {
            Family::Mariadb => (
                &["mariadb-install-db", "mysql_install_db"],
                &["mariadb", "mysql"],
            ),
            Family::Mysql => (&[], &["mysql"]),
        };
        let install_db = match flavor.family {
            Family::Mariadb => Some(find(install_names).ok_or(SandboxError::MissingTool {
                tool: "mariadb-install-db",
                package: "mariadb-server",
            })?),
            Family::Mysql => None,
        };
        let client = find(client_names).ok_or(SandboxError::MissingTool {
            tool: client_names[0],
            package: match flavor.family {
                Family::Mariadb => "mariadb-client",
                Family::Mysql => "mysql-client",
            },
        })?;
        Ok(Self {
            server,
            install_db,
            client,
            flavor,
        })
    }
}

/// The first of `names` found where the server is looked for.
pub fn find_in_path(names: &[&str]) -> Option<PathBuf> {
    let dirs = search_dirs();
    names
        .iter()
        .find_map(|name| dirs.iter().map(|d| d.join(name)).find(|p| is_executable(p)))
}

fn search_dirs() -> Vec<PathBuf> {
    if let Some(dir) = std::env::var_os("RWTOP_SERVER_DIR") {
        return std::env::split_paths(&dir).collect();
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for extra in EXTRA_DIRS {
        let extra = PathBuf::from(extra);
        if !dirs.contains(&extra) {
            dirs.push(extra);
        }
    }
    dirs
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)` or
/// `/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)`.
fn server_flavor(server: &Path) -> Result<Flavor, SandboxError> {
    let output = Command::new(server)
        .arg("--version")
        .env_remove(crate::config::PASSWORD_ENV_VAR)
        .output()
        .map_err(|e| SandboxError::io(format!("running {} --version", server.display()), e))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let version = text
        .split_whitespace()
        .skip_while(|word| *word != "Ver")
        .nth(1)
        .unwrap_or_default();
    Flavor::detect(version, &text).map_err(|_| SandboxError::UnknownServer {
        binary: server.display().to_string(),
        output: text.trim().chars().take(200).collect(),
    })
}

/// The name of the OS user running rwtop: socket authentication maps it to a server account.
pub fn os_user() -> String {
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map_or_else(|| "root".to_owned(), |u| u.name)
}

pub fn running_as_root() -> bool {
    nix::unistd::geteuid().is_root()
}
