//! A DSN written with an inline password works, but every message that quotes it —
//! warnings, bad DSNs, broken config files, misplaced arguments, access denied, unreachable
//! servers — shows it redacted, and the password itself never appears.

mod common;
#[path = "common/leaks.rs"]
mod leaks;

use std::net::TcpListener;

use leaks::*;

/// One test read of `r1`, the cheapest command that connects to every node.
const ONE_PROBE: &[&str] = &[
    "probe",
    "--target",
    "r1",
    "--strategy",
    "none",
    "--count",
    "1",
];

#[test]
fn live_inline_dsn_passwords_are_redacted_in_warnings_and_errors() {
    let live = Live::start(1);
    let inline = Inline {
        live: &live,
        p: u32::from(port(&live.t, "primary")),
        r1: u32::from(port(&live.t, "r1")),
    };
    inline_passwords_work_and_warn_redacted(&inline);
    bad_dsns_and_broken_configs_are_quoted_redacted(&inline);
    misplaced_dsns_are_echoed_redacted(&inline);
    access_denied_says_so_without_the_password(&inline);
    unreachable_servers_are_named_without_the_password(&inline);
}

/// The sandbox and its ports as u32: a port out of range is one of the mistakes quoted back.
struct Inline<'a> {
    live: &'a Live,
    p: u32,
    r1: u32,
}

impl Inline<'_> {
    fn dsn(&self, port: u32) -> String {
        format!(
            "mysql://rwtop:{}@127.0.0.1:{port}",
            self.live.known.password
        )
    }

    fn shown(port: u32) -> String {
        format!("mysql://rwtop:***@127.0.0.1:{port}")
    }
}

/// On the command line and in a file, an inline password works and is warned about, redacted.
fn inline_passwords_work_and_warn_redacted(i: &Inline<'_>) {
    let (known, p, r1) = (&i.live.known, i.p, i.r1);
    let replica = format!("r1={}", i.dsn(r1));
    let out = run(
        &[
            "--primary",
            &i.dsn(p),
            "--replica",
            &replica,
            "--no-discovery",
            "snapshot",
            "--json",
            "--duration",
            "2s",
        ],
        Via::Neither,
    );
    assert!(out.status.success(), "{}", out.stderr());
    let doc = json(&out, "snapshot with inline passwords");
    assert_eq!(
        node(&doc, &format!("127.0.0.1:{p}"))["state"],
        "up",
        "{doc:#}"
    );
    assert_eq!(node(&doc, "r1")["state"], "up", "{doc:#}");
    out.assert_output_clean(known, "snapshot with inline passwords");
    for (flag, text) in [
        ("--primary", Inline::shown(p)),
        ("--replica", format!("r1={}", Inline::shown(r1))),
    ] {
        assert!(
            out.stderr()
                .contains(&format!("flag {flag}: the DSN \"{text}\" holds a password")),
            "{flag}: {}",
            out.stderr()
        );
    }

    // In a config file: the warning names the file and line, redacted.
    let config = i.live.dir().join("inline.toml");
    write_config(&i.live.t, &config, &format!("rwtop:{}", known.password), "");
    let cfg = config.to_str().unwrap();
    let out = run(
        &["--config", cfg, "snapshot", "--duration", "2s"],
        Via::Neither,
    );
    assert!(out.status.success(), "{}", out.stderr());
    assert!(out.stdout().contains(" up "), "{}", out.stdout());
    assert_redacted(known, "config warning", &out, &format!("{cfg}, line "));
    assert_redacted(
        known,
        "config warning",
        &out,
        &format!("\"{}\" holds a password", Inline::shown(p)),
    );
    let out = run(&[&["--config", cfg][..], ONE_PROBE].concat(), Via::Neither);
    assert!(out.status.success(), "{}", out.stderr());
    assert_redacted(known, "probe warning", &out, &Inline::shown(r1));
}

/// A bad DSN, on the command line and in a file, and config files broken on the very line of
/// the DSN (the toml crate's report quotes that line, serde's the value): exit 2, redacted.
fn bad_dsns_and_broken_configs_are_quoted_redacted(i: &Inline<'_>) {
    let known = &i.live.known;
    let out = run(&["--primary", &i.dsn(99999), "snapshot"], Via::Neither);
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr());
    assert_redacted(
        known,
        "bad DSN flag",
        &out,
        &format!("flag --primary: bad DSN \"{}\"", Inline::shown(99999)),
    );
    let broken = [
        (
            "bad port",
            format!("[primary]\ndsn = \"{}\"\n", i.dsn(99999)),
        ),
        (
            "trailing junk",
            format!("[primary]\ndsn = \"{}\" junk\n", i.dsn(i.p)),
        ),
        (
            "unterminated",
            format!("[primary]\ndsn = \"{}\n", i.dsn(i.p)),
        ),
        (
            "duplicate key",
            format!(
                "[primary]\ndsn = \"{}\"\ndsn = \"{}\"\n",
                i.dsn(i.p),
                i.dsn(i.r1)
            ),
        ),
        (
            "a string for a table",
            format!("primary = \"{}\"\n", i.dsn(i.p)),
        ),
        (
            "a string for a list",
            format!(
                "replicas = \"{}\"\n[primary]\ndsn = \"mysql://rwtop@h\"\n",
                i.dsn(i.r1)
            ),
        ),
    ];
    for (what, text) in broken {
        let path = i.live.dir().join("broken.toml");
        std::fs::write(&path, &text).unwrap();
        let out = run(
            &["--config", path.to_str().unwrap(), "snapshot"],
            Via::Neither,
        );
        assert_eq!(out.status.code(), Some(2), "{what}: {}", out.stderr());
        assert!(
            out.stderr().contains("broken.toml"),
            "{what}: {}",
            out.stderr()
        );
        assert_redacted(known, what, &out, "mysql://rwtop:***@127.0.0.1:");
    }
}

