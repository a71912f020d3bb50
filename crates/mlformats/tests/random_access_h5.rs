//! The random-access path (a `Document` opened at a `ReadAt`) on NNabla
//! HDF5 parameters against the whole-file path (`Document`): every `.h5`
//! of `testdata/`, each `.params` of `testdata/` saved as `.h5` by the
//! library, every `.nnp` of `testdata/` whose `parameter.h5` is stored or deflated, and
//! the `.nnp` of `testdata/nnabla` rewritten by the library with a stored
//! `parameter.h5`: the same names, dtypes, shapes, `need_grad`, bytes and
//! graph. On truncated and byte-mutated copies (deterministic: a stride
//! over cut points and structure bytes, on a sample of the files): an
//! error exactly where the whole-file path has one, and never a panic.
//! NNabla `.h5` keeps two readers (`nnp-archive`/`hdf5-pure` whole,
//! `random_access/{h5,h5chunks,deflate}.rs` by slices), so these
//! comparisons stay; the samples are small because each damaged copy of a
//! chunked file costs tens of milliseconds in a debug build.
#![cfg(all(feature = "cvm", feature = "nnp"))]

use std::io::Cursor;
use std::path::{Path, PathBuf};

use mlformats::{Document, Format};

mod common;
use common::{Counting, by_slices, read_tensor};
use std::sync::atomic::Ordering::Relaxed;

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// True when the archive `bytes` has an `.h5` parameter member (stored or
/// deflated).
fn has_h5(bytes: &[u8]) -> bool {
    let Ok(members) = nnp_archive::archive::list(Cursor::new(bytes), &Default::default()) else {
        return false;
    };
    members
        .iter()
        .any(|m| m.kind == nnp_archive::MemberKind::H5)
}

/// The `.h5` files: those of testdata/ and each `.params` saved as `.h5`.
fn h5_samples(tmp: &Path) -> Vec<(String, Vec<u8>)> {
    let mut h5 = Vec::new();
    files(&testdata(), "h5", &mut h5);
    h5.sort();
    let mut out: Vec<(String, Vec<u8>)> = h5
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(p).unwrap())
        })
        .collect();
    let mut params = Vec::new();
    files(&testdata(), "params", &mut params);
    params.sort();
    for p in params {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if let Ok(doc) = Document::open(&p) {
            let out_path = tmp.join(format!("{name}.h5"));
            if mlformats::save(&out_path, doc.tensors()).is_ok() {
                out.push((format!("{name}.h5"), std::fs::read(&out_path).unwrap()));
            }
        }
    }
    assert!(out.len() >= 8, "{} .h5 samples", out.len());
    out
}

/// The `.nnp` of testdata/ with a stored or deflated `parameter.h5` (every one of
/// testdata/nnabla, every 16th of the others: written by one exporter,
/// they share a layout), and those of testdata/nnabla written again by the
/// library (its own `.h5` layout).
fn nnp_samples() -> Vec<(String, Vec<u8>)> {
    let mut all = Vec::new();
    files(&testdata(), "nnp", &mut all);
    all.sort();
    let (own, other): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|p| p.starts_with(testdata().join("nnabla")));
    let mut out = Vec::new();
    for p in own.iter().chain(other.iter().step_by(16)) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(p).unwrap();
        if !has_h5(&bytes) {
            continue;
        }
        out.push((name, bytes));
    }
    for p in &own {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(p).unwrap();
        let opts =
            nnp_archive::WriteOptions::default().with_param_format(nnp_archive::ParamFormat::H5);
        if let Ok(model) = nnp_archive::Nnp::parse(&bytes)
            && let Ok(w) = model.write(Cursor::new(Vec::new()), &opts)
        {
            out.push((format!("{name}.h5.nnp"), w.into_inner()));
        }
    }
    out
}

/// Both paths on `bytes`: equal when both read it, both errors when the
/// whole-file path refuses it. Returns whether it was read by slices.
fn same(name: &str, bytes: &[u8]) -> bool {
    check(name, bytes, false)
}

