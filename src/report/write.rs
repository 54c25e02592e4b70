//! Reports reach their file whole or not at all: written to a temporary file beside it, then
//! renamed over it, so a full disk or a killed rwtop never leaves half a report behind.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The two forms of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
}

impl Format {
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Self::Markdown => "md",
            Self::Html => "html",
        }
    }

    /// The format a file name asks for: `.html`/`.htm` is HTML, anything else Markdown.
    #[must_use]
    pub fn of_path(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm") => {
                Self::Html
            }
            _ => Self::Markdown,
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "md" | "markdown" => Ok(Self::Markdown),
            "html" => Ok(Self::Html),
            other => Err(format!(
                "unknown report format {}: expected md or html",
                crate::units::quoted(other)
            )),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(
        "cannot write the report to {}: {error}; check that the folder exists and is \
         writable, or give another path ({hint})",
        path.display()
    )]
    Write {
        path: PathBuf,
        error: std::io::Error,
        /// Where the path came from: `--output`, `[report] dir`.
        hint: &'static str,
    },
}

/// Writes `text` to `path` through a temporary file in the same folder and a rename; on any
/// failure the temporary file is removed and `path` is left as it was.
pub fn write_atomically(path: &Path, text: &str, hint: &'static str) -> Result<(), ReportError> {
    let fail = |error| ReportError::Write {
        path: path.to_owned(),
        error,
        hint,
    };
    if path.is_dir() {
        return Err(fail(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a folder",
        )));
    }
    let name = path
        .file_name()
        .ok_or_else(|| fail(std::io::Error::other("it names no file")))?;
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let temp = folder.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(fail(error));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_lands_whole_and_a_bad_path_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.md");
        write_atomically(&path, "# one\n", "--output").unwrap();
        write_atomically(&path, "# two\n", "--output").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# two\n");
        let entries = || std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(entries(), 1, "no temporary file left");

        let err = write_atomically(dir.path(), "x", "--output").unwrap_err();
        assert!(err.to_string().contains("it is a folder"), "{err}");
        let missing = dir.path().join("no/such/r.md");
        let err = write_atomically(&missing, "x", "--output").unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "cannot write the report to {}: No such file or directory",
                missing.display()
            )),
            "{err}"
        );
        assert_eq!(entries(), 1);
    }

    #[test]
    fn formats_by_name_and_by_extension() {
        assert_eq!("md".parse(), Ok(Format::Markdown));
        assert_eq!("html".parse(), Ok(Format::Html));
        assert!(
            "pdf"
                .parse::<Format>()
                .unwrap_err()
                .contains("expected md or html")
        );
        assert_eq!(Format::of_path(Path::new("a/b.HTML")), Format::Html);
        assert_eq!(Format::of_path(Path::new("b.txt")), Format::Markdown);
    }
}
