//! Starting and stopping server processes, and running commands with a deadline.

use std::fs;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// The pid in a server's pid file, if that process is alive and is the server started with
/// `cnf` (a stale pid file may name a recycled pid).
pub fn live_pid(pid_file: &Path, cnf: &Path) -> Option<i32> {
    let pid: i32 = fs::read_to_string(pid_file).ok()?.trim().parse().ok()?;
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let cnf = cnf.to_string_lossy();
    let ours = String::from_utf8_lossy(&cmdline).contains(cnf.as_ref());
    (ours && is_alive(pid)).then_some(pid)
}

pub fn is_alive(pid: i32) -> bool {
    // A zombie still answers signal 0; its /proc status says so.
    let zombie = fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit(')')
                .next()
                .map(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    !zombie && kill(Pid::from_raw(pid), None).is_ok()
}

pub fn signal(pid: i32, sig: Signal) {
    let _ = kill(Pid::from_raw(pid), sig);
}

/// Asks a server to shut down (SIGTERM is a clean shutdown for mysqld/mariadbd) and waits;
/// SIGKILL after `grace`. Returns once the process is gone.
pub fn stop(pid: i32, grace: Duration) {
    signal(pid, Signal::SIGTERM);
    if !wait_gone(pid, grace) {
        signal(pid, Signal::SIGKILL);
        wait_gone(pid, Duration::from_secs(10));
    }
}

fn wait_gone(pid: i32, deadline: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if !is_alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    !is_alive(pid)
}

/// Output of a command that had to finish before a deadline.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `cmd` to completion or kills it at `deadline`: a client talking to a frozen server must
/// not hang the sandbox (or a test) forever.
pub fn run_with_deadline(cmd: Command, deadline: Duration) -> std::io::Result<Finished> {
    run_with_input(cmd, None, deadline)
}

/// [`run_with_deadline`] with `input` written to the command's stdin: how SQL that holds a
/// password reaches the client, since argv is visible to every user through `ps`.
pub fn run_with_input(
    mut cmd: Command,
    input: Option<&str>,
    deadline: Duration,
) -> std::io::Result<Finished> {
    let mut child = cmd
        .env_remove(crate::config::PASSWORD_ENV_VAR)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        let input = input.to_owned();
        // From a thread, so a client that answers before reading everything cannot deadlock.
        std::thread::spawn(move || {
            use std::io::Write as _;
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || read_all(stdout.as_mut()));
    let err_reader = std::thread::spawn(move || read_all(stderr.as_mut()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {}", crate::units::duration(deadline)),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ok(Finished {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    })
}

fn read_all(pipe: Option<&mut impl Read>) -> String {
    let mut text = String::new();
    if let Some(pipe) = pipe {
        let _ = pipe.read_to_string(&mut text);
    }
    text
}

/// Spawns a server in its own process group, so a Ctrl-C meant for `rwtop` does not take the
/// sandbox down with it.
/// `extra` options come after the option file (`--wsrep-new-cluster`).
pub fn spawn_server(
    server: &Path,
    cnf: &Path,
    log: &Path,
    extra: &[&str],
) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let log = fs::OpenOptions::new().create(true).append(true).open(log)?;
    Command::new(server)
        .arg(format!("--defaults-file={}", cnf.display()))
        .args(extra)
        .env_remove(crate::config::PASSWORD_ENV_VAR)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()
}

/// The last lines of a log, for error messages that point at the cause.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