/// [`same`]; `thorough`: every tensor also read in slices of odd sizes,
/// front to back and back to front (about 200 reads each way a size: one
/// element at a time over a chunked dataset took minutes in a debug
/// build), and in steps of a seventh, every element.
fn check(name: &str, bytes: &[u8], thorough: bool) -> bool {
    let path = Path::new(name);
    let whole = Document::from_bytes(bytes.to_vec(), Some(path), None);
    let index = by_slices(bytes, Some(path), &Default::default());
    match (whole, index) {
        (Ok(doc), Ok(Some(index))) => {
            assert!(
                matches!(doc.format(), Format::NnablaH5 | Format::NnablaNnp),
                "{name}"
            );
            let nodes = |g: Option<&tensor_core::graph::ModelGraph>| {
                g.map(|g| g.graphs.iter().map(|g| g.nodes.len()).collect::<Vec<_>>())
            };
            assert_eq!(nodes(index.graph()), nodes(doc.graph()), "{name}");
            assert_eq!(index.format(), doc.format(), "{name}");
            assert_eq!(index.file_size(), doc.file_size(), "{name}");
            assert_eq!(index.metadata(), doc.metadata(), "{name}");
            assert_eq!(index.summary(), doc.summary(), "{name}");
            assert_eq!(index.len(), doc.len(), "{name}");
            for (i, (t, s)) in index.entries().iter().zip(doc.stored()).enumerate() {
                let want = doc.tensor(&s.name).unwrap();
                assert_eq!(t.name(), s.name, "{name}");
                assert_eq!(t.stored().stored_name, s.stored_name, "{name}");
                assert_eq!(t.stored().extras, s.extras, "{name}");
                assert_eq!(t.dims(), &s.shape[..], "{name}");
                assert_eq!(t.dtype(), want.dtype(), "{name}");
                assert_eq!(t.order(), want.order(), "{name}");
                assert_eq!(t.byte_len(), want.bytes().len() as u64, "{name}");
                let got = read_tensor(&index, i).unwrap();
                assert_eq!(got.bytes(), want.bytes(), "{name} {}", s.name);
                assert_eq!(got.dims(), want.dims(), "{name} {}", s.name);
                let n = t.numel();
                let mut buf = Vec::new();
                let size = t.dtype().size();
                let mut slice = |start: u64, count: u64| {
                    let part = index.read_elements(i, start, count, &mut buf).unwrap();
                    let from = (start.min(n) as usize) * size;
                    let to = ((start + count).min(n) as usize) * size;
                    assert_eq!(
                        part.bytes(),
                        &want.bytes()[from..to],
                        "{name} {} from {start}, {count}",
                        s.name
                    );
                };
                slice(n / 3, 5);
                if !thorough {
                    continue;
                }
                // odd offsets and counts, front to back and back to front
                for count in [1, 3, 7, 13, n / 7 + 1] {
                    let stride = count.max(n / 200);
                    let mut at = 0;
                    while at < n {
                        slice(at, count);
                        at += stride;
                    }
                    let mut end = n;
                    while end > 0 {
                        let start = end.saturating_sub(count + 2);
                        slice(start, end - start);
                        end = end.saturating_sub(stride.max(count + 2));
                    }
                }
                slice(n, 3);
            }
            true
        }
        // `None` sends the caller to the whole-file path, which refuses it
        (Err(_), Err(_) | Ok(None)) => false,
        // chunks are decoded when read: a broken one fails there
        (Err(e), Ok(Some(index))) if chunked_or_compact(&index) => {
            let failed = (0..index.len()).any(|i| read_tensor(&index, i).is_err());
            assert!(
                failed,
                "{name}: the whole-file path says {e}, every tensor reads"
            );
            false
        }
        (Err(e), Ok(i)) => panic!("{name}: the whole-file path says {e}, the index {i:?}"),
        (Ok(doc), Ok(None)) => {
            // a chunked/compact/big-endian dataset, a solver state, or a
            // deflated member: read whole
            assert!(
                matches!(doc.format(), Format::NnablaH5 | Format::NnablaNnp),
                "{name}: {:?} not read by random access",
                doc.format()
            );
            false
        }
        (Ok(_), Err(e)) => panic!("{name}: only the random-access path refuses it: {e}"),
    }
}

