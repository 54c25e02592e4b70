//! Where in a TOML file something is, for error messages that name the line and the key: config
//! files and theme files share it.

/// 1-based line and column (in characters) of a byte offset into `text`: how config and theme
/// errors point at the mistake.
#[must_use]
pub fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    let small = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    (small(line), small(column))
}

/// The dotted key a 1-based line defines, read from the text itself because the toml crate
/// keeps the key path of an error private; on a `[table]` line it is the table.
#[must_use]
pub fn key_on_line(text: &str, line: u32) -> Option<String> {
    let mut table: Option<String> = None;
    for (index, raw) in text.split('\n').enumerate() {
        let trimmed = raw.trim();
        if let Some(header) = trimmed.strip_prefix('[') {
            let header = header.trim_start_matches('[');
            let end = header.find(']').unwrap_or(header.len());
            table = Some(unquote(&header[..end]));
        } else if index + 1 == line as usize {
            if trimmed.starts_with('#') {
                return table;
            }
            let key = trimmed.split_once('=').map(|(key, _)| unquote(key));
            return match (table, key) {
                (Some(table), Some(key)) => Some(format!("{table}.{key}")),
                (table, key) => key.or(table),
            };
        }
        if index + 1 == line as usize {
            return table;
        }
    }
    table
}

fn unquote(key: &str) -> String {
    key.trim()
        .split('.')
        .map(|part| part.trim().trim_matches(|c| c == '"' || c == '\''))
        .collect::<Vec<_>>()
        .join(".")
}

/// A message from a library that may quote a whole value (serde's `invalid type: string
/// "..."`), cut in the middle past 400 characters: its start says what is wrong and its end
/// what was expected.
pub(crate) fn shorten(message: &str) -> String {
    let count = message.chars().count();
    if count <= 400 {
        return message.to_owned();
    }
    let head: String = message.chars().take(150).collect();
    let tail: String = message.chars().skip(count - 200).collect();
    format!("{head} ... {tail}")
}
