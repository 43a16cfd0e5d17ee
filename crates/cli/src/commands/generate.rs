//! `pauselab generate`: the man pages and shell completions, made from the command-line
//! definition itself so they can never disagree with `--help`. Packages run it at build
//! time (`make package`); users of the bare binary can run it too. Hidden from `--help`,
//! the man pages and the completions: it is plumbing, not something to look for there.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap_complete::Shell;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(clap::Subcommand)]
enum What {
    /// Write pauselab.1 and one page per subcommand (pauselab-analyze.1, ...) into DIR
    Man {
        /// Directory to write the pages into (created if missing)
        dir: PathBuf,
    },
    /// Print the completion script for SHELL on standard output
    Completion {
        /// bash, zsh, fish, elvish or powershell
        shell: Shell,
    },
}

/// `cli` is the whole command line definition (`Cli::command()`), whose name is the
/// installed binary's.
pub fn run(args: Args, mut cli: clap::Command) -> anyhow::Result<ExitCode> {
    match args.what {
        What::Man { dir } => {
            pauselab_pause::output::create_dir(&dir)
                .with_context(|| format!("{}: cannot write man pages there", dir.display()))?;
            let mut cli = cli.disable_help_subcommand(true);
            cli.build();
            write_man_pages(&cli, &dir)?;
        }
        What::Completion { shell } => {
            let name = cli.get_name().to_string();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut cli, name, &mut script);
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&script).and_then(|_| stdout.flush())?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One page per command and visible subcommand, as `clap_mangen::generate_to` names them,
/// each created without following a planted link (`pauselab_pause::output`).
fn write_man_pages(cmd: &clap::Command, dir: &std::path::Path) -> anyhow::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_man_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(cmd.clone());
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)?;
    pauselab_pause::output::write_file(&path, &page)
        .with_context(|| format!("{}: cannot write the man page", path.display()))
}