#[test]
fn h5_by_slices_reads_what_the_whole_file_path_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let mut read = 0;
    for (name, bytes) in h5_samples(tmp.path()) {
        let ok = same(&name, &bytes);
        // every parameter file of testdata/ and of the library is read by
        // slices (the fuzz regressions and testdata/hostile's chunk that
        // inflates past its size and chunk placed outside its dataset are
        // refused files)
        let refused = [
            "chunk_overflow.h5",
            "chunk_far.h5",
            "chunk_offset_overflow.h5",
        ];
        if !name.starts_with("fixed_point") && !refused.contains(&name.as_str()) {
            assert!(ok, "{name}: not read by random access");
        }
        read += ok as usize;
    }
    assert!(read >= 8, "{read} .h5 read");
    let mut nnp = 0;
    for (name, bytes) in nnp_samples() {
        // (chunked datasets in a deflated member: parsed whole, held)
        assert!(same(&name, &bytes), "{name}: read by random access?");
        nnp += 1;
    }
    assert!(nnp >= 40, "{nnp} .nnp with a parameter.h5 read");
}

/// True when some tensor of `index` is not one range of the file whose
/// bytes read (as a chunked dataset is not).
fn chunked_or_compact(index: &Document) -> bool {
    index
        .entries()
        .iter()
        .any(|t| t.offset() == 0 && t.byte_len() > 0)
        || (0..index.len()).any(|i| read_tensor(index, i).is_err())
}

/// The fixtures of testdata/nnabla/h5chunks (chunked, compact and
/// big-endian datasets, made by its make.py with h5py): each read by slices.
#[test]
fn chunked_compact_and_big_endian_datasets_are_read_by_slices() {
    let dir = testdata().join("nnabla/h5chunks");
    let mut names = Vec::new();
    for ext in ["h5", "nnp"] {
        files(&dir, ext, &mut names);
    }
    names.sort();
    assert!(names.len() >= 5, "{names:?}");
    for (i, p) in names.iter().enumerate() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(p).unwrap();
        // a deflated member is inflated from its start for a read behind
        // the last: back-to-front reads of one element are quadratic there
        // (the deflated members' slices: `a_deflated_h5_member_is_read_by_slices`)
        let deflated = name.contains("deflated");
        // (chunked datasets in a deflated member: parsed whole, held)
        assert!(
            check(&name, &bytes, !deflated),
            "{name}: read by random access?"
        );
        if deflated {
            continue; // mutated in `a_deflated_h5_member_is_read_by_slices`
        }
        // and everything the structure says, mutated
        // (each damaged copy of these costs tens of milliseconds in a debug
        // build: the big-endian, chunked, compact and chunked-in-.nnp ones,
        // about 120 places each)
        if ![0, 1, 3, 6].contains(&i) {
            continue;
        }
        let step = (bytes.len() / 60).max(7);
        let cases = mutate(&name, &bytes, &positions(0, bytes.len(), 60, step));
        assert!(cases > 100, "{name}: {cases}");
    }
}

/// Deterministic mutations of `bytes`: truncations, single bytes flipped
/// in the structure (`at`), and runs of 0xff (huge claimed sizes).
fn mutate(name: &str, bytes: &[u8], at: &[usize]) -> usize {
    let len = bytes.len();
    let mut cases = 0;
    let mut cuts: Vec<usize> = (0..len.min(100)).step_by(5).collect();
    cuts.extend((0..len).step_by(len / 40 + 1));
    cuts.extend([len / 2, len.saturating_sub(1)]);
    for cut in cuts {
        same(name, &bytes[..cut]);
        cases += 1;
    }
    for &at in at {
        for x in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.to_vec();
            b[at] ^= x;
            same(name, &b);
            cases += 1;
        }
        if at % 8 == 0 {
            let mut b = bytes.to_vec();
            b[at..(at + 8).min(len)].fill(0xff);
            same(name, &b);
            cases += 1;
        }
    }
    cases
}

