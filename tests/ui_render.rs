//! Render snapshots of the TUI: the full screen of every recorded scenario at 80×24, 120×40 and
//! 200×60, each panel alone where it has the most to show, the help screen and the
//! "terminal too small" notice.
//!
//! The inputs are store snapshots recorded from real sandboxes (`tests/ui_snapshots/*.json`, see
//! the README there and `scripts/record_ui_snapshots.rs`), or, for shapes no recording holds yet
//! (a multi-source replica, `ui_render/channels.rs`), built with `rwtop::store::testkit`; drawn
//! with `Theme::plain()` into a `TestBackend`; the expected screens are insta snapshots in
//! `tests/snapshots/`. Each test also asserts the few things its screen exists to show, so a
//! broken render fails even when its snapshot is accepted without a look.

use std::ops::Range;
use std::path::PathBuf;
use std::time::Duration;

use insta::assert_snapshot;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::{Frame, Terminal};
use rwtop::probe::{Outcome, ProbeBook, ProbeDefaults, ProbeResult, Strategy};
use rwtop::store::Snapshot;
use rwtop::ui::theme::BUILTIN_NAMES;
use rwtop::ui::{Cover, Mode, RenderCtx, Theme, UiState, panels, render};

/// Parallel appliers: the detail pane's workers and counters.
#[path = "ui_render/appliers.rs"]
mod appliers;

/// Multi-source replicas: a row, an edge and a detail line per channel.
#[path = "ui_render/channels.rs"]
mod channels;
#[path = "ui_render/exposure.rs"]
mod exposure;
#[path = "ui_render/lint.rs"]
mod lint;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

