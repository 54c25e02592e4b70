//! Writing command output: a reader that goes away (`rwtop ... | head`) ends the output quietly
//! instead of panicking the way `println!` does.

use std::io::{ErrorKind, Write};

pub fn emit(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
