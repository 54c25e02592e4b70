//! Strategy names: parse, print, defaults and mistakes.

use super::*;

#[test]
fn every_strategy_prints_as_it_parses() {
    let d = ProbeDefaults::default();
    for s in Strategy::all(&d) {
        assert_eq!(s.to_string().parse::<Strategy>(), Ok(s), "{s}");
    }
    for text in [
        "sleep(250ms)",
        "pos-wait(1.5s)",
        "sticky(120s)",
        "gtid-wait(300ms)",
        "maxscale-fast(monitor=100ms)",
        "maxscale-fast-universal(monitor=2s)",
        "router-wait(0s)",
        "gr-after(2s)",
    ] {
        assert_eq!(text.parse::<Strategy>().unwrap().to_string(), text);
    }
}

#[test]
fn bare_names_take_the_configured_defaults() {
    let d = ProbeDefaults {
        timeout: Duration::from_millis(700),
        ..ProbeDefaults::default()
    };
    assert_eq!(
        Strategy::parse("gtid-wait", &d),
        Ok(Strategy::GtidWait(Duration::from_millis(700)))
    );
    assert_eq!(
        Strategy::parse(" sleep( 20ms ) ", &d),
        Ok(Strategy::Sleep(Duration::from_millis(20)))
    );
}

#[test]
fn mistakes_are_named() {
    let d = ProbeDefaults::default();
    let err = Strategy::parse("gtid-wiat", &d).unwrap_err();
    assert!(err.contains("unknown strategy \"gtid-wiat\"") && err.contains("gtid-wait"));
    assert!(
        Strategy::parse("none(1s)", &d)
            .unwrap_err()
            .contains("takes no parameter")
    );
    assert!(
        Strategy::parse("sleep(1s", &d)
            .unwrap_err()
            .contains("closing")
    );
    assert!(
        Strategy::parse("sleep(-1s)", &d)
            .unwrap_err()
            .contains("positive")
    );
    assert!(
        Strategy::parse_list(" , ", &d)
            .unwrap_err()
            .contains("no strategy")
    );
}

#[test]
fn the_proxy_modes_parse_their_own_parameters() {
    let d = ProbeDefaults::default();
    let parse = |t: &str| Strategy::parse(t, &d);
    assert_eq!(
        parse("maxscale-fast"),
        Ok(Strategy::MaxscaleFast(Fast::POLLED))
    );
    assert_eq!(
        parse("maxscale-fast-global(monitor=250ms)"),
        Ok(Strategy::MaxscaleFastGlobal(Fast {
            monitor: Monitor::Every(Duration::from_millis(250)),
            after: Duration::ZERO,
        }))
    );
    // The application's delay between its write and its read, with or without a monitor, in
    // either order, and written back as it was read.
    let both = Fast {
        monitor: Monitor::Every(Duration::from_millis(100)),
        after: Duration::from_millis(300),
    };
    for text in [
        "maxscale-fast-universal(monitor=100ms,after=300ms)",
        "maxscale-fast-universal(after=300ms, monitor=100ms)",
    ] {
        assert_eq!(
            parse(text),
            Ok(Strategy::MaxscaleFastUniversal(both)),
            "{text}"
        );
    }
    assert_eq!(
        Strategy::MaxscaleFastUniversal(both).to_string(),
        "maxscale-fast-universal(monitor=100ms,after=300ms)"
    );
    let later = Strategy::MaxscaleFast(Fast {
        monitor: Monitor::Polled,
        after: Duration::from_millis(1500),
    });
    assert_eq!(parse("maxscale-fast(after=1.5s)"), Ok(later));
    assert_eq!(parse(&later.to_string()), Ok(later));
    assert!(
        parse("maxscale-fast(later=1s)")
            .unwrap_err()
            .contains("after=DELAY")
    );
    assert!(
        parse("maxscale-fast(after=soon)")
            .unwrap_err()
            .contains("after")
    );
    assert!(
        parse("maxscale-fast(100ms)")
            .unwrap_err()
            .contains("monitor=")
    );
    assert!(parse("maxscale-fast(monitor=0)").is_err());
    for zero in ["router-wait(0)", "router-wait(0s)", "router-wait(0ms)"] {
        assert_eq!(
            parse(zero),
            Ok(Strategy::RouterWait(Duration::ZERO)),
            "{zero}"
        );
    }
    assert!(parse("gr-after(0)").unwrap_err().contains("more than zero"));
    assert!(
        parse("proxysql-gtid(1s)")
            .unwrap_err()
            .contains("takes no parameter")
    );
    assert_eq!(parse("gr-before"), Ok(Strategy::GrBefore(d.timeout)));
    let err = parse("maxscale-causal").unwrap_err();
    assert!(
        err.contains("maxscale-fast-universal") && err.contains("gr-after"),
        "{err}"
    );
}

#[test]
fn lists_split_outside_parentheses_and_expand_all() {
    let d = ProbeDefaults::default();
    let list = Strategy::parse_list("none,sleep(1.5s),gtid-wait", &d).unwrap();
    assert_eq!(
        list,
        vec![
            Strategy::None,
            Strategy::Sleep(Duration::from_millis(1500)),
            Strategy::GtidWait(d.timeout)
        ]
    );
    assert_eq!(
        Strategy::parse_list("all", &d).unwrap().len(),
        CATALOGUE.len()
    );
}
