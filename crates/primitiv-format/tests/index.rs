//! [`primitiv_format::index`] (the walk over a `Read + Seek`, tensor data
//! located) against [`File::parse_with`] (the same walk over the bytes):
//! on every `.data` of `testdata/primitiv`, and truncated and mutated
//! copies of each, the same tensors at the same offsets or the same error.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use primitiv_format::{File, ReadOptions, TensorAt};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "data") {
            out.push(p);
        }
    }
}

/// One located tensor: key path, stat key, shape, data offset and length.
type At = (
    Vec<Vec<u8>>,
    Option<Vec<u8>>,
    primitiv_format::Shape,
    u64,
    u64,
);

/// The tensors of a parsed file as the index gives them (offsets from the
/// data's place in `bytes`).
fn located(bytes: &[u8], f: &File<'_>) -> Vec<At> {
    let at = |path: &[Vec<u8>], stat: Option<Vec<u8>>, t: &primitiv_format::Tensor<'_>| {
        let off = t.data().as_ptr() as usize - bytes.as_ptr() as usize;
        let len = t.data().len() as u64;
        (path.to_vec(), stat, t.shape().clone(), off as u64, len)
    };
    let mut v = Vec::new();
    let mut param = |path: &[Vec<u8>], p: &primitiv_format::Parameter<'_>| {
        v.push(at(path, None, &p.value));
        for (k, t) in &p.stats {
            v.push(at(path, Some(k.clone()), t));
        }
    };
    match f {
        File::Tensor(t) => return vec![at(&[], None, t)],
        File::Parameter(p) => param(&[], p),
        File::Model(m) => {
            for (k, p) in &m.entries {
                param(k, p);
            }
        }
        _ => {}
    }
    v
}

fn of(t: &TensorAt) -> At {
    (
        t.path.clone(),
        t.stat.clone(),
        t.shape.clone(),
        t.offset,
        t.len,
    )
}

/// Both walks on `bytes`: the same or the same error. True when read.
fn same(name: &str, bytes: &[u8]) -> bool {
    let opts = ReadOptions::default();
    let whole = File::parse_prefix(bytes, &opts);
    let ix = primitiv_format::index(Cursor::new(bytes), &opts);
    match (whole, ix) {
        (Ok((f, n)), Ok(ix)) => {
            assert_eq!(ix.data_type, f.data_type(), "{name}");
            assert_eq!(ix.body_len, n as u64, "{name}");
            let got: Vec<At> = ix.tensors.iter().map(of).collect();
            assert_eq!(got, located(bytes, &f), "{name}");
            match &f {
                File::Shape(s) => assert_eq!(ix.shape.as_ref(), Some(s), "{name}"),
                // as text: a config may be NaN
                File::Optimizer(o) => assert_eq!(
                    format!("{:?}", ix.optimizer.as_ref()),
                    format!("{:?}", Some(o)),
                    "{name}"
                ),
                _ => assert!(ix.shape.is_none() && ix.optimizer.is_none(), "{name}"),
            }
            true
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{name}");
            false
        }
        (a, b) => panic!(
            "{name}: the whole walk says {:?}, the index {:?}",
            a.map(|_| ()),
            b.map(|_| ())
        ),
    }
}

#[test]
fn the_index_walks_as_the_whole_file_walk() {
    let mut all = Vec::new();
    files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/primitiv"),
        &mut all,
    );
    all.sort();
    assert!(all.len() >= 50, "{}", all.len());
    let (mut read, mut cases) = (0, 0);
    for p in &all {
        let name = p.display().to_string();
        let bytes = std::fs::read(p).unwrap();
        read += same(&name, &bytes) as usize;
        let len = bytes.len();
        for cut in (0..len).step_by(len / 200 + 1) {
            same(&name, &bytes[..cut]);
            cases += 1;
        }
        for at in (0..len).step_by(len / 100 + 1) {
            for x in [0x01u8, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[at] ^= x;
                same(&name, &b);
                cases += 1;
            }
            let mut b = bytes.clone();
            b[at..(at + 4).min(len)].fill(0xff);
            same(&name, &b);
            cases += 1;
        }
    }
    assert!(read >= 30, "{read} read");
    assert!(cases > 5000, "{cases}");
}
