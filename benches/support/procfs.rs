//! What the live benches read about processes: this process's CPU and resident memory, a
//! server's CPU from `/proc/<pid>/stat`, the machine, and the `name value unit` line they print.
//! Shared by `poll_path` and `scale`.

use std::fs;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeValLike;
use nix::unistd::{SysconfVar, sysconf};

pub fn row(name: &str, value: f64, unit: &str) {
    println!("{name:<40} {value:>12.3} {unit}");
}

pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{cpus} cores, {model}")
}

/// This process's resident set size (`VmRSS`).
pub fn rss_kib() -> Result<u64> {
    let status = fs::read_to_string("/proc/self/status").context("reading /proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow!("no VmRSS in /proc/self/status"))
}

/// The process's own CPU time (all threads, user + system).
pub fn own_cpu() -> Result<Duration> {
    let usage = getrusage(UsageWho::RUSAGE_SELF).context("getrusage")?;
    let micros = usage.user_time().num_microseconds() + usage.system_time().num_microseconds();
    Ok(Duration::from_micros(u64::try_from(micros)?))
}

pub fn clock_ticks_per_second() -> u64 {
    sysconf(SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|t| u64::try_from(t).ok())
        .filter(|t| *t > 0)
        .unwrap_or(100)
}

/// `utime + stime` of a process, in clock ticks.
pub fn process_ticks(pid: i32) -> Result<u64> {
    let path = format!("/proc/{pid}/stat");
    let stat = fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    // The command name may hold spaces and parentheses: fields are counted after the last ')'.
    let (_, rest) = stat
        .rsplit_once(')')
        .ok_or_else(|| anyhow!("{path}: no command name"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of stat(5); `rest` starts at field 3.
    let tick = |i: usize| -> Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| anyhow!("{path}: no field {}", i + 3))
    };
    Ok(tick(11)? + tick(12)?)
}
