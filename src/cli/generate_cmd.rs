//! `rwtop generate`: the man pages and the shells' completions, generated from the clap
//! definitions so they cannot drift from the command line. Hidden from `--help`: it is for
//! packagers (`scripts/package` writes them into the Debian package).

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Asset {
    /// The man pages, roff, section 1: `rwtop.1` and `rwtop-<command>.1` for each command.
    Man,
    Bash,
    Zsh,
    Fish,
}

pub fn run(what: Asset, out: Option<&Path>) -> anyhow::Result<()> {
    let mut command = super::Cli::command();
    let shell = match what {
        Asset::Man => {
            let dir = out.ok_or_else(|| {
                anyhow::anyhow!("rwtop generate man needs --out DIR, the folder for the pages")
            })?;
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
            clap_mangen::generate_to(command, dir).map_err(|e| {
                anyhow::anyhow!("cannot write the man pages into {}: {e}", dir.display())
            })?;
            return Ok(());
        }
        Asset::Bash => clap_complete::Shell::Bash,
        Asset::Zsh => clap_complete::Shell::Zsh,
        Asset::Fish => clap_complete::Shell::Fish,
    };
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut command, "rwtop", &mut text);
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&text).and_then(|()| stdout.flush()) {
        // A reader that stopped early (`| head`) is not an error of ours.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::{Asset, run};

    /// One page for rwtop and one per command shown in `--help`, none for hidden ones; each
    /// page names its command.
    #[test]
    fn the_man_pages_cover_the_commands() {
        let dir = tempfile::tempdir().unwrap();
        run(Asset::Man, Some(dir.path())).unwrap();
        let page = |name: &str| std::fs::read_to_string(dir.path().join(name));
        let top = page("rwtop.1").unwrap();
        assert!(
            top.contains(".TH rwtop 1"),
            "{}",
            &top[..200.min(top.len())]
        );
        for name in ["demo", "serve", "lint", "sandbox", "report"] {
            assert!(top.contains(&format!("rwtop\\-{name}")), "{name}");
            let own = page(&format!("rwtop-{name}.1")).unwrap();
            assert!(own.contains(&format!(".TH rwtop-{name} 1")), "{name}");
        }
        assert!(page("rwtop-generate.1").is_err());
        let err = run(Asset::Man, None).unwrap_err().to_string();
        assert!(err.contains("--out DIR"), "{err}");
    }
}
