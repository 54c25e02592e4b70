//! Values quoted in messages: cut, so that a message stays readable whatever the value.

/// Longest text quoted in a message, in characters: a value can be any length, the message
/// must not be.
const QUOTE_LIMIT: usize = 60;

/// `text` in quotes (escaped as `{:?}` does), cut to [`QUOTE_LIMIT`] characters.
#[must_use]
pub fn quoted(text: &str) -> String {
    if text.chars().count() <= QUOTE_LIMIT {
        return format!("{text:?}");
    }
    let cut: String = text.chars().take(QUOTE_LIMIT - 3).collect();
    format!("{cut:?}...")
}

/// `text` cut to [`QUOTE_LIMIT`] characters, `...` marking the cut, for messages that quote it
/// themselves.
#[must_use]
pub fn excerpt(text: &str) -> String {
    if text.chars().count() <= QUOTE_LIMIT {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(QUOTE_LIMIT - 3).collect();
    cut.push_str("...");
    cut
}
