//! The theme file format: TOML read into a [`Theme`] over the built-in default.
//!
//! The document is walked by hand over the toml crate's spanned tree rather than derived with
//! serde, because every refusal must name the full dotted key (`ok.fg`, even inside an inline
//! table) and list the accepted forms, and serde's errors keep the key path private.
//!
//! ```toml
//! ok = { fg = "green", bold = true }   # a style: fg, bg and the emphasis flags, all optional
//! lag = "#56b4e9"                      # a colour: a name, "#rrggbb" or an index 0-255
//! ```

use std::ops::Range;

use ratatui::style::{Color, Modifier, Style};
use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::theme::{Theme, ThemeError, ThemeLocation};

/// One place for the style keys, so the reader and the "expected one of" list cannot drift.
type StyleSlot = fn(&mut Theme) -> &mut Style;

const STYLE_KEYS: [(&str, StyleSlot); 10] = [
    ("text", |t| &mut t.text),
    ("muted", |t| &mut t.muted),
    ("title", |t| &mut t.title),
    ("border", |t| &mut t.border),
    ("selected", |t| &mut t.selected),
    ("ok", |t| &mut t.ok),
    ("warning", |t| &mut t.warning),
    ("critical", |t| &mut t.critical),
    ("unknown", |t| &mut t.unknown),
    ("key", |t| &mut t.key),
];

type ColourSlot = fn(&mut Theme) -> &mut Color;

const COLOUR_KEYS: [(&str, ColourSlot); 2] = [("lag", |t| &mut t.lag), ("sbm", |t| &mut t.sbm)];

/// Emphasis that survives `NO_COLOR` and colour blindness alike.
const MODIFIERS: [(&str, Modifier); 5] = [
    ("bold", Modifier::BOLD),
    ("dim", Modifier::DIM),
    ("italic", Modifier::ITALIC),
    ("underlined", Modifier::UNDERLINED),
    ("reversed", Modifier::REVERSED),
];

/// The names a colour may have, matching ratatui's basic palette (the terminal's 16 colours).
const COLOUR_NAMES: [(&str, Color); 17] = [
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("gray", Color::Gray),
    ("darkgray", Color::DarkGray),
    ("lightred", Color::LightRed),
    ("lightgreen", Color::LightGreen),
    ("lightyellow", Color::LightYellow),
    ("lightblue", Color::LightBlue),
    ("lightmagenta", Color::LightMagenta),
    ("lightcyan", Color::LightCyan),
    ("white", Color::White),
    ("reset", Color::Reset),
];

/// A theme file's text with its origin, to turn byte spans into line, column and key.
struct ThemeText<'a> {
    text: &'a str,
    origin: &'a str,
}

/// See [`Theme::from_toml`].
pub(crate) fn parse(text: &str, origin: &str) -> Result<Theme, ThemeError> {
    let file = ThemeText { text, origin };
    let doc = DeTable::parse(text).map_err(|err| {
        let offset = err.span().map_or(0, |span| span.start);
        let (line, _) = file.position(offset);
        ThemeError::Syntax {
            at: file.at(offset, crate::config::location::key_on_line(text, line)),
            detail: err.to_string().trim_end().to_owned(),
        }
    })?;
    let mut theme = Theme::builtin();
    for (key, value) in in_file_order(doc.get_ref()) {
        let name = key.get_ref().as_ref();
        if let Some((_, slot)) = STYLE_KEYS.iter().find(|(k, _)| *k == name) {
            *slot(&mut theme) = file.style(name, value)?;
        } else if let Some((_, slot)) = COLOUR_KEYS.iter().find(|(k, _)| *k == name) {
            *slot(&mut theme) = file.colour(name, value)?;
        } else {
            let styles = names(&STYLE_KEYS);
            let colours = names(&COLOUR_KEYS);
            return Err(file.invalid(
                key.span(),
                name,
                format!(
                    "unknown key `{name}`, expected one of the styles ({styles}) or the \
                     colours ({colours})"
                ),
            ));
        }
    }
    Ok(theme)
}

