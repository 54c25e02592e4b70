//! Colours and styles. The built-in theme is the dark default; `themes/*.toml` override it key by
//! key; `NO_COLOR` drops colour but keeps emphasis.
//!
//! A theme is chosen once, at start-up, by `--theme NAME|PATH` or the config file. A theme that
//! cannot be loaded stops rwtop with a message naming the file, line and key, like a bad config:
//! quietly falling back to the default would leave the operator wondering why their colours were
//! ignored.

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};

use super::theme_file;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub text: Style,
    pub muted: Style,
    pub title: Style,
    pub border: Style,
    pub selected: Style,
    pub ok: Style,
    pub warning: Style,
    pub critical: Style,
    /// Values that are not known (NULL SBM, unknown lag): never styled like good ones.
    pub unknown: Style,
    pub key: Style,
    /// Chart series.
    pub lag: Color,
    pub sbm: Color,
}

/// The themes that ship inside the binary, in the order messages list them. `dark` is
/// [`Theme::builtin`]; a test keeps its file and the code in step.
pub const BUILTIN_NAMES: [&str; 4] = ["dark", "light", "high-contrast", "colorblind"];

/// Compiled in, so that `--theme light` works from any directory and after installation.
const BUILTIN_FILES: [(&str, &str); 4] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.toml"),
    ),
    ("colorblind", include_str!("../../themes/colorblind.toml")),
];

impl Theme {
    /// The dark default.
    #[must_use]
    pub fn builtin() -> Self {
        Self {
            text: Style::new().fg(Color::Gray),
            muted: Style::new().fg(Color::DarkGray),
            title: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            border: Style::new().fg(Color::DarkGray),
            selected: Style::new()
                .bg(Color::Rgb(40, 44, 52))
                .add_modifier(Modifier::BOLD),
            ok: Style::new().fg(Color::Green),
            warning: Style::new().fg(Color::Yellow),
            critical: Style::new().fg(Color::Red).add_modifier(Modifier::BOLD),
            unknown: Style::new().fg(Color::Magenta),
            key: Style::new().fg(Color::Black).bg(Color::Cyan),
            lag: Color::Cyan,
            sbm: Color::Yellow,
        }
    }

    /// `NO_COLOR`: emphasis only.
    #[must_use]
    pub fn plain() -> Self {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        Self {
            text: Style::new(),
            muted: Style::new().add_modifier(Modifier::DIM),
            title: bold,
            border: Style::new(),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            ok: Style::new(),
            warning: bold,
            critical: bold.add_modifier(Modifier::UNDERLINED),
            unknown: Style::new().add_modifier(Modifier::ITALIC),
            key: Style::new().add_modifier(Modifier::REVERSED),
            lag: Color::Reset,
            sbm: Color::Reset,
        }
    }

    /// A built-in name first, then a path: a file that happens to be called `light` in the
    /// working directory must not change what `--theme light` means (write `./light` for it).
    /// Anything else that looks like a path (a separator, `.toml`, or an existing file) is read
    /// as one, so a typo in a path is reported as a missing file and a typo in a name as an
    /// unknown theme listing the real ones.
    pub fn load(spec: &str) -> Result<Self, ThemeError> {
        if let Some((name, text)) = BUILTIN_FILES.iter().find(|(name, _)| *name == spec) {
            return Self::from_toml(
                text,
                &format!("built-in theme `{name}` (themes/{name}.toml)"),
            );
        }
        let path = Path::new(spec);
        let looks_like_path = spec.contains('/')
            || spec.contains(std::path::MAIN_SEPARATOR)
            || path.extension().is_some_and(|ext| ext == "toml")
            || path.is_file();
        if !looks_like_path {
            return Err(ThemeError::UnknownName {
                name: spec.to_owned(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| ThemeError::Unreadable {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml(&text, &path.display().to_string())
    }

    /// Reads a theme file's text over [`Theme::builtin`]; `origin` names the text in messages
    /// (normally its path). A style key that is present replaces that whole style, so a file
    /// reads as exactly what it shows; a key that is absent keeps the default.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, ThemeError> {
        theme_file::parse(text, origin)
    }

    /// The theme to draw with. `no_color` is whether `NO_COLOR` is set and non-empty (see
    /// [`no_color_requested`]); it wins over any theme, but a bad `spec` is still reported so
    /// that a mistake does not hide until the day colour is turned back on.
    pub fn resolve(spec: Option<&str>, no_color: bool) -> Result<Self, ThemeError> {
        let theme = match spec {
            Some(spec) => Self::load(spec)?,
            None => Self::builtin(),
        };
        Ok(if no_color { Self::plain() } else { theme })
    }
}

/// Whether a `NO_COLOR` value asks for no colour: per no-color.org, present and not empty.
/// Takes the value rather than reading the environment so that callers and tests agree on the
/// rule without touching the process environment.
#[must_use]
pub fn no_color_requested(value: Option<&OsStr>) -> bool {
    value.is_some_and(|value| !value.is_empty())
}

/// Where in a theme file a problem is; shown as ``FILE, line L, column C, key `K` ``, the same
/// shape config errors use, so both kinds of file are fixed the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThemeLocation {
    /// The file's path, or the built-in theme's name.
    pub origin: String,
    /// 1-based line and column (in characters).
    pub line: u32,
    pub column: u32,
    /// Dotted (`ok.fg`), when the problem is under a key.
    pub key: Option<String>,
}

impl fmt::Display for ThemeLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}, line {}, column {}",
            self.origin, self.line, self.column
        )?;
        match &self.key {
            Some(key) => write!(f, ", key `{key}`"),
            None => Ok(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error(
        "unknown theme `{name}`: expected a built-in theme ({}) or the path of a theme file \
         (such as ./my-theme.toml)",
        BUILTIN_NAMES.join(", ")
    )]
    UnknownName { name: String },
    #[error("cannot read theme file {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// `detail` is the toml crate's report, which quotes the line and points at the column.
    #[error("{at}: not valid TOML:\n{detail}")]
    Syntax { at: ThemeLocation, detail: String },
    /// Valid TOML with an unknown key, a wrong type or a colour rwtop cannot read; the message
    /// says what was found and which forms are accepted.
    #[error("{at}: {message}")]
    Invalid { at: ThemeLocation, message: String },
}

impl ThemeError {
    /// A theme problem is a usage error, like a config problem.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        2
    }
}
