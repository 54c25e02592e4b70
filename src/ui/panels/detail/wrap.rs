//! Word wrap and cutting for the panes' text: tokens that stay whole, continuation lines
//! indented, one-line entries ended with `…`. The detail, alerts and test-reads panes share it.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The first `max` characters and `…` when there were more.
pub(super) fn abbreviate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", text.get(..cut).unwrap_or(text)),
        None => text.to_owned(),
    }
}

fn char_width(c: char) -> usize {
    let mut buf = [0_u8; 4];
    Span::raw(&*c.encode_utf8(&mut buf)).width()
}

/// `text` cut to `width` columns, ending in `…` when cut: for one-line entries whose end is
/// less important than the rows below them.
pub(crate) fn ellipsize(text: &str, width: usize) -> String {
    if Span::raw(text).width() <= width {
        return text.to_owned();
    }
    let mut used = 0_usize;
    let mut out = String::new();
    for c in text.chars() {
        let w = char_width(c);
        if used.saturating_add(w) > width.saturating_sub(1) {
            break;
        }
        used = used.saturating_add(w);
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// A unit of wrapped text, kept on one line unless longer than a whole line: a word, or an
/// alert's `name=value` pair in two styles.
#[derive(Clone)]
pub(crate) struct Token {
    parts: Vec<(String, Style)>,
    /// Joined to the previous token without a space (pieces of a GTID set).
    glued: bool,
}

impl Token {
    pub(crate) fn new(text: impl Into<String>, style: Style) -> Self {
        Self {
            parts: vec![(text.into(), style)],
            glued: false,
        }
    }

    #[must_use]
    pub(crate) fn and(mut self, text: impl Into<String>, style: Style) -> Self {
        self.parts.push((text.into(), style));
        self
    }

    #[must_use]
    pub(crate) fn glued(mut self) -> Self {
        self.glued = true;
        self
    }

    fn width(&self) -> usize {
        self.parts
            .iter()
            .map(|(text, _)| Span::raw(text.as_str()).width())
            .sum()
    }

    pub(crate) fn into_spans(self) -> impl Iterator<Item = Span<'static>> {
        self.parts
            .into_iter()
            .map(|(text, style)| Span::styled(text, style))
    }

    pub(super) fn spans_with(self, last: Span<'static>) -> Vec<Span<'static>> {
        self.into_spans().chain(std::iter::once(last)).collect()
    }
}

/// The words of `text`, each a token in `style`.
pub(crate) fn words(text: &str, style: Style) -> impl Iterator<Item = Token> + '_ {
    text.split_whitespace().map(move |w| Token::new(w, style))
}

/// Greedy word wrap to `width` columns; continuation lines start `indent` columns in, and a
/// token longer than a line is broken wherever the line ends.
pub(crate) fn wrap(
    tokens: impl IntoIterator<Item = Token>,
    width: usize,
    indent: usize,
) -> Vec<Line<'static>> {
    if width == 0 {
        return Vec::new();
    }
    let mut w = Wrapper {
        width,
        // Continuation lines must keep at least one column for text.
        indent: if indent < width { indent } else { 0 },
        lines: Vec::new(),
        line: Vec::new(),
        used: 0,
        empty: true,
    };
    for token in tokens {
        let space = usize::from(!token.glued && !w.empty);
        if !w.empty && w.used.saturating_add(space).saturating_add(token.width()) > width {
            w.newline();
        } else if space == 1 {
            w.push(' ', Style::new());
        }
        for (text, style) in &token.parts {
            for c in text.chars() {
                w.push(c, *style);
            }
        }
    }
    if !w.empty {
        w.newline();
    }
    w.lines
}

struct Wrapper {
    width: usize,
    indent: usize,
    lines: Vec<Line<'static>>,
    line: Vec<(String, Style)>,
    /// Columns taken on the current line, indent included.
    used: usize,
    /// Nothing but the indent on the current line yet.
    empty: bool,
}

impl Wrapper {
    fn push(&mut self, c: char, style: Style) {
        let w = char_width(c);
        if !self.empty && self.used.saturating_add(w) > self.width {
            self.newline();
        }
        match self.line.last_mut() {
            Some((text, s)) if *s == style => text.push(c),
            _ => self.line.push((c.to_string(), style)),
        }
        self.used = self.used.saturating_add(w);
        self.empty = false;
    }

    fn newline(&mut self) {
        let spans: Vec<Span<'static>> = std::mem::take(&mut self.line)
            .into_iter()
            .map(|(text, style)| Span::styled(text, style))
            .collect();
        self.lines.push(Line::from(spans));
        if self.indent > 0 {
            self.line.push((" ".repeat(self.indent), Style::new()));
        }
        self.used = self.indent;
        self.empty = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_tokens_whole_and_breaks_only_overlong_ones() {
        let s = Style::new();
        let lines = wrap(words("aa bbb cc dddddddddd", s), 6, 2);
        let got: Vec<String> = lines.iter().map(ToString::to_string).collect();
        assert_eq!(got, ["aa bbb", "  cc", "  dddd", "  dddd", "  dd"]);
        assert!(wrap(words("x", s), 0, 2).is_empty());
        let glued = [Token::new("a,", s), Token::new("b", s).glued()];
        assert_eq!(
            wrap(glued, 5, 0)
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["a,b"]
        );
        assert_eq!(abbreviate("abcdef", 3), "abc…");
        assert_eq!(abbreviate("abc", 3), "abc");
        assert_eq!(ellipsize("abcdef", 4), "abc…");
        assert_eq!(ellipsize("abcdef", 0), "");
    }
}
