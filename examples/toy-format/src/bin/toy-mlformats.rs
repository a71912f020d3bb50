//! The `mlformats` command with the toy format added: register it, then run
//! the command (`mlformats_cli::main`). Every subcommand, `--to`, `--format`
//! and detection then know `.toyt` files.

fn main() -> std::process::ExitCode {
    if let Err(e) = toy_format::register() {
        eprintln!("error: registering the toy format: {e}");
        return std::process::ExitCode::from(1);
    }
    mlformats_cli::main()
}