impl ThemeText<'_> {
    /// A style table, read from an empty style so that the file shows the whole style.
    fn style(&self, name: &str, value: &Spanned<DeValue<'_>>) -> Result<Style, ThemeError> {
        let Some(table) = value.get_ref().as_table() else {
            return Err(self.invalid(
                value.span(),
                name,
                format!(
                    "{}, expected a style table such as `{name} = {{ fg = \"cyan\", bold = true \
                     }}`",
                    self.found(value)
                ),
            ));
        };
        let mut style = Style::new();
        for (attr_key, value) in in_file_order(table) {
            let attr = attr_key.get_ref().as_ref();
            let key = format!("{name}.{attr}");
            match attr {
                "fg" => style = style.fg(self.colour(&key, value)?),
                "bg" => style = style.bg(self.colour(&key, value)?),
                _ => {
                    let Some((_, modifier)) = MODIFIERS.iter().find(|(m, _)| *m == attr) else {
                        return Err(self.invalid(
                            attr_key.span(),
                            &key,
                            format!(
                                "unknown key `{key}`, expected one of the style attributes: fg, bg, {}",
                                names(&MODIFIERS)
                            ),
                        ));
                    };
                    match value.get_ref().as_bool() {
                        Some(true) => style = style.add_modifier(*modifier),
                        Some(false) => {}
                        None => {
                            let found = self.found(value);
                            let message = format!("{found}, expected true or false");
                            return Err(self.invalid(value.span(), &key, message));
                        }
                    }
                }
            }
        }
        Ok(style)
    }

    fn colour(&self, key: &str, value: &Spanned<DeValue<'_>>) -> Result<Color, ThemeError> {
        let parsed = match value.get_ref() {
            DeValue::String(text) => parse_colour(text),
            DeValue::Integer(int) => u8::from_str_radix(int.as_str(), int.radix())
                .map(Color::Indexed)
                .map_err(|_| "a colour index is from 0 to 255".to_owned()),
            _ => Err(String::new()),
        };
        parsed.map_err(|reason| {
            let found = self.found(value);
            let reason = if reason.is_empty() {
                String::new()
            } else {
                format!(" ({reason})")
            };
            let names = names(&COLOUR_NAMES);
            let message = format!(
                "{found}{reason}, expected a colour: a name ({names}), \"#rrggbb\" or an index \
                 from 0 to 255"
            );
            self.invalid(value.span(), key, message)
        })
    }

    /// `found a string "purple"`: the type, and the text itself when it is short enough to
    /// quote on one line.
    fn found(&self, value: &Spanned<DeValue<'_>>) -> String {
        let kind = value.get_ref().type_str();
        match self.text.get(value.span()) {
            Some(raw) if raw.len() <= 40 && !raw.contains('\n') && !raw.starts_with('[') => {
                format!("found {kind} {raw}")
            }
            _ => format!("found {kind}"),
        }
    }

    fn invalid(&self, span: Range<usize>, key: &str, message: String) -> ThemeError {
        ThemeError::Invalid {
            at: self.at(span.start, Some(key.to_owned())),
            message,
        }
    }

    fn at(&self, offset: usize, key: Option<String>) -> ThemeLocation {
        let (line, column) = self.position(offset);
        ThemeLocation {
            origin: self.origin.to_owned(),
            line,
            column,
            key,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    fn position(&self, offset: usize) -> (u32, u32) {
        crate::config::location::line_column(self.text, offset)
    }
}

/// A colour string: a name (any case), `#rrggbb`, or an index written as digits. The reason
/// is empty when the text is simply not a colour, so the caller's list of forms says it all.
fn parse_colour(text: &str) -> Result<Color, String> {
    if let Some(hex) = text.strip_prefix('#') {
        if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("`#` takes exactly six hex digits".to_owned());
        }
        let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or_default();
        return Ok(Color::Rgb(channel(0), channel(2), channel(4)));
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse()
            .map(Color::Indexed)
            .map_err(|_| "a colour index is from 0 to 255".to_owned());
    }
    COLOUR_NAMES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .map(|(_, colour)| *colour)
        .ok_or_else(String::new)
}

/// Entries in the order they appear in the file, so the first problem reported is the first
/// one an operator reading top to bottom would meet (the parsed map itself is sorted by key).
fn in_file_order<'t, 'i>(
    table: &'t DeTable<'i>,
) -> Vec<(&'t Spanned<DeString<'i>>, &'t Spanned<DeValue<'i>>)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

fn names<T>(list: &[(&str, T)]) -> String {
    list.iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}