/// A deterministic spread of positions in `[start, end)`: the first
/// `dense` every byte, then every `step`-th.
fn positions(start: usize, end: usize, dense: usize, step: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (start..end.min(start + dense)).collect();
    v.extend((start + dense..end).step_by(step));
    v
}

#[test]
fn h5_by_slices_refuses_what_the_whole_file_path_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cases = 0;
    for (name, bytes) in h5_samples(tmp.path()).into_iter().step_by(4) {
        // the superblock and root, then the structure all along the file
        let step = (bytes.len() / 120).max(13);
        cases += mutate(&name, &bytes, &positions(0, bytes.len(), 100, step));
    }
    let nnp = nnp_samples();
    for (name, bytes) in nnp.iter().step_by(nnp.len() / 4 + 1) {
        let members =
            nnp_archive::archive::list(Cursor::new(&bytes[..]), &Default::default()).unwrap();
        let mut at: Vec<usize> = (bytes.len().saturating_sub(120)..bytes.len()).collect();
        for m in members {
            if m.kind == nnp_archive::MemberKind::H5 {
                let s = m.data_start as usize;
                let n = m.compressed_size as usize;
                at.extend(positions(s, s + n, 80, (n / 100).max(17)));
            }
        }
        cases += mutate(name, bytes, &at);
    }
    eprintln!("{cases} damaged copies");
    assert!(cases > 1500, "{cases}");
}

/// A chunk B-tree whose internal node lists itself as each of its
/// children (a cycle, 4^64 paths): refused, quickly, by a bounded walk.
#[test]
fn a_chunk_btree_cycle_is_refused() {
    let mut bytes =
        std::fs::read(testdata().join("nnabla/h5chunks/many_chunks_params.h5")).unwrap();
    let mut nodes = 0;
    let mut at = 0;
    while let Some(i) = bytes[at..].windows(4).position(|w| w == b"TREE") {
        let node = at + i;
        at = node + 4;
        // a raw-data chunk node (type 1) of level 1: its children after
        // the 24-byte header, each after a key of 8 + 8 * (rank + 1) bytes
        if bytes[node + 4] != 1 || bytes[node + 5] != 1 {
            continue;
        }
        let entries = u16::from_le_bytes([bytes[node + 6], bytes[node + 7]]) as usize;
        let key = 8 + 8 * 3;
        for e in 0..entries {
            let child = node + 24 + e * (key + 8) + key;
            bytes[child..child + 8].copy_from_slice(&(node as u64).to_le_bytes());
        }
        nodes += 1;
    }
    assert_eq!(nodes, 1);
    let path = Some(Path::new("x.h5"));
    match by_slices(&bytes[..], path, &Default::default()) {
        Err(e) => {
            let msg = mlformats::chain_message(&e);
            // (the walk's error, or the whole-file parse's where the
            // walk does not locate the dataset)
            assert!(
                msg.contains("chunk index") || msg.contains("chunk B-tree"),
                "{msg}"
            );
        }
        // the index `hdf5-pure` lists says so: the whole-file path refuses it
        Ok(None) => {
            let e = Document::from_bytes(bytes.clone(), path, None).unwrap_err();
            eprintln!("{}", mlformats::chain_message(&e));
        }
        Ok(Some(_)) => panic!("a cycle read"),
    }
}

