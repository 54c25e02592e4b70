//! The config module through its public API: files, flags, DSNs, passwords and every way they
//! can be wrong.

#[path = "common/bad_files.rs"]
mod bad_files;

use bad_files::{assert_mentions, bad_files};
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rwtop::config::{CliOverrides, Config, ConfigError, FileSettings, NodeConfig, parse_dsn};
use rwtop::mysql::{Secret, Timeouts};
use rwtop::probe::{ProbeSettings, Strategy};

const PASSWORD: &str = "s3cret-Pw";

const TWO_NODES: &str = r#"
interval = "2s"
discovery = true
read_only = false

[primary]
name = "p"
dsn = "mysql://rwtop@10.0.0.1:3306"

[[replicas]]
dsn = "r=mysql://rwtop@10.0.0.2"
"#;

fn manifest_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// A prompt that must not be reached.
fn no_prompt(_: &str) -> io::Result<String> {
    Err(io::Error::other("the test did not expect a prompt"))
}

/// Loads with no implicit files, so the results do not depend on the machine.
fn load(cli: &CliOverrides, env: Option<&str>) -> Result<Config, ConfigError> {
    Config::load_from(cli, &[], env.map(str::to_owned), &mut no_prompt)
}

fn load_ok(cli: &CliOverrides) -> Config {
    load(cli, Some(PASSWORD)).expect("the config loads")
}

