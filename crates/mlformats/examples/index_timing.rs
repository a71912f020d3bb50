//! Times opening a file by random access (`Document::open_at`) and reading
//! its first tensor by slices: the first slice, a slice deep in it, the
//! whole tensor front to back in 4 MiB slices, then slices deep in it again.
//! A measure to run by hand, not a test (times of a debug build are
//! slower than a release build's).
//!
//! ```text
//! cargo run -p mlformats --example index_timing -- FILE
//! ```

use std::time::Instant;

use mlformats::Document;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: index_timing FILE")?;
    let file = std::fs::File::open(&path)?;
    let t = Instant::now();
    let index = Document::open_at(file, Some(path.as_ref()), None, &Default::default())?;
    if index.was_read_whole() {
        return Err("not a file read by slices".into());
    }
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    println!(
        "open: {:.1} ms ({} tensors, {} elements)",
        ms(t),
        index.len(),
        index.summary().parameters
    );
    let Some(first) = index.entries().first() else {
        return Ok(());
    };
    let n = first.numel();
    let mut buf = Vec::new();
    let t = Instant::now();
    index.read_elements(0, 0, 100, &mut buf)?;
    println!("first read of tensor 0 (100 values): {:.1} ms", ms(t));
    let t = Instant::now();
    index.read_elements(0, n * 9 / 10, 100, &mut buf)?;
    println!("100 values at 90%: {:.1} ms", ms(t));
    let step = ((4u64 << 20) / first.dtype().size() as u64).max(1);
    let t = Instant::now();
    let mut at = 0;
    while at < n {
        index.read_elements(0, at, step, &mut buf)?;
        at += step;
    }
    println!("tensor 0 front to back ({n} values): {:.1} ms", ms(t));
    for f in [0.77, 0.31, 0.999] {
        let t = Instant::now();
        index.read_elements(0, (n as f64 * f) as u64, 100, &mut buf)?;
        println!("100 values at {:.1}%: {:.2} ms", f * 100.0, ms(t));
    }
    if let Some(last) = index.len().checked_sub(1) {
        let t = Instant::now();
        index.read_elements(last, 0, 100, &mut buf)?;
        println!(
            "first read of the last tensor (100 values): {:.1} ms",
            ms(t)
        );
    }
    Ok(())
}
