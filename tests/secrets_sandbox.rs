//! `rwtop sandbox up` puts no password in any program's argv and hands none of its
//! programs `RWTOP_PASSWORD`.

mod common;
#[path = "common/leaks.rs"]
mod leaks;

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use leaks::*;

// ---------------------------------------------------------------------------------------------
// `rwtop sandbox up`: every program it runs, seen through wrappers that log their argv and
// environment before handing over to the real one.

/// The directory holding `name` among the places the sandbox itself searches.
fn real_binary(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/libexec", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not installed"))
}

/// Stops the sandbox in `dir` however the test ends.
struct SandboxDir(PathBuf);

impl Drop for SandboxDir {
    fn drop(&mut self) {
        let _ = rwtop::sandbox::Sandbox::down(&self.0);
    }
}

#[test]
fn live_sandbox_up_passes_no_password_in_argv_nor_rwtop_password_to_its_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let wrappers = tmp.path().join("bin");
    std::fs::create_dir(&wrappers).unwrap();
    let log = tmp.path().join("spawned.log");
    for name in ["mariadbd", "mariadb-install-db", "mariadb", "openssl"] {
        let wrapper = wrappers.join(name);
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\n\
                 a=$(printf ' %s' \"$0\" \"$@\" | tr '\\n' ' ')\n\
                 e=$(tr '\\0\\n' '\\n ' < /proc/$$/environ | cut -d= -f1 | tr '\\n' ' ')\n\
                 printf 'ARGV%s ENV %s\\n' \"$a\" \"$e\" >> {log}\n\
                 exec {real} \"$@\"\n",
                log = log.display(),
                real = real_binary(name).display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let known = Known::new("Sekr3t");
    let sandbox = SandboxDir(tmp.path().join("sb"));
    let base = loop {
        // Two consecutive free ports, held while checked.
        let first = free_port();
        if first < 65000 && TcpListener::bind(("127.0.0.1", first + 1)).is_ok() {
            break first;
        }
    };
    let path = format!(
        "{}:{}",
        wrappers.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(BIN);
    cmd.args(["sandbox", "up", "--replicas", "1", "--tls", "--dir"])
        .arg(&sandbox.0)
        .args(["--base-port", &base.to_string()])
        .env("RWTOP_SERVER_DIR", &wrappers)
        .env("PATH", path)
        .env("RWTOP_PASSWORD", &known.password)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("starting rwtop sandbox up");
    let watcher = Watcher::start(child.id());
    let (stdout, out_thread) = collect(child.stdout.take().unwrap());
    let (stderr, err_thread) = collect(child.stderr.take().unwrap());
    let running = Running {
        child,
        stdout,
        stderr,
        readers: vec![out_thread, err_thread],
        watcher,
    };
    let out = running.finish();
    assert!(out.status.success(), "sandbox up: {}", out.stderr());
    out.assert_clean(&known, "sandbox up");

    let spawned = std::fs::read_to_string(&log).unwrap();
    let argv: Vec<&str> = spawned.lines().filter(|l| l.starts_with("ARGV")).collect();
    for name in [
        "mariadbd --version",
        "mariadb-install-db",
        "mariadbd --defaults-file",
        "/mariadb --no-defaults",
        "openssl",
    ] {
        assert!(
            argv.iter().any(|l| l.contains(name)),
            "{name} never ran through its wrapper:\n{argv:#?}"
        );
    }
    // One line a program: `ARGV` its argv, then `ENV` the names of its variables.
    for line in &argv {
        let (argv, env) = line.rsplit_once(" ENV ").expect("ARGV ... ENV ...");
        known.assert_absent("a spawned program's argv", argv.as_bytes());
        assert!(
            !env.split(' ').any(|name| name == "RWTOP_PASSWORD"),
            "this program inherited RWTOP_PASSWORD: {argv}"
        );
    }
    // The sandbox's own passwords, random, in files only the owner reads: never in an argv.
    for file in ["monitor.password", "repl.password"] {
        let secret = std::fs::read_to_string(sandbox.0.join(file)).unwrap();
        let secret = secret.trim();
        assert!(secret.len() >= 16, "{file}: {secret:?}");
        for line in &argv {
            assert!(
                !line.contains(secret),
                "{file}'s password in an argv: {line}"
            );
        }
        assert!(!out.stdout().contains(secret) && !out.stderr().contains(secret));
        for s in &out.seen {
            assert!(
                !contains(&s.cmdline, secret.as_bytes()),
                "{file}'s password in /proc/{}/cmdline",
                s.pid
            );
        }
    }
}

/// A replica's `Last_SQL_Error` quotes the replicated statement that failed, password and all
/// (`CREATE USER … IDENTIFIED BY '…'` arriving where the account exists): the sandbox's
/// "not replicating" error and `rwtop sandbox status` print it masked.
#[tokio::test]
async fn live_a_replication_error_quoting_a_password_is_printed_masked() {
    const SECRET: &str = "pw-quoted-by-the-server-0123";
    let t = common::TestSandbox::start(1, false);
    t.admin(
        "r1",
        "SET sql_log_bin=0; CREATE USER 'clash'@'127.0.0.1'; SET sql_log_bin=1",
    );
    t.admin(
        "primary",
        &format!("CREATE USER 'clash'@'127.0.0.1' IDENTIFIED BY '{SECRET}'"),
    );
    let quoted = common::eventually(
        "r1's SQL thread stops on the clash",
        std::time::Duration::from_secs(30),
        async || {
            let status = t.sandbox().channel_status("r1", "").unwrap()?;
            status.last_sql_error.map(|e| e.message)
        },
    )
    .await;
    assert!(quoted.contains(SECRET), "the server quotes it: {quoted}");

    let waited = t
        .sandbox()
        .wait_replicating(std::time::Duration::ZERO)
        .unwrap_err()
        .to_string();
    assert!(waited.contains("IDENTIFIED BY '***'"), "{waited}");
    assert!(!waited.contains(SECRET), "{waited}");

    let status = common::rwtop(
        &[
            "sandbox",
            "status",
            "--dir",
            t.sandbox().dir().to_str().unwrap(),
        ],
        &[],
    );
    let out = String::from_utf8_lossy(&status.stdout);
    assert!(out.contains("! error 1396"), "{out}");
    assert!(out.contains("IDENTIFIED BY '***'"), "{out}");
    assert!(!out.contains(SECRET), "{out}");
}