fn load_err(cli: &CliOverrides) -> String {
    let err = load(cli, Some(PASSWORD)).expect_err("the config is refused");
    assert_eq!(err.exit_code(), 2);
    err.to_string()
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

fn with_config(path: PathBuf) -> CliOverrides {
    CliOverrides {
        config: Some(path),
        ..CliOverrides::default()
    }
}

fn config_file(dir: &tempfile::TempDir, name: &str, text: &str) -> CliOverrides {
    let path = dir.path().join(name);
    fs::write(&path, text).expect("write the test config");
    with_config(path)
}

fn nodes(primary: Option<&str>, replicas: &[&str]) -> CliOverrides {
    CliOverrides {
        primaries: primary.map(str::to_owned).into_iter().collect(),
        replicas: replicas.iter().map(|&r| r.to_owned()).collect(),
        ..CliOverrides::default()
    }
}

fn two_cli_nodes() -> CliOverrides {
    nodes(Some("mysql://rwtop@db1"), &["mysql://rwtop@db2"])
}

fn password_file(dir: &tempfile::TempDir, name: &str, text: &str, mode: u32) -> PathBuf {
    let path = dir.path().join(name);
    fs::write(&path, text).expect("write password file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let _ = mode;
    path
}

/// Each node as `name Role host:port`, to compare a whole topology in one line.
fn described(config: &Config) -> Vec<String> {
    let node = |n: &NodeConfig| format!("{} {:?} {}", n.name, n.role, n.endpoint.address());
    config.nodes.iter().map(node).collect()
}

#[test]
fn sample_config_settings_are_the_defaults() {
    let sample = manifest_path("docs/rwtop.sample.toml");
    let settings = FileSettings::from_file(&sample).expect("the sample parses");
    assert_eq!(settings, FileSettings::default());
    // The defaults the issue states, so that changing one is deliberate.
    assert_eq!(settings.interval, Duration::from_secs(1));
    assert_eq!(settings.timeouts, Timeouts::default());
    assert!(settings.discovery && !settings.read_only);
    assert_eq!(settings.heartbeat.interval, Duration::from_millis(250));
    assert_eq!(settings.heartbeat.pt_table, "percona.heartbeat");
    assert_eq!(settings.thresholds.gtid_backlog, 1000);
    assert_eq!(settings.probe, ProbeSettings::default());
    assert_eq!(settings.probe.strategy.to_string(), "gtid-wait(1s)");
    assert_eq!(settings.probe.defaults.max_lag, Duration::from_secs(1));
    assert_eq!(settings.probe.count, 10);
    assert_eq!(settings.throttle.max_lag, Duration::from_secs(1));
    assert!(settings.throttle.replicas.is_empty() && settings.throttle.skip.is_empty());

    let config = load_ok(&with_config(sample));
    let expected = [
        "primary Primary db1.example.com:3306",
        "replica1 Replica db2.example.com:3306",
        "replica2 Replica 2001:db8::3:3306",
    ];
    assert_eq!(described(&config), expected);
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

#[test]
fn sandbox_printed_config_loads_with_its_password_file() {
    // The shape src/sandbox/toml_out.rs prints.
    let dir = tempdir();
    let password = format!("{PASSWORD}\n");
    let password = password_file(&dir, "monitor.password", &password, 0o600);
    let mut text = format!(
        "# rwtop.toml for the sandbox in {}, written by `rwtop sandbox up`.\n\
         # The monitor password stays in a file readable only by you.\n\
         password_file = \"{}\"\n",
        dir.path().display(),
        password.display(),
    );
    for (table, name, port) in [("[primary]", "primary", 1), ("[[replicas]]", "r1", 2)] {
        let dsn = format!("mysql://rwtop@127.0.0.1:1330{port}");
        let _ = write!(text, "\n{table}\nname = \"{name}\"\ndsn = \"{dsn}\"\n");
    }
    let cli = config_file(&dir, "rwtop.toml", &text);
    let config = load(&cli, None).expect("the sandbox config loads");
    assert_eq!(config.file, cli.config);
    let expected = [
        "primary Primary 127.0.0.1:13301",
        "r1 Replica 127.0.0.1:13302",
    ];
    assert_eq!(described(&config), expected);
    for node in &config.nodes {
        assert_eq!(node.endpoint.user, "rwtop");
        assert_eq!(node.endpoint.password, Some(Secret::new(PASSWORD)));
    }
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    let id = &config.settings.heartbeat.writer_id;
    let length = id.chars().count();
    assert!(id.starts_with("rwtop-") && length <= 64, "{id}");
    assert!(id.ends_with("-127.0.0.1-13301") || length == 64, "{id}");
}

/// Two roots (the multi-source sandbox's shape): `[[primary]]` once per root, interleaved with
/// the replicas as the sandbox prints them; primaries come first, in file order.
#[test]
fn several_primaries_are_several_roots() {
    let dir = tempdir();
    let mut text = String::new();
    for (table, name, port) in [
        ("[[primary]]", "primary", 1),
        ("[[replicas]]", "r1", 2),
        ("[[primary]]", "p2", 3),
        ("[[replicas]]", "agg", 4),
    ] {
        let dsn = format!("mysql://rwtop@127.0.0.1:1330{port}");
        let _ = write!(text, "\n{table}\nname = \"{name}\"\ndsn = \"{dsn}\"\n");
    }
    let config = load_ok(&config_file(&dir, "rwtop.toml", &text));
    let expected = [
        "primary Primary 127.0.0.1:13301",
        "p2 Primary 127.0.0.1:13303",
        "r1 Replica 127.0.0.1:13302",
        "agg Replica 127.0.0.1:13304",
    ];
    assert_eq!(described(&config), expected);
    // Each root gets a heartbeat row of its own, the first keeping the plain id.
    let spec = rwtop::engine::EngineSpec::from_config(&config);
    let ids = spec.writer_ids();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_eq!(ids[0], config.settings.heartbeat.writer_id);
    assert_eq!(
        ids[1],
        format!("{}@p2", config.settings.heartbeat.writer_id)
    );
}

#[test]
fn cli_overrides_the_file_which_overrides_the_defaults() {
    let dir = tempdir();
    let mut cli = config_file(&dir, "c.toml", TWO_NODES);
    let config = load_ok(&cli);
    let expected = ["p Primary 10.0.0.1:3306", "r Replica 10.0.0.2:3306"];
    assert_eq!(described(&config), expected);
    assert_eq!(config.settings.interval, Duration::from_secs(2));
    assert!(config.settings.discovery && !config.settings.read_only);
    assert_eq!(
        config.settings.heartbeat.interval,
        Duration::from_millis(250)
    );
    // read_interval unset: heartbeat reads are spread past the read budget.
    assert!(!config.settings.heartbeat.read_interval_set);
    let spec = rwtop::engine::EngineSpec::from_config(&config);
    assert_eq!(spec.read_budget, Some(rwtop::poll::READ_BUDGET));

    cli.interval = Some("500ms".to_owned());
    (cli.read_only, cli.no_discovery) = (true, true);
    let config = load_ok(&cli);
    assert_eq!(config.settings.interval, Duration::from_millis(500));
    assert!(!config.settings.discovery && config.settings.read_only);

    cli.interval = Some("soon".to_owned());
    let expected = ["flag --interval", "\"soon\"", "\"250ms\""];
    assert_mentions(&load_err(&cli), &expected);
    cli.interval = Some("90m".to_owned());
    assert_mentions(&load_err(&cli), &["flag --interval", "at most 1h"]);

    // Without the flags, the file's values stand, whichever way they point.
    let text = TWO_NODES.replace("true", "false");
    let text = text.replace("only = false", "only = true");
    let config = load_ok(&config_file(&dir, "d.toml", &text));
    assert!(!config.settings.discovery && config.settings.read_only);

    let text = format!(
        "connect_timeout = 5\nquery_timeout = 0.5\n{TWO_NODES}\n[heartbeat]\n\
         writer_id = \"me\"\nread_interval = \"1.5s\"\n[thresholds]\ngtid_backlog = 7\n"
    );
    let config = load_ok(&config_file(&dir, "e.toml", &text));
    assert_eq!(config.settings.timeouts.connect, Duration::from_secs(5));
    assert_eq!(config.settings.timeouts.query, Duration::from_millis(500));
    assert_eq!(config.settings.heartbeat.writer_id, "me");
    assert_eq!(
        config.settings.heartbeat.read_interval,
        Duration::from_millis(1500)
    );
    // Set: held at any size.
    assert!(config.settings.heartbeat.read_interval_set);
    let spec = rwtop::engine::EngineSpec::from_config(&config);
    assert_eq!(spec.read_budget, None);
    assert_eq!(config.settings.thresholds.gtid_backlog, 7);
}

#[test]
fn probe_section_sets_the_strategy_and_its_defaults() {
    let dir = tempdir();
    let ms = Duration::from_millis;
    let text = format!(
        "{TWO_NODES}\n[thresholds]\nrouting_max_lag_seconds = 2.5\n\n[probe]\n\
         strategy = \"pos-wait\"\ntimeout = \"500ms\"\nsleep = 0.05\n\
         sticky_window = \"3s\"\ncount = 3\nspacing = \"1s\"\n"
    );
    let probe = load_ok(&config_file(&dir, "a.toml", &text)).settings.probe;
    // A bare name takes the timeout set beside it, whatever the order of the keys.
    assert_eq!(probe.strategy, Strategy::PosWait(ms(500)));
    assert_eq!(probe.defaults.sleep, ms(50));
    assert_eq!(probe.defaults.sticky_window, Duration::from_secs(3));
    // Without its own max_lag, lag-threshold follows the routing threshold.
    assert_eq!(probe.defaults.max_lag, ms(2500));
    assert_eq!((probe.count, probe.spacing), (3, Duration::from_secs(1)));

    let text = text.replace("\"pos-wait\"", "\"lag-threshold\"\nmax_lag = \"200ms\"");
    let probe = load_ok(&config_file(&dir, "b.toml", &text)).settings.probe;
    assert_eq!(probe.strategy, Strategy::LagThreshold(ms(200)));
    let text = format!("{TWO_NODES}\n[probe]\nstrategy = \"sleep( 20ms )\"\n");
    let probe = load_ok(&config_file(&dir, "c.toml", &text)).settings.probe;
    assert_eq!(probe.strategy, Strategy::Sleep(ms(20)));
    assert_eq!(probe.count, ProbeSettings::default().count);
    // No [probe] at all: gtid-wait with the default timeout.
    let probe = load_ok(&config_file(&dir, "d.toml", TWO_NODES))
        .settings
        .probe;
    assert_eq!(probe, ProbeSettings::default());
}

#[test]
fn ddl_kill_is_off_unless_the_file_turns_it_on() {
    let dir = tempdir();
    let off = load_ok(&config_file(&dir, "off.toml", TWO_NODES))
        .settings
        .ddl;
    assert!(!off.allow_kill);
    let text = format!("{TWO_NODES}\n[ddl]\nallow_kill = true\n");
    let on = load_ok(&config_file(&dir, "on.toml", &text)).settings.ddl;
    assert!(on.allow_kill);
}

#[test]
fn cli_nodes_replace_the_file_nodes() {
    let dir = tempdir();
    let replicas = ["x=mysql://mon@db10:3307", "mysql://u@[::1]"];
    let mut cli = nodes(Some("mysql://mon@db9"), &replicas);
    cli.config = config_file(&dir, "c.toml", TWO_NODES).config;
    let config = load_ok(&cli);
    let expected = [
        "db9:3306 Primary db9:3306",
        "x Replica db10:3307",
        "::1:3306 Replica ::1:3306",
    ];
    assert_eq!(described(&config), expected);
    // The file's other settings still apply.
    assert_eq!(config.settings.interval, Duration::from_secs(2));

    // Replicas alone replace the file's primary too.
    cli.primaries.clear();
    let config = load_ok(&cli);
    assert_eq!(config.primary(), None);
    assert_eq!(config.nodes.len(), 2);
}

/// A parsed DSN as `name host port user`, to compare in one line.
fn dsn(text: &str) -> String {
    let d = parse_dsn(text).expect(text);
    format!("{:?} {} {} {}", d.name, d.host, d.port, d.user)
}

#[test]
fn dsn_forms() {
    assert_eq!(dsn("mysql://rwtop@db1"), "None db1 3306 rwtop");
    assert_eq!(
        dsn("r1=mysql://m@10.1.2.3:13307"),
        "Some(\"r1\") 10.1.2.3 13307 m"
    );
    assert_eq!(dsn("mysql://rwtop@[::1]:3307"), "None ::1 3307 rwtop");
    assert_eq!(dsn("mysql://rwtop@[fe80::1]/"), "None fe80::1 3306 rwtop");
    let plain = parse_dsn("mysql://u@h").map(|d| d.password);
    assert_eq!(plain.ok(), Some(None));

    // The last @ ends the user part, so a password may hold @ and :.
    let inline = parse_dsn("mysql://u:p@ss:w0rd@h:1").expect("inline password");
    assert_eq!(inline.password, Some(Secret::new("p@ss:w0rd")));
    assert!(!format!("{inline:?}").contains("p@ss"));
}

#[test]
fn dsn_password_gives_a_warning_and_applies_to_its_node_only() {
    let cli = nodes(Some("mysql://rwtop:inline-pw@db1"), &["mysql://rwtop@db2"]);
    let config = load_ok(&cli);
    let passwords: Vec<_> = config.nodes.iter().map(|n| &n.endpoint.password).collect();
    let expected = [Some(Secret::new("inline-pw")), Some(Secret::new(PASSWORD))];
    assert_eq!(passwords, [&expected[0], &expected[1]]);
    assert_eq!(config.warnings.len(), 1, "{:?}", config.warnings);
    let warning = &config.warnings[0];
    assert_mentions(warning, &["--primary", "\"mysql://rwtop:***@db1\""]);
    assert!(!warning.contains("inline-pw"));
}

/// The cases are in `tests/bad_configs/dsns.txt`, one per line.
#[test]
fn bad_dsns_are_quoted_without_their_password() {
    let cases = fs::read_to_string(manifest_path("tests/bad_configs/dsns.txt"));
    let cases = cases.expect("dsns.txt");
    let cases: Vec<_> = cases.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(cases.len() >= 10);
    for case in cases {
        let fields: Vec<_> = case.split(" | ").collect();
        let [dsn, reason, quoted] = fields[..] else {
            panic!("bad case {case:?}")
        };
        let err = parse_dsn(dsn).expect_err(dsn).to_string();
        let quoted = format!("\"{quoted}\"");
        assert_mentions(&err, &[&quoted, reason, "mysql://user@host[:port]"]);
        assert!(!err.contains(":pw"), "{err}");
    }
    // Through the CLI, the flag is named.
    let err = load_err(&nodes(None, &["mysql://u:topsecret@db1:99999"]));
    assert!(err.starts_with("flag --replica: bad DSN"), "{err}");
    assert!(!err.contains("topsecret"), "{err}");
}

#[test]
fn duplicate_nodes_and_long_names() {
    let same_address = nodes(Some("mysql://rwtop@DB1:3306"), &["mysql://o@db1"]);
    let message = load_err(&same_address);
    assert_mentions(&message, &["node address `db1:3306` is used twice"]);
    let same_name = nodes(Some("a=mysql://rwtop@db1"), &["a=mysql://rwtop@db2"]);
    let message = load_err(&same_name);
    assert_mentions(&message, &["`a`", "flag --primary", "flag --replica"]);

    // An unnamed node is named by its address; the derived writer id is cut at 64 characters.
    let long_host = format!("{}.example.com", "h".repeat(70));
    let primary = format!("mysql://rwtop@{long_host}:3307");
    let config = load_ok(&nodes(Some(&primary), &[]));
    assert_eq!(config.nodes[0].name, format!("{long_host}:3307"));
    assert_eq!(config.settings.heartbeat.writer_id.chars().count(), 64);
    let replica_only = load_ok(&nodes(None, &["mysql://rwtop@db2"]));
    assert!(
        replica_only
            .settings
            .heartbeat
            .writer_id
            .starts_with("rwtop-")
    );
}

#[test]
fn password_order_is_env_then_flag_file_then_file_key() {
    let dir = tempdir();
    password_file(&dir, "key.pw", "from-key-file\n", 0o600);
    let flag_file = password_file(&dir, "flag.pw", "from-flag-file\r\n", 0o600);
    let text = format!("password_file = \"key.pw\"\n{TWO_NODES}");
    let mut cli = config_file(&dir, "rwtop.toml", &text);
    let pw = |cli: &CliOverrides, env: Option<&str>| {
        let node = load(cli, env).expect("loads").nodes.remove(1);
        let password = node.endpoint.password.expect("a password");
        password.expose().to_owned()
    };
    assert_eq!(pw(&cli, Some("from-env")), "from-env");
    // A relative password_file is found next to the config file; an empty env var is unset.
    assert_eq!(pw(&cli, None), "from-key-file");
    assert_eq!(pw(&cli, Some("")), "from-key-file");
    cli.password_file = Some(flag_file);
    assert_eq!(pw(&cli, None), "from-flag-file");
    assert_eq!(pw(&cli, Some("from-env")), "from-env");
}

#[test]
fn prompt_only_when_nothing_else_and_a_clear_error_without_a_terminal() {
    let mut asked = Vec::new();
    let mut prompt = |text: &str| {
        asked.push(text.to_owned());
        Ok("typed\n".to_owned())
    };
    let config = Config::load_from(&two_cli_nodes(), &[], None, &mut prompt);
    let config = config.expect("prompted");
    let typed = Some(Secret::new("typed"));
    assert!(config.nodes.iter().all(|n| n.endpoint.password == typed));
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("rwtop"), "{}", asked[0]);

    let mut never = |_: &str| -> io::Result<String> { unreachable!("prompted needlessly") };
    let env = Some("env".to_owned());
    assert!(Config::load_from(&two_cli_nodes(), &[], env, &mut never).is_ok());
    // Every password inline: no shared password is looked for at all.
    let inline = nodes(Some("mysql://a:x@db1"), &[]);
    assert!(Config::load_from(&inline, &[], None, &mut never).is_ok());

    let mut no_tty = |_: &str| Err(io::Error::other("stdin is not a terminal"));
    let err = Config::load_from(&two_cli_nodes(), &[], None, &mut no_tty);
    let err = err.expect_err("no terminal");
    assert!(matches!(err, ConfigError::NoPassword { .. }));
    let ways = "RWTOP_PASSWORD|--password-file|password_file|prompt|not a terminal";
    assert_mentions(&err.to_string(), &ways.split('|').collect::<Vec<_>>());
}

#[test]
fn unreadable_empty_or_open_password_files() {
    let dir = tempdir();
    let missing = dir.path().join("nope.password");
    let mut cli = two_cli_nodes();
    cli.password_file = Some(missing.clone());
    let err = load(&cli, None).expect_err("missing password file");
    assert!(matches!(err, ConfigError::PasswordFile { .. }));
    let path = missing.display().to_string();
    assert_mentions(&err.to_string(), &[&path, "--password-file"]);

    cli.password_file = Some(password_file(&dir, "empty.pw", "\n", 0o600));
    let err = load(&cli, None).expect_err("empty password file");
    assert_mentions(&err.to_string(), &["empty.pw", "empty"]);

    if cfg!(unix) {
        cli.password_file = Some(password_file(&dir, "open.pw", PASSWORD, 0o644));
        let warnings = load(&cli, None).expect("an open file still works").warnings;
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("open.pw") && !warnings[0].contains(PASSWORD));
    }
}

#[test]
fn bad_configs_name_file_line_and_key() {
    for bad in bad_files(&manifest_path("tests/bad_configs"), 8) {
        let message = load_err(&with_config(bad.path.clone()));
        bad.assert_named_in(&message, &bad.name);
        assert!(!message.contains("hunter2"), "{message}");
    }
}

#[test]
fn explicit_config_that_is_missing_is_an_error_naming_it() {
    let dir = tempdir();
    let path = dir.path().join("absent.toml");
    let mut cli = two_cli_nodes();
    cli.config = Some(path.clone());
    let err = load(&cli, Some(PASSWORD)).expect_err("missing --config");
    assert!(matches!(
        err,
        ConfigError::Unreadable { explicit: true, .. }
    ));
    let path = path.display().to_string();
    assert_mentions(&err.to_string(), &[&path, "--config"]);
}

#[test]
fn implicit_configs_are_searched_in_order_and_may_be_missing() {
    let dir = tempdir();
    let implicit = [
        dir.path().join("first.toml"),
        dir.path().join("second.toml"),
    ];
    let [first, second] = implicit.clone();
    let cli = nodes(Some("mysql://rwtop@db1"), &[]);
    let env = || Some(PASSWORD.to_owned());
    let load = || Config::load_from(&cli, &implicit, env(), &mut no_prompt);
    let found = || load().map(|c| (c.file, c.settings.interval.as_secs())).ok();
    assert_eq!(found(), Some((None, 1)));
    fs::write(&second, "interval = \"3s\"\n").expect("write");
    assert_eq!(found(), Some((Some(second), 3)));
    fs::write(&first, "interval = \"4s\"\n").expect("write");
    assert_eq!(found(), Some((Some(first.clone()), 4)));

    // A present implicit file that is wrong is still an error.
    fs::write(&first, "interval = \"4 s econds\"\n").expect("write");
    let err = load().expect_err("bad implicit file").to_string();
    assert_mentions(&err, &["first.toml", "key `interval`"]);
}

#[test]
fn no_nodes_tells_how_to_start() {
    let err = load(&CliOverrides::default(), Some(PASSWORD));
    let err = err.expect_err("no nodes");
    assert!(matches!(err, ConfigError::NoNodes));
    let ways = ["config file", "--primary", "--replica", "rwtop demo"];
    assert_mentions(&err.to_string(), &ways);
    let dir = tempdir();
    let cli = config_file(&dir, "empty.toml", "interval = \"1s\"\n");
    assert!(matches!(
        load(&cli, Some(PASSWORD)),
        Err(ConfigError::NoNodes)
    ));
}