/// clap quotes a misplaced argument: a DSN typed without --primary.
fn misplaced_dsns_are_echoed_redacted(i: &Inline<'_>) {
    let known = &i.live.known;
    let (p, r1) = (i.dsn(i.p), i.dsn(i.r1));
    let misplaced: [&[&str]; 3] = [
        &[&p],
        &["snapshot", &p],
        &["--primary", &p, "snapshot", "--json", &r1],
    ];
    for args in misplaced {
        let out = run(args, Via::Neither);
        assert_eq!(out.status.code(), Some(2), "{}", out.stderr());
        assert_redacted(known, "a clap error", &out, "'mysql://rwtop:***@127.0.0.1:");
    }
    // --primary twice is two roots (a read-only one is refused a writer), not a usage error:
    // its warnings and its table hold no password either.
    let out = run(
        &["--primary", &p, "--primary", &r1, "snapshot"],
        Via::Neither,
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr());
    assert!(
        out.stderr().contains("mysql://rwtop:***@127.0.0.1:"),
        "{}",
        out.stderr()
    );
    out.assert_output_clean(known, "--primary twice");
}

/// A wrong password (access denied), inline and from `RWTOP_PASSWORD`: the error says so and
/// holds neither the password tried nor the right one.
fn access_denied_says_so_without_the_password(i: &Inline<'_>) {
    let known = &i.live.known;
    let wrong = Known::new("Wr0ng");
    let wrong_dsn = |port: u32| format!("mysql://rwtop:{}@127.0.0.1:{port}", wrong.password);
    let (primary, replica) = (wrong_dsn(i.p), format!("r1={}", wrong_dsn(i.r1)));
    for (what, args, via) in [
        (
            "wrong inline password",
            vec![
                "--primary",
                &primary,
                "--replica",
                &replica,
                "--no-discovery",
            ],
            Via::Neither,
        ),
        (
            "wrong RWTOP_PASSWORD",
            vec!["--config", i.live.cfg()],
            Via::Env(&wrong.password),
        ),
    ] {
        let snapshot = [&args[..], &["snapshot", "--json", "--duration", "2s"]].concat();
        let out = run(&snapshot, via);
        let doc = json(&out, what);
        let detail = doc["nodes"][0]["state_detail"].as_str().unwrap_or_default();
        assert!(detail.contains("Access denied"), "{what}: {doc:#}");
        out.assert_output_clean(known, what);
        out.assert_output_clean(&wrong, what);
        let probe = [&args[..], ONE_PROBE].concat();
        let out = run(&probe, via);
        assert_ne!(out.status.code(), Some(0), "{what}: {}", out.stderr());
        assert!(
            out.stderr().contains("Access denied"),
            "{what}: {}",
            out.stderr()
        );
        out.assert_output_clean(known, what);
        out.assert_output_clean(&wrong, what);
    }
}

/// A server that does not answer: the error names the address, not the password.
fn unreachable_servers_are_named_without_the_password(i: &Inline<'_>) {
    let known = &i.live.known;
    // Two ports nothing listens on, held apart while both are picked.
    let (closed, other) = {
        let a = TcpListener::bind("127.0.0.1:0").unwrap();
        let b = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = |l: &TcpListener| u32::from(l.local_addr().unwrap().port());
        (port(&a), port(&b))
    };
    let (dsn, replica) = (i.dsn(closed), format!("r1={}", i.dsn(other)));
    let out = run(
        &["--primary", &dsn, "snapshot", "--json", "--duration", "1s"],
        Via::Neither,
    );
    let doc = json(&out, "unreachable");
    let detail = doc["nodes"][0]["state_detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains(&format!("127.0.0.1:{closed}: cannot connect")),
        "{doc:#}"
    );
    assert_redacted(known, "unreachable", &out, &Inline::shown(closed));
    let args = ["--primary", &dsn, "--replica", &replica, "--no-discovery"];
    let out = run(&[&args[..], ONE_PROBE].concat(), Via::Neither);
    assert_ne!(out.status.code(), Some(0), "{}", out.stderr());
    assert!(out.stderr().contains("cannot connect"), "{}", out.stderr());
    assert_redacted(known, "unreachable probe", &out, &Inline::shown(closed));
    assert_redacted(known, "unreachable probe", &out, &Inline::shown(other));
}
