//! The streaming writers hold one tensor at a time: writing 32 tensors of
//! 1 MiB, each made just before it is written and dropped after, never has
//! much more than one tensor allocated (a global allocator counts bytes).
//! The output goes to a sink that keeps nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Seek, SeekFrom, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use nnp_archive::nnabla_proto::NNablaProtoBuf;
use nnp_archive::{NnpStreamWriter, ParamFormat, ParamSpec, WriteOptions, h5};
use tensor_core::{DType, MemoryOrder, Tensor};

struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: `GlobalAlloc` is an unsafe trait; every call is forwarded to
// `System` unchanged and the counters only observe sizes, so `System`'s
// guarantees carry over.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = NOW.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        NOW.fetch_sub(l.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static A: Counting = Counting;

/// One test at a time (the counters are global).
static SERIAL: Mutex<()> = Mutex::new(());

/// Keeps nothing; seeks like a file of the bytes written.
#[derive(Default)]
struct Sink {
    pos: u64,
    len: u64,
}

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.pos += b.len() as u64;
        self.len = self.len.max(self.pos);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Seek for Sink {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        self.pos = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => self.len.checked_add_signed(d).unwrap(),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d).unwrap(),
        };
        Ok(self.pos)
    }
}

const N: usize = 32;
const SIDE: usize = 512; // 512 × 512 f32 = 1 MiB
const MIB: usize = 1 << 20;

fn specs() -> Vec<ParamSpec> {
    (0..N)
        .map(|i| ParamSpec::new(format!("layer{i:02}/W"), DType::F32, [SIDE, SIDE], true))
        .collect()
}

fn make(i: usize, order: MemoryOrder) -> Tensor<'static> {
    let bytes: Vec<u8> = (0..SIDE * SIDE)
        .flat_map(|j| ((i * 7 + j) as f32).to_le_bytes())
        .collect();
    Tensor::with_order(DType::F32, [SIDE, SIDE], order, bytes).unwrap()
}

/// Peak bytes allocated above what was allocated before `f`.
fn peak_of(f: impl FnOnce()) -> usize {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    f();
    PEAK.load(Ordering::Relaxed) - base
}

#[test]
fn h5_writer_holds_one_tensor() {
    let _g = SERIAL.lock().unwrap();
    let specs = specs();
    let peak = peak_of(|| {
        let mut w = h5::StreamWriter::new(Sink::default(), &specs).unwrap();
        for i in 0..N {
            let t = make(i, MemoryOrder::RowMajor);
            w.write_data(&t).unwrap();
        }
        let s = w.finish().unwrap();
        assert!(s.len > (N * MIB) as u64);
    });
    // one 1 MiB tensor plus metadata
    assert!(peak < 2 * MIB, "peak {peak} bytes for {N} MiB of data");
    // a column-major tensor is reordered into one more buffer
    let peak = peak_of(|| {
        let mut w = h5::StreamWriter::new(Sink::default(), &specs).unwrap();
        for i in 0..N {
            w.write_data(&make(i, MemoryOrder::ColumnMajor)).unwrap();
        }
        w.finish().unwrap();
    });
    assert!(peak < 3 * MIB, "peak {peak} bytes for {N} MiB of data");
}

#[test]
fn nnp_writer_holds_one_tensor() {
    let _g = SERIAL.lock().unwrap();
    let specs = specs();
    // The first writer builds the protobuf descriptor pool once (about
    // 2 MB, whatever the data); measure after it.
    NnpStreamWriter::new(
        Sink::default(),
        &NNablaProtoBuf::default(),
        &[],
        &WriteOptions::default(),
    )
    .unwrap();
    for format in [ParamFormat::H5, ParamFormat::Protobuf] {
        let peak = peak_of(|| {
            let opts = WriteOptions::default().with_param_format(format);
            let model = NNablaProtoBuf::default();
            let mut w = NnpStreamWriter::new(Sink::default(), &model, &specs, &opts).unwrap();
            for i in 0..N {
                w.write_param(&make(i, MemoryOrder::RowMajor)).unwrap();
            }
            let s = w.finish(&[]).unwrap();
            assert!(s.len > (N * MIB) as u64);
        });
        assert!(
            peak < 2 * MIB,
            "{format:?}: peak {peak} bytes for {N} MiB of data"
        );
    }
}
