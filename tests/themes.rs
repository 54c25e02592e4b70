//! Themes through their public API: the shipped files, overriding key by key, `NO_COLOR`, and
//! every way a theme can be wrong.

#[path = "common/bad_files.rs"]
mod bad_files;

use bad_files::{assert_mentions, bad_files};
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use ratatui::style::{Color, Modifier, Style};
use rwtop::ui::Theme;
use rwtop::ui::theme::{BUILTIN_NAMES, ThemeError, no_color_requested};

fn manifest_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn shipped_path(name: &str) -> PathBuf {
    manifest_path(&format!("themes/{name}.toml"))
}

fn load_path(path: &Path) -> Result<Theme, ThemeError> {
    Theme::load(&path.display().to_string())
}

/// The message of a refused theme, checking on the way that it is a usage error.
fn refused(result: Result<Theme, ThemeError>) -> String {
    let err = result.expect_err("the theme is refused");
    assert_eq!(err.exit_code(), 2);
    err.to_string()
}

#[test]
fn every_shipped_theme_loads_by_name_and_by_path_alike() {
    for name in BUILTIN_NAMES {
        let by_name = Theme::load(name).unwrap_or_else(|err| panic!("{name}: {err}"));
        let by_path = load_path(&shipped_path(name)).unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(by_name, by_path, "{name}");
    }
}

#[test]
fn shipped_themes_all_differ() {
    let themes: Vec<_> = BUILTIN_NAMES
        .iter()
        .map(|name| (name, Theme::load(name).expect("a shipped theme loads")))
        .collect();
    for (i, (a, theme_a)) in themes.iter().enumerate() {
        for (b, theme_b) in &themes[i + 1..] {
            assert_ne!(theme_a, theme_b, "{a} and {b} are the same theme");
        }
    }
}

/// A file dropped into `themes/` without being compiled in would work from the source tree
/// and fail once installed.
#[test]
fn every_file_in_themes_is_built_in() {
    let dir = fs::read_dir(manifest_path("themes")).expect("themes/");
    let mut files: Vec<String> = dir
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    files.sort();
    let mut names = BUILTIN_NAMES.map(str::to_owned).to_vec();
    names.sort();
    assert_eq!(files, names);
}

#[test]
fn dark_file_is_exactly_the_builtin_default() {
    assert_eq!(Theme::load("dark").expect("dark"), Theme::builtin());
    assert_eq!(
        Theme::resolve(None, false).expect("default"),
        Theme::builtin()
    );
}

/// The shipped files start with a comment saying what each is for.
#[test]
fn shipped_themes_say_what_they_are_for() {
    for name in BUILTIN_NAMES {
        let text = fs::read_to_string(shipped_path(name)).expect("read theme");
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with(&format!("# {name}: ")), "{name}: {first}");
    }
}

/// Colour-blind safety means no state told apart by hue alone: each of the status styles
/// carries a different emphasis, and none uses the red-green pair.
#[test]
fn colorblind_theme_never_relies_on_hue_alone() {
    let theme = Theme::load("colorblind").expect("colorblind");
    let states = [theme.ok, theme.warning, theme.critical, theme.unknown];
    for (i, a) in states.iter().enumerate() {
        for b in &states[i + 1..] {
            assert_ne!(a.add_modifier, b.add_modifier, "{a:?} and {b:?}");
        }
    }
    let red_green = [Color::Red, Color::Green, Color::LightRed, Color::LightGreen];
    for style in states {
        assert!(
            !style.fg.is_some_and(|fg| red_green.contains(&fg)),
            "{style:?}"
        );
    }
    assert_ne!(theme.lag, theme.sbm);
}

#[test]
fn a_partial_file_overrides_only_its_keys() {
    let text = "ok = { fg = \"blue\", italic = true }\nsbm = 208\n";
    let theme = Theme::from_toml(text, "partial.toml").expect("partial theme");
    let expected = Theme {
        ok: Style::new().fg(Color::Blue).add_modifier(Modifier::ITALIC),
        sbm: Color::Indexed(208),
        ..Theme::builtin()
    };
    assert_eq!(theme, expected);
    assert_eq!(
        Theme::from_toml("", "empty.toml").expect("empty"),
        Theme::builtin()
    );
}

/// A style that is written is the whole style: `critical` is bold by default, and a file that
/// leaves `bold` out of it gets a critical style that is not.
#[test]
fn a_style_key_replaces_the_whole_style() {
    let theme = Theme::from_toml("[critical]\nfg = \"lightred\"\n", "t.toml").expect("theme");
    assert_eq!(theme.critical, Style::new().fg(Color::LightRed));
    let off = Theme::from_toml("critical = { fg = \"red\", bold = false }", "t.toml");
    assert_eq!(off.expect("theme").critical, Style::new().fg(Color::Red));
}

#[test]
fn every_colour_form_is_read() {
    let text = r##"
        text = { fg = "LightCyan", bg = "#0A0b0C" }
        muted = { fg = 0x10, bg = "42" }
        lag = "reset"
        sbm = "darkgray"
    "##;
    let theme = Theme::from_toml(text, "forms.toml").expect("theme");
    assert_eq!(
        theme.text,
        Style::new().fg(Color::LightCyan).bg(Color::Rgb(10, 11, 12))
    );
    assert_eq!(
        theme.muted,
        Style::new().fg(Color::Indexed(16)).bg(Color::Indexed(42))
    );
    assert_eq!((theme.lag, theme.sbm), (Color::Reset, Color::DarkGray));
}