type Panel = fn(&mut Frame, Rect, &RenderCtx<'_>);

/// A recording from `tests/ui_snapshots/`.
fn recorded(scenario: &str) -> Snapshot {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ui_snapshots")
        .join(format!("{scenario}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (see tests/ui_snapshots/README.md)", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The UI state with `replica` selected (it drives the detail pane and the table's highlight):
/// a row's name, `agg` or `agg/p2`.
fn selecting(snapshot: &Snapshot, replica: &str) -> UiState {
    let selected = UiState::default()
        .rows(snapshot)
        .iter()
        .position(|r| r.label() == replica)
        .unwrap_or_else(|| panic!("no replica {replica} in the recording"));
    UiState {
        selected,
        ..UiState::default()
    }
}

/// Draws `panel` over the whole `width`×`height` terminal.
fn draw(
    snapshot: &Snapshot,
    state: &UiState,
    panel: Panel,
    width: u16,
    height: u16,
) -> TestBackend {
    draw_in(&Theme::plain(), snapshot, state, panel, (width, height))
}

/// [`draw`] in another theme.
fn draw_in(
    theme: &Theme,
    snapshot: &Snapshot,
    state: &UiState,
    panel: Panel,
    (width, height): (u16, u16),
) -> TestBackend {
    let ctx = RenderCtx {
        snapshot,
        state,
        theme,
    };
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| panel(frame, frame.area(), &ctx))
        .expect("drawing");
    terminal.backend().clone()
}

fn full_screen(frame: &mut Frame, _area: Rect, ctx: &RenderCtx<'_>) {
    render::render(frame, ctx);
}

/// The screen's rows as text.
fn rows(backend: &TestBackend) -> Vec<String> {
    let buffer = backend.buffer();
    (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer.cell((x, y)).map_or(" ", |c| c.symbol()))
                .collect()
        })
        .collect()
}

fn screen_text(backend: &TestBackend) -> String {
    rows(backend).join("\n")
}

/// The words inside a bordered pane whose title starts with `title`, in reading order with
/// wrapping undone, so a phrase split over two lines still reads as one.
fn pane_words(backend: &TestBackend, title: &str) -> String {
    let rows = rows(backend);
    let (top, left) = rows
        .iter()
        .enumerate()
        .find_map(|(y, row)| {
            let at = row.find(&format!("╭{title}"))?;
            Some((y, row[..at].chars().count()))
        })
        .unwrap_or_else(|| panic!("no pane titled {title:?}:\n{}", rows.join("\n")));
    let chars = |y: usize| rows[y].chars().collect::<Vec<char>>();
    let width = chars(top)
        .iter()
        .skip(left + 1)
        .position(|c| *c == '╮')
        .expect("pane's top-right corner");
    let mut words = Vec::new();
    for y in top + 1..rows.len() {
        let row = chars(y);
        if row.get(left) == Some(&'╰') {
            break;
        }
        let inside: String = row.iter().skip(left + 1).take(width).collect();
        words.extend(inside.split_whitespace().map(str::to_owned));
    }
    words.join(" ")
}

fn assert_has(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}

/// The scenario's full screen at every size, with the replica it is about selected.
fn full_screens(scenario: &str, focus: &str) -> Vec<(u16, u16, TestBackend)> {
    let snapshot = recorded(scenario);
    let state = selecting(&snapshot, focus);
    SIZES
        .iter()
        .map(|&(w, h)| {
            let backend = draw(&snapshot, &state, full_screen, w, h);
            assert_snapshot!(format!("{scenario}_{w}x{h}"), &backend);
            (w, h, backend)
        })
        .collect()
}

#[test]
fn healthy_full_screen_at_every_size() {
    for (w, h, backend) in full_screens("healthy", "r1") {
        let text = screen_text(&backend);
        // Every replica, the cascaded one under r1, nothing alarming.
        assert_has(&text, &["primary", "r1", "r2", "c1", "replicas 3/3 up"]);
        assert_has(&text, &["no DDL running · no alerts", "✓ no active alerts"]);
        assert!(!text.contains("NULL"), "{w}×{h}:\n{text}");
    }
}

#[test]
fn sql_stopped_full_screen_at_every_size() {
    for (w, h, backend) in full_screens("sql_stopped", "r2") {
        let text = screen_text(&backend);
        assert_has(&text, &["r1", "r2", "NULL", "sql_thread_stopped"]);
        let detail = pane_words(&backend, " r2 ← primary");
        assert!(detail.contains("SBM NULL"), "{w}×{h}: {detail}");
    }
}

#[test]
fn stalled_link_full_screen_at_every_size() {
    for (_, _, backend) in full_screens("stalled_link", "r1") {
        let text = screen_text(&backend);
        assert_has(&text, &["r1", "r2", "sbm_understates_lag"]);
        let detail = pane_words(&backend, " r1 ← primary");
        assert_has(&detail, &["SBM 0s", "◆ SBM understates lag"]);
        // The likeliest cause, however the pane wraps it.
        assert_has(&pane_words(&backend, " alerts"), &["source link stalled"]);
    }
}

#[test]
fn ddl_window_full_screen_at_every_size() {
    let snapshot = recorded("ddl_window");
    let applying = snapshot
        .nodes
        .iter()
        .find(|n| n.ddl().iter().any(|d| d.applier))
        .map(|n| n.name.clone())
        .expect("a replica applying the ALTER in the recording");
    for (_, _, backend) in full_screens("ddl_window", &applying) {
        let text = screen_text(&backend);
        let banner = rows(&backend).into_iter().nth(1).unwrap_or_default();
        assert!(banner.starts_with("DDL ALTER"), "banner: {banner}");
        assert_has(&banner, &[&format!("{applying} applying")]);
        assert_has(&text, &["ddl_in_flight"]);
    }
}

/// One panel of one scenario, alone at a size it gets in the full layout.
fn panel(name: &str, scenario: &str, focus: &str, panel: Panel, (w, h): (u16, u16)) -> String {
    let snapshot = recorded(scenario);
    let backend = draw(&snapshot, &selecting(&snapshot, focus), panel, w, h);
    assert_snapshot!(format!("panel_{name}_{scenario}_{w}x{h}"), &backend);
    screen_text(&backend)
}

#[test]
fn header_panel_shows_the_ddl_banner() {
    let text = panel(
        "header",
        "ddl_window",
        "r1",
        panels::header::render,
        (120, 3),
    );
    assert_has(
        &text,
        &[
            "● primary",
            "replicas 2/2 up",
            "writing",
            "DDL ALTER TABLE rwtop.big",
        ],
    );
}

#[test]
fn topology_panel_shows_the_cascade() {
    let text = panel(
        "topology",
        "healthy",
        "c1",
        panels::topology::render,
        (36, 10),
    );
    assert_has(&text, &["primary", "r1", "r2", "c1", "lag", "SBM"]);
    let rows: Vec<&str> = text.lines().collect();
    let indent = |name: &str| {
        rows.iter()
            .find_map(|r| r.find(&format!(" {name} ")))
            .unwrap_or_else(|| panic!("{name} not in the tree:\n{text}"))
    };
    assert!(indent("c1") > indent("r1"), "c1 nested under r1:\n{text}");
}

#[test]
fn replicas_panel_shows_null_sbm() {
    let text = panel(
        "replicas",
        "sql_stopped",
        "r2",
        panels::replicas::render,
        (84, 8),
    );
    assert_has(&text, &["replicas 2", "r1", "r2", "NULL"]);
}

#[test]
fn detail_panel_shows_lag_climbing_while_sbm_says_zero() {
    let text = panel(
        "detail",
        "stalled_link",
        "r1",
        panels::detail::render,
        (72, 20),
    );
    assert_has(
        &text,
        &[
            "r1 ← primary",
            "SBM 0s",
            "◆ SBM understates lag",
            "⣀ lag",
            "• SBM",
        ],
    );
}

#[test]
fn alerts_panel_shows_the_stopped_thread_and_the_log() {
    let text = panel(
        "alerts",
        "sql_stopped",
        "r2",
        panels::alerts::render,
        (48, 22),
    );
    assert_has(
        &text,
        &[
            "◆ CRIT sql_thread_stopped r2",
            "log, newest first",
            "▲ raised",
        ],
    );
}

#[test]
fn footer_panel_is_the_key_bar() {
    let text = panel("footer", "healthy", "r1", panels::footer::render, (120, 1));
    assert_has(&text, &["s ", "sort", "? ", "q "]);
}

#[test]
fn help_panel_lists_the_keys() {
    // 80×24 holds 22 of the keys: the title says so and the arrows reach the rest.
    let text = panel("help", "healthy", "r1", panels::help::render, (80, 24));
    assert_has(
        &text,
        &[
            "keys 1–22 of 23",
            "any other key closes",
            "select the next replica",
        ],
    );
}

#[test]
fn help_screen_over_the_full_screen() {
    let snapshot = recorded("healthy");
    let state = UiState {
        mode: Mode::Help,
        ..UiState::default()
    };
    let backend = draw(&snapshot, &state, full_screen, 120, 40);
    assert_snapshot!("help_screen_healthy_120x40", &backend);
    let text = screen_text(&backend);
    assert_has(&text, &["keys — any key closes", "replicas 3/3 up"]);
}

#[test]
fn too_small_notice_below_80x24() {
    let snapshot = recorded("healthy");
    let state = UiState::default();
    for (w, h) in [(79, 24), (40, 10), (1, 1)] {
        let backend = draw(&snapshot, &state, full_screen, w, h);
        assert_snapshot!(format!("too_small_{w}x{h}"), &backend);
        let text = screen_text(&backend);
        assert!(!text.contains("replicas"), "{w}×{h}: panels drawn:\n{text}");
        if w >= 40 {
            assert_has(&text, &["terminal too small", &format!("this is {w}×{h}")]);
        }
    }
}

/// A bake-off of every strategy on r1 as a MariaDB sandbox under load answers it, round by
/// round, then one `t` read that timed out: what the store's book would hold.
fn bakeoff_book(snapshot: &Snapshot) -> ProbeBook {
    let mut book = ProbeBook::default();
    // The articles' strategies: the proxies' modes add rows these snapshots predate.
    let strategies: Vec<Strategy> = Strategy::all(&ProbeDefaults::default())
        .into_iter()
        .filter(|s| !s.is_proxy_mode())
        .collect();
    let mut at = snapshot.taken_at - chrono::Duration::seconds(30);
    let mut record = |strategy: Strategy, round: u32, outcome: Outcome| {
        at += chrono::Duration::milliseconds(120);
        let replica_read = |waited_us: u64, queries| (Some("r1"), waited_us, queries, 0);
        let (served_by, waited_us, queries, primary_reads) = match (strategy, outcome) {
            (_, Outcome::Error) => (None, 0, 1, 0),
            (Strategy::Primary, _) => (Some("primary"), 0, 2, 1),
            (Strategy::None | Strategy::LagThreshold(_), _) => replica_read(0, 2),
            (Strategy::Sleep(d) | Strategy::Sticky(d), _) => {
                let reads = u32::from(matches!(strategy, Strategy::Sticky(_)));
                (
                    Some("r1"),
                    u64::try_from(d.as_micros()).unwrap_or(0),
                    2 + reads,
                    reads,
                )
            }
            _ => replica_read(900 + u64::from(round) * 310, 4),
        };
        book.record(ProbeResult {
            at,
            strategy,
            target: "r1".into(),
            served_by: served_by.map(str::to_owned),
            outcome,
            cause: (outcome == Outcome::Error).then(|| {
                "refused: rpl_semi_sync_master_enabled is OFF on primary, so a commit waits \
                 for no replica and its position promises nothing; turn it on or pick another \
                 strategy"
                    .to_owned()
            }),
            note: None,
            waited: Duration::from_micros(waited_us),
            total: Duration::from_micros(waited_us + 1_400),
            queries,
            primary_reads,
            cost: rwtop::probe::ProbeCost::default(),
        });
    };
    for round in 0..10 {
        for &strategy in &strategies {
            let outcome = match strategy {
                Strategy::None if round % 3 != 0 => Outcome::Stale,
                Strategy::SbmZero(_) if round == 4 => Outcome::Stale,
                Strategy::SemisyncPos(_) => Outcome::Error,
                _ => Outcome::Fresh,
            };
            record(strategy, round, outcome);
        }
    }
    book.record(ProbeResult {
        at: snapshot.taken_at - chrono::Duration::seconds(2),
        strategy: Strategy::GtidWait(Duration::from_secs(1)),
        target: "r1".into(),
        served_by: Some("primary".into()),
        outcome: Outcome::FellBack,
        cause: Some("timeout after 1s".into()),
        note: None,
        waited: Duration::from_millis(1_003),
        total: Duration::from_millis(1_005),
        queries: 5,
        primary_reads: 1,
        cost: rwtop::probe::ProbeCost::default(),
    });
    book.set_running(Some("bake-off 37/110".into()));
    book
}

#[test]
fn test_reads_pane_shows_the_bakeoff_tallies() {
    let mut snapshot = recorded("healthy");
    snapshot.probes = bakeoff_book(&snapshot).view();
    let mut state = selecting(&snapshot, "r1");
    state.panes.cover = Some(Cover::TestReads);
    let sizes = [
        (
            120,
            40,
            " test reads · r1 · gtid-wait(1s) · running: bake-off 37/110",
        ),
        (80, 24, " r1 · gtid-wait(1s) · ▶ bake-off 37/110"),
    ];
    for (w, h, title) in sizes {
        let backend = draw(&snapshot, &state, full_screen, w, h);
        assert_snapshot!(format!("test_reads_healthy_{w}x{h}"), &backend);
        let text = screen_text(&backend);
        // The pane stands in for the detail pane; the alerts stay.
        assert_has(&text, &["✓ no active alerts"]);
        assert!(
            !text.contains("r1 ← primary"),
            "{w}×{h}: detail drawn:\n{text}"
        );
        let pane = pane_words(&backend, title);
        assert_has(
            &pane,
            &["strategy", "fresh", "stale", "none", "60%", "gtid-wait(1s)"],
        );
        assert_has(&pane, &["last fell back gtid-wait(1s)"]);
    }
    // At 120×40 every strategy has its row, and the last result its cause.
    let backend = draw(&snapshot, &state, full_screen, 120, 40);
    let pane = pane_words(&backend, " test reads · r1 · gtid-wait(1s)");
    assert_has(
        &pane,
        &[
            "semisync-pos(1s) 10 0% 0% 0% 10",
            "lag-threshold(1s)",
            "read on primary waited 1s 5 queries",
            "cause: timeout after 1s",
            "semisync-pos(1s): 10× refused: rpl_semi_sync_master_enabled is OFF",
        ],
    );
    assert!(!pane.contains(" more"), "{pane}");
}

#[test]
fn test_reads_pane_before_any_read_names_the_keys() {
    let snapshot = recorded("healthy");
    let state = selecting(&snapshot, "r2");
    let backend = draw(&snapshot, &state, panels::probes::render, 48, 10);
    assert_snapshot!("panel_test_reads_hint_healthy_48x10", &backend);
    let words = pane_words(&backend, " test reads · r2 · gtid-wait(1s) ");
    assert_has(
        &words,
        &[
            "no test reads on r2 yet: t runs one, b bakes off every strategy, [ ] change the strategy",
        ],
    );
}

/// The row of the pane titled `title` that starts with `row_text`, and the pane's inside columns.
fn row_in_pane(backend: &TestBackend, title: &str, row_text: &str) -> (u16, Range<u16>) {
    let rows: Vec<Vec<char>> = rows(backend).iter().map(|r| r.chars().collect()).collect();
    let starts = |row: &[char], text: &str| {
        row.iter()
            .copied()
            .take(text.chars().count())
            .eq(text.chars())
    };
    let corner = format!("╭{title}");
    let (top, left) = rows
        .iter()
        .enumerate()
        .find_map(|(y, row)| Some((y, (0..row.len()).find(|&x| starts(&row[x..], &corner))?)))
        .unwrap_or_else(|| panic!("no pane {title:?}:\n{}", screen_text(backend)));
    let right = (left + 1..rows[top].len()).find(|&x| rows[top][x] == '╮');
    let y = (top + 1..rows.len()).find(|&y| starts(&rows[y][left + 1..], row_text));
    let n = |v: usize| u16::try_from(v).expect("on screen");
    match (y, right) {
        (Some(y), Some(right)) => (n(y), n(left + 1)..n(right)),
        _ => panic!(
            "no row {row_text:?} in {title:?}:\n{}",
            screen_text(backend)
        ),
    }
}

/// Whether a cell carries `theme`'s selected-row highlight: its background, or a reversal of the
/// terminal's own colours (one band, not each cell's colour turned into a background).
fn highlighted(theme: &Theme, cell: &ratatui::buffer::Cell) -> bool {
    let emphasis = cell.modifier.contains(theme.selected.add_modifier);
    match theme.selected.bg {
        Some(bg) => emphasis && cell.bg == bg,
        None => emphasis && (cell.fg, cell.bg) == (Color::Reset, Color::Reset),
    }
}

/// Every cell of the row, padding and values alike (Yes/No, NULL, lags, shares), reads as
/// selected; `other`, a row that is not selected, does not.
fn assert_selected(backend: &TestBackend, theme: &Theme, name: &str, pane: &str, rows: [&str; 2]) {
    let [chosen, other] = rows;
    let (y, xs) = row_in_pane(backend, pane, chosen);
    let buffer = backend.buffer();
    for x in xs.clone() {
        let cell = &buffer[(x, y)];
        assert!(
            highlighted(theme, cell),
            "{name}: {pane:?} row {chosen:?}, column {x} ({:?}) is not highlighted: {cell:?}",
            cell.symbol()
        );
    }
    let (y, xs) = row_in_pane(backend, pane, other);
    assert!(
        xs.clone().all(|x| !highlighted(theme, &buffer[(x, y)])),
        "{name}: {pane:?} row {other:?} looks selected"
    );
}

#[test]
fn the_selected_row_reads_as_selected_in_every_theme() {
    let builtin = BUILTIN_NAMES.map(|name| (name, Theme::load(name).expect("built-in theme")));
    let themes = builtin.into_iter().chain([("NO_COLOR", Theme::plain())]);
    // r2: Yes/No, NULL SBM and a lag, each with a style of its own.
    let stopped = recorded("sql_stopped");
    let on_r2 = selecting(&stopped, "r2");
    // The test reads: the current strategy's row, with shares and a wait.
    let mut healthy = recorded("healthy");
    healthy.probes = bakeoff_book(&healthy).view();
    let mut reads = selecting(&healthy, "r1");
    reads.panes.cover = Some(Cover::TestReads);
    for (name, theme) in themes {
        let backend = draw_in(&theme, &stopped, &on_r2, full_screen, (120, 40));
        assert_selected(&backend, &theme, name, " replicas", ["● r2", "● r1"]);
        let backend = draw_in(&theme, &healthy, &reads, full_screen, (120, 40));
        let pane = " test reads · r1";
        assert_selected(&backend, &theme, name, pane, ["gtid-wait(1s) ", "none "]);
    }
}

#[test]
fn drain_confirmation_and_drained_markers() {
    let mut snapshot = recorded("healthy");
    snapshot.drain.backend = Some("haproxy".into());
    snapshot.drain.detail = Some("haproxy backend replicas via /run/haproxy/admin.sock".into());
    // The store copies the balancer's word onto each node; r2 is drained, c1 down in its view.
    for (node, lb) in [("r1", "READY"), ("r2", "DRAIN"), ("c1", "DOWN")] {
        if let Some(n) = snapshot.nodes.iter_mut().find(|n| n.name == node) {
            n.lb = Some(lb.into());
        }
        let state = match lb {
            "READY" => rwtop::drain::ServerState::Ready,
            "DRAIN" => rwtop::drain::ServerState::Drain,
            _ => rwtop::drain::ServerState::Down,
        };
        snapshot.drain.states.insert(node.into(), state);
    }
    let mut state = selecting(&snapshot, "r1");
    state.mode = Mode::Confirm;
    state.pending_drain = Some(rwtop::drain::DrainRequest {
        action: rwtop::drain::Action::Drain,
        replica: "r1".into(),
    });
    let backend = draw(&snapshot, &state, full_screen, 120, 40);
    assert_snapshot!("drain_confirm_healthy_120x40", &backend);
    let text = screen_text(&backend);
    assert_has(
        &text,
        &[
            "Drain r1 (now READY) through haproxy backend replicas via /run/haproxy/admin.sock?",
            "r2 ⏸DRAIN",
            "c1 ⏸DOWN",
        ],
    );
    assert!(!text.contains("r1 ⏸"), "a READY replica has no marker");
}