/// A chunk B-tree made a chain of 62 internal nodes, each listing the next
/// as each of its 4 children (no cycle, 4^62 paths to the leaves): refused
/// by the bounded walk, quickly, not walked.
#[test]
fn a_chunk_btree_of_shared_nodes_is_refused() {
    let mut bytes =
        std::fs::read(testdata().join("nnabla/h5chunks/many_chunks_params.h5")).unwrap();
    let node = bytes.windows(6).position(|w| w == b"TREE\x01\x01").unwrap();
    let key = 8 + 8 * 3;
    let len = 24 + 4 * (key + 8) + key;
    let template = bytes[node..node + len].to_vec();
    // the dataset's layout message: the one place the root's address is
    let root = (node as u64).to_le_bytes();
    let refs: Vec<usize> = (0..bytes.len() - 8)
        .filter(|&i| bytes[i..i + 8] == root)
        .collect();
    assert_eq!(refs.len(), 1, "{refs:?}");
    let mut below = node as u64;
    for level in 2..=63u8 {
        let at = bytes.len() as u64;
        let mut n = template.clone();
        n[5] = level;
        n[8..24].fill(0xff);
        for e in 0..4 {
            let child = 24 + e * (key + 8) + key;
            n[child..child + 8].copy_from_slice(&below.to_le_bytes());
        }
        bytes.extend(n);
        below = at;
    }
    bytes[refs[0]..refs[0] + 8].copy_from_slice(&below.to_le_bytes());
    let path = Some(Path::new("x.h5"));
    let e = by_slices(&bytes[..], path, &Default::default()).unwrap_err();
    let msg = mlformats::chain_message(&e);
    assert!(msg.contains("chunk index"), "{msg}");
}

/// Each fixture of testdata/nnabla/h5chunks converted by slices
/// (`convert_sliced`) to every target that streams: the bytes converting the
/// whole file gives.
#[test]
fn chunked_files_convert_by_slices_like_the_whole_file() {
    let dir = testdata().join("nnabla/h5chunks");
    let mut names = Vec::new();
    for ext in ["h5", "nnp"] {
        files(&dir, ext, &mut names);
    }
    names.sort();
    let mut converted = 0;
    for p in &names {
        let name = Path::new(p.file_name().unwrap());
        let bytes = std::fs::read(p).unwrap();
        let index = by_slices(&bytes[..], Some(name), &Default::default()).unwrap();
        let Some(index) = index else {
            // chunked datasets in a deflated member: read whole
            assert_eq!(name, Path::new("mlp_chunked_deflated.nnp"));
            continue;
        };
        let doc = Document::from_bytes(bytes.clone(), Some(name), None).unwrap();
        for &target in mlformats::SLICED_TARGETS {
            for opts in [
                mlformats::ConvertOptions::new(),
                mlformats::ConvertOptions::new().dtype(mlformats::DType::F16),
            ] {
                let mut out = Cursor::new(Vec::new());
                let sliced = mlformats::convert_sliced(&index, target, &opts, &mut out);
                let whole = mlformats::convert_document_to_bytes(&doc, target, &opts);
                match (sliced, whole) {
                    (Ok(_), Ok((w, _))) => {
                        assert!(out.into_inner() == w, "{} -> {target}", name.display());
                        converted += 1;
                    }
                    // what needs the whole model (re-encoding an .h5
                    // into .h5, here) is refused by slices alone
                    (Err(mlformats::Error::NeedsWholeModel { .. }), Ok(_)) => {}
                    (Err(s), Err(w)) => assert_eq!(
                        mlformats::chain_message(&s),
                        mlformats::chain_message(&w),
                        "{} -> {target}",
                        name.display()
                    ),
                    (s, w) => panic!(
                        "{} -> {target}: by slices {:?}, whole {:?}",
                        name.display(),
                        s.err(),
                        w.err()
                    ),
                }
            }
        }
    }
    assert!(converted >= 20, "{converted}");
}

