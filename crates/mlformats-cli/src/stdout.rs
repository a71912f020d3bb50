//! `-` as an output: standard output.

use std::io::{IsTerminal, Write};
use std::path::Path;

use mlformats::Format;

use crate::failure::Failure;

/// True when `path` is `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// The format `convert IN - ...` writes: `--to` is needed (`-` has no
/// extension), and a binary format is not written to a terminal (as `gzip`
/// refuses to).
pub fn check(to: Option<Format>) -> Result<Format, Failure> {
    let Some(format) = to else {
        return Err(Failure::usage(
            Path::new("-"),
            format!(
                "standard output has no extension to tell the format from; give --to FORMAT (one of: {})",
                Format::names().join(", ")
            ),
        ));
    };
    if format != Format::NnablaNntxt && std::io::stdout().is_terminal() {
        return Err(Failure::usage(
            Path::new("-"),
            format!(
                "standard output is a terminal: {format} is binary; redirect it to a file or a pipe"
            ),
        ));
    }
    Ok(format)
}

/// Standard output, to write a file's bytes to: its descriptor itself on
/// Unix (unbuffered, so copying a large file to it is one `splice` or
/// `copy_file_range` where the kernel can), else the locked handle.
pub fn writer() -> Box<dyn Write> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
            return Box::new(std::fs::File::from(fd));
        }
    }
    Box::new(std::io::stdout().lock())
}
