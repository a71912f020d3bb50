//! Opens a file by slices ([`mlformats::Document::open_at`]) and
//! reads every tensor twice in 4 MiB slices, as the viewer's statistics
//! do, printing the heap in use and its peak (a counting allocator) after
//! each tensor:
//!
//! ```sh
//! cargo run -p mlformats --example slice_memory -- FILE
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: forwarded as the caller gave it.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded as the caller gave it.
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

const MIB: f64 = (1u64 << 20) as f64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: slice_memory FILE")?;
    let file = std::fs::File::open(&path)?;
    let opts = mlformats::ReadOptions::default();
    let index = mlformats::Document::open_at(file, Some(path.as_ref()), None, &opts)?;
    if index.was_read_whole() {
        return Err("this file is read whole, not by slices".into());
    }
    println!(
        "opened: {:.1} MiB in use, peak {:.1} MiB",
        LIVE.load(Relaxed) as f64 / MIB,
        PEAK.load(Relaxed) as f64 / MIB
    );
    let mut buf = Vec::new();
    for (i, t) in index.entries().iter().enumerate() {
        let step = ((4u64 << 20) / t.dtype().size().max(1) as u64).max(1024);
        for _ in 0..2 {
            let mut at = 0;
            while at < t.numel() {
                index.read_elements(i, at, step, &mut buf)?;
                at += step;
            }
        }
        println!(
            "{}: {:.1} MiB in use, peak {:.1} MiB",
            t.name(),
            LIVE.load(Relaxed) as f64 / MIB,
            PEAK.load(Relaxed) as f64 / MIB
        );
    }
    Ok(())
}