/// A chunked, deflated tensor bigger than a slice, read front to back in
/// slices of 4 MiB (as the statistics and `convert_sliced` read it): each
/// chunk read once, the elements those of the whole-file path.
#[test]
fn a_chunked_tensor_read_front_to_back_reads_each_chunk_once() {
    use hdf5_pure::{AttrValue, FileBuilder};
    let (rows, cols) = (2000usize, 600usize);
    let vals: Vec<f32> = (0..rows * cols).map(|i| (i as f32 * 0.37).sin()).collect();
    for chunks in [[64u64, 100], [7, 600], [2000, 9]] {
        let mut fb = FileBuilder::new();
        fb.create_dataset("w")
            .with_f32_data(&vals)
            .with_shape(&[rows as u64, cols as u64])
            .with_chunks(&chunks)
            .with_deflate(1)
            .set_attr("need_grad", AttrValue::I8(1));
        let file = fb.finish().unwrap();
        let r = Counting::new(file.clone());
        let read = r.read();
        let index =
            Document::open_at(r, Some(Path::new("x.h5")), None, &Default::default()).unwrap();
        let doc = Document::from_bytes(file.clone(), Some(Path::new("x.h5")), None).unwrap();
        let want = doc.tensor("w").unwrap();
        read.store(0, Relaxed);
        let n = index.entries()[0].numel();
        let mut buf = Vec::new();
        let mut got = Vec::new();
        let mut at = 0;
        while at < n {
            let part = index.read_elements(0, at, 1 << 20, &mut buf).unwrap();
            got.extend_from_slice(part.bytes());
            at += 1 << 20;
        }
        assert!(got == want.bytes(), "{chunks:?}");
        // every chunk's stored bytes once: less than the file
        let bytes = read.load(Relaxed);
        assert!(
            bytes <= file.len() as u64,
            "{chunks:?}: {bytes} bytes read of {}",
            file.len()
        );
        // a second pass (the cache of decoded chunks kept): at most the
        // chunks again
        read.store(0, Relaxed);
        read_tensor(&index, 0).unwrap();
        assert!(read.load(Relaxed) <= file.len() as u64, "{chunks:?}");
    }
}

/// The decoded chunks kept between reads are bounded for the whole file,
/// not per dataset: a file of many chunked datasets read front to back in
/// 4 MiB slices, twice each (as the viewer's statistics read), keeps at
/// most the largest dataset's budget (one band of chunks along the first
/// axis here), however many datasets were read (the page held one band
/// per dataset, 64 MiB for 64 datasets of 1 MiB chunks).
#[test]
fn the_chunk_cache_is_bounded_for_the_whole_file() {
    use hdf5_pure::{AttrValue, FileBuilder};
    let (rows, cols) = (256usize, 100usize);
    let mut fb = FileBuilder::new();
    let datasets = 12;
    for d in 0..datasets {
        let vals: Vec<f32> = (0..rows * cols)
            .map(|i| (i as f32 * 0.37 + d as f32).sin())
            .collect();
        // the first half: one chunk a band (64 x 100); the others 4 a band
        let chunks = if d < datasets / 2 {
            [64u64, 100]
        } else {
            [16, 25]
        };
        fb.create_dataset(&format!("w{d}"))
            .with_f32_data(&vals)
            .with_shape(&[rows as u64, cols as u64])
            .with_chunks(&chunks)
            .with_deflate(1)
            .set_attr("need_grad", AttrValue::I8(1));
    }
    let file = fb.finish().unwrap();
    let index = by_slices(&file[..], Some(Path::new("x.h5")), &Default::default())
        .unwrap()
        .unwrap();
    let doc = Document::from_bytes(file.clone(), Some(Path::new("x.h5")), None).unwrap();
    // the largest budget: one band of 64 x 100 f32 (a band of 16 x 25
    // chunks is 16 x 100)
    let bound = 64 * 100 * 4;
    assert_eq!(index.cached_chunk_bytes(), 0);
    let mut buf = Vec::new();
    for (i, t) in index.entries().iter().enumerate() {
        let mut got = Vec::new();
        for pass in 0..2 {
            let mut at = 0;
            while at < t.numel() {
                let part = index.read_elements(i, at, 1 << 20, &mut buf).unwrap();
                if pass == 0 {
                    got.extend_from_slice(part.bytes());
                }
                at += 1 << 20;
                let held = index.cached_chunk_bytes();
                assert!(held > 0 && held <= bound, "{}: {held} bytes", t.name());
            }
        }
        assert!(got == doc.tensor(t.name()).unwrap().bytes(), "{}", t.name());
    }
    // slices crossing bands of the second kind: at most 4 chunks of 16 x 25
    let last = index.len() - 1;
    index.read_elements(last, 0, 1000, &mut buf).unwrap();
    assert!(index.cached_chunk_bytes() <= bound);
}