#[test]
fn no_color_gives_plain_whatever_the_theme() {
    for spec in [None, Some("light"), Some("colorblind")] {
        let theme = Theme::resolve(spec, true).expect("theme");
        assert_eq!(theme, Theme::plain(), "{spec:?}");
    }
    let path = shipped_path("high-contrast").display().to_string();
    assert_eq!(
        Theme::resolve(Some(&path), true).expect("theme"),
        Theme::plain()
    );
    assert_eq!(
        Theme::resolve(Some("light"), false).expect("light"),
        Theme::load("light").expect("light")
    );
}

#[test]
fn no_color_with_a_bad_theme_is_still_an_error() {
    let message = refused(Theme::resolve(Some("solarised"), true));
    assert_mentions(&message, &["solarised"]);
}

#[test]
fn no_color_means_set_and_not_empty() {
    assert!(!no_color_requested(None));
    assert!(!no_color_requested(Some(OsStr::new(""))));
    assert!(no_color_requested(Some(OsStr::new("1"))));
    assert!(no_color_requested(Some(OsStr::new("0"))));
}

#[test]
fn unknown_theme_name_lists_the_builtin_names() {
    let message = refused(Theme::load("solarised"));
    assert_mentions(&message, &["`solarised`", "path"]);
    assert_mentions(&message, &BUILTIN_NAMES);
}

#[test]
fn missing_theme_path_names_the_path() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("absent.toml");
    let err = load_path(&path).expect_err("missing theme file");
    assert!(matches!(err, ThemeError::Unreadable { .. }), "{err:?}");
    assert_mentions(&refused(Err(err)), &[&path.display().to_string()]);
    // A relative path that looks like one is read as a path, not taken for a name.
    let message = refused(Theme::load("no-such-dir/mine.toml"));
    assert_mentions(&message, &["no-such-dir/mine.toml", "cannot read"]);
}

/// A theme file can be named without a `.toml` extension or a separator if it exists.
#[test]
fn an_existing_file_is_a_path_even_without_extension() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("mine");
    fs::write(&path, "lag = \"blue\"\n").expect("write theme");
    assert_eq!(load_path(&path).expect("theme").lag, Color::Blue);
}

#[test]
fn bad_themes_name_file_line_and_key() {
    for bad in bad_files(&manifest_path("tests/bad_themes"), 6) {
        bad.assert_named_in(&refused(load_path(&bad.path)), &bad.name);
        // The same text read directly names the origin it is given.
        bad.assert_named_in(
            &refused(Theme::from_toml(&bad.text, "given-origin")),
            "given-origin",
        );
    }
}

#[test]
fn a_bad_colour_lists_the_accepted_forms() {
    let message = refused(Theme::from_toml("sbm = \"purple\"", "t.toml"));
    let forms = [
        "\"purple\"",
        "black",
        "lightcyan",
        "reset",
        "#rrggbb",
        "0 to 255",
    ];
    assert_mentions(&message, &forms);
}

#[test]
fn an_unknown_key_lists_the_known_ones() {
    let message = refused(Theme::from_toml("colour = \"red\"", "t.toml"));
    assert_mentions(
        &message,
        &["`colour`", "text", "unknown", "key", "lag", "sbm"],
    );
    let message = refused(Theme::from_toml("ok = { blink = true }", "t.toml"));
    let attributes = [
        "`ok.blink`",
        "fg",
        "bg",
        "bold",
        "dim",
        "italic",
        "underlined",
    ];
    assert_mentions(&message, &attributes);
}

/// Inline tables put several keys on one line; the message still names the exact one.
#[test]
fn a_bad_value_in_an_inline_table_names_its_own_key() {
    let text = "\n\nwarning = { fg = \"yellow\", bg = \"#zzzzzz\" }\n";
    let message = refused(Theme::from_toml(text, "t.toml"));
    assert_mentions(
        &message,
        &["line 3, column 33", "key `warning.bg`", "six hex digits"],
    );
}

/// The first problem in reading order is the one reported, though the parsed table is sorted.
#[test]
fn the_first_problem_in_the_file_is_reported() {
    let text = "warning = { fg = \"nope\" }\nbold_text = 1\n";
    let message = refused(Theme::from_toml(text, "t.toml"));
    assert_mentions(&message, &["line 1,", "warning.fg"]);
}

proptest! {
    #[test]
    fn any_hex_colour_is_read_exactly(r: u8, g: u8, b: u8, upper: bool) {
        let hex = format!("#{r:02x}{g:02x}{b:02x}");
        let hex = if upper { hex.to_uppercase() } else { hex };
        let theme = Theme::from_toml(&format!("lag = \"{hex}\""), "p.toml");
        prop_assert_eq!(theme.map(|t| t.lag).ok(), Some(Color::Rgb(r, g, b)));
    }

    #[test]
    fn indexes_are_read_up_to_255_and_refused_past_it(n in 0_i64..100_000) {
        let theme = Theme::from_toml(&format!("title = {{ fg = {n} }}"), "p.toml");
        match u8::try_from(n) {
            Ok(index) => prop_assert_eq!(theme.map(|t| t.title).ok(), Some(Style::new().fg(Color::Indexed(index)))),
            Err(_) => prop_assert!(theme.is_err_and(|e| e.to_string().contains("0 to 255"))),
        }
    }

    /// Whatever the text, loading answers with a theme or an error, never a panic.
    #[test]
    fn arbitrary_text_never_panics(text in "[a-z#\"={} .0-9\\[\\]\n_-]{0,60}") {
        let _ = Theme::from_toml(&text, "p.toml");
    }
}
