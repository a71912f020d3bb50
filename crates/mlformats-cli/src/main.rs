//! The `mlformats` command: [`mlformats_cli::main`].

fn main() -> std::process::ExitCode {
    mlformats_cli::main()
}