/// The `.nnp` fixtures whose `parameter.h5` is deflated (contiguous
/// little- and big-endian datasets and a compact one; in
/// `mlp_deflated_mixed.nnp` a 96 KiB table whose structure the walk reads
/// back past its 64 KiB history): read by slices, front to back, back to
/// front and at odd offsets, each slice equal to the whole-file path's.
#[test]
fn a_deflated_h5_member_is_read_by_slices() {
    let dir = testdata().join("nnabla/h5chunks");
    for name in ["mlp_deflated.nnp", "mlp_deflated_mixed.nnp"] {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let path = Path::new(name);
        let doc = Document::from_bytes(bytes.clone(), Some(path), None).unwrap();
        let index = by_slices(&bytes[..], Some(path), &Default::default())
            .unwrap()
            .unwrap_or_else(|| panic!("{name}: not read by random access"));
        assert!(check(name, &bytes, false), "{name}");
        let mut buf = Vec::new();
        for (i, t) in index.entries().iter().enumerate() {
            let want = doc.tensor(t.name()).unwrap().bytes().to_vec();
            let size = t.dtype().size();
            let n = t.numel();
            let mut slice = |start: u64, count: u64| {
                let part = index.read_elements(i, start, count, &mut buf).unwrap();
                let from = start.min(n) as usize * size;
                let to = (start + count).min(n) as usize * size;
                assert!(
                    part.bytes() == &want[from..to],
                    "{name} {} {start}",
                    t.name()
                );
            };
            for count in [7, 1000] {
                let mut at = 0;
                while at < n {
                    slice(at, count);
                    at += count;
                }
            }
            let mut end = n;
            while end > 0 {
                let start = end.saturating_sub(999);
                slice(start, end - start);
                end = start;
            }
            slice(n / 2 + 1, 3);
            slice(n, 3);
        }
        // the archive mutated: its zip structure (each flip in the
        // compressed data inflates the member, both paths: sampled)
        let len = bytes.len();
        let mut at: Vec<usize> = (0..40).chain(len - 100..len).collect();
        at.extend((40..len - 100).step_by(4999));
        let cases = mutate(name, &bytes, &at);
        assert!(cases > 300, "{name}: {cases}");
    }
    // the HDF5 structure mutated inside the deflated member (the member
    // deflated again, its CRC-32 right): every byte of the first 100, then
    // every 37th
    let bytes = std::fs::read(dir.join("mlp_deflated.nnp")).unwrap();
    let mut zip = zip::ZipArchive::new(Cursor::new(&bytes[..])).unwrap();
    let mut members = Vec::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut v).unwrap();
        members.push((f.name().unwrap().to_string(), v));
    }
    let h5 = members
        .iter()
        .position(|(n, _)| n == "parameter.h5")
        .unwrap();
    let rezip = |h5_bytes: &[u8]| {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (i, (n, v)) in members.iter().enumerate() {
            w.start_file(n.as_str(), o).unwrap();
            let v = if i == h5 { h5_bytes } else { &v[..] };
            std::io::Write::write_all(&mut w, v).unwrap();
        }
        w.finish().unwrap().into_inner()
    };
    let plain = &members[h5].1;
    assert!(
        same("rezipped.nnp", &rezip(plain)),
        "not read by random access"
    );
    let mut cases = 0;
    for at in positions(0, plain.len(), 100, 37) {
        for x in [0x01u8, 0x80, 0xff] {
            let mut b = plain.clone();
            b[at] ^= x;
            same("mutated.nnp", &rezip(&b));
            cases += 1;
        }
    }
    for cut in (0..plain.len()).step_by(plain.len() / 50) {
        same("cut.nnp", &rezip(&plain[..cut]));
        cases += 1;
    }
    eprintln!("{cases} rezipped copies");
    assert!(cases > 500, "{cases}");
}
