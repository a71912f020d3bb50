//! Format detection from the first bytes and the file name.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::Format;
use crate::format::ByExtension;

/// What [`detect`] looks at.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A file on disk: its first and last bytes and its name are read.
    Path(&'a Path),
    /// The whole content (or at least its first bytes), with no name.
    Bytes(&'a [u8]),
    /// The whole content (or at least its first bytes) and the file name.
    Named {
        /// The content.
        bytes: &'a [u8],
        /// The name, whose extension breaks ties.
        name: &'a Path,
    },
}

impl<'a> From<&'a Path> for Input<'a> {
    fn from(p: &'a Path) -> Self {
        Input::Path(p)
    }
}

impl<'a> From<&'a std::path::PathBuf> for Input<'a> {
    fn from(p: &'a std::path::PathBuf) -> Self {
        Input::Path(p)
    }
}

impl<'a> From<&'a [u8]> for Input<'a> {
    fn from(b: &'a [u8]) -> Self {
        Input::Bytes(b)
    }
}

const CVM_MAGIC: [u8; 8] = 0xF7E5_8D4F_0504_9CB7u64.to_le_bytes();
const TENNIS_CODE: [u8; 4] = 0x1991_0929u32.to_le_bytes();
const HDF5_SIGNATURE: [u8; 8] = *b"\x89HDF\r\n\x1a\n";
const NNP_VERSION: &[u8] = b"nnp_version.txt";
const NNABLA_TOP_LEVEL: [&str; 8] = [
    "global_config",
    "training_config",
    "network",
    "parameter",
    "dataset",
    "optimizer",
    "monitor",
    "executor",
];

/// Tells the format of a file from its first bytes plus its name.
///
/// Magic numbers win over names: TVM/CVM magic at offset 0, the TenniS code
/// `0x19910929` at offset 4, an HDF5 signature at 0, 512, 1024 or 2048, a zip
/// archive holding `nnp_version.txt`, primitiv's `0xce`-encoded version
/// header `0.1`, then the magic bytes of registered formats
/// ([`crate::FormatPlugin::detect`]). Binary protobuf has no magic, so it is recognised by the
/// extension `.protobuf`/`.pb`; text protobuf by `.nntxt`/`.prototxt` or by
/// content that starts with an NNabla top-level field. `None` when nothing
/// matches (or a path cannot be read).
pub fn detect<'a>(input: impl Into<Input<'a>>) -> Option<Format> {
    match input.into() {
        Input::Bytes(b) => detect_bytes(head_of(b), tail_of(b), None, b.len() as u64),
        Input::Named { bytes, name } => detect_bytes(
            head_of(bytes),
            tail_of(bytes),
            Some(name),
            bytes.len() as u64,
        ),
        Input::Path(p) => {
            let (head, tail, len) = read_head_tail(p).ok()?;
            detect_bytes(&head, &tail, Some(p), len)
        }
    }
}

/// How much of the start of a file detection looks at.
const HEAD: u64 = 4096;
/// How much of the end (a zip's central directory and end record).
const TAIL: u64 = 66 * 1024;

/// The bytes detection reads at the start: it never scans a whole file.
fn head_of(b: &[u8]) -> &[u8] {
    &b[..b.len().min(HEAD as usize)]
}

/// The bytes detection reads at the end.
fn tail_of(b: &[u8]) -> &[u8] {
    &b[b.len().saturating_sub(TAIL as usize)..]
}

/// Whether `head` starts a zip archive: the only files whose end detection
/// looks at (the central directory, naming `nnp_version.txt`). Detection
/// of a file read by ranges reads the end only then, so that a header
/// walk of any other format costs no request at the far end of the file.
pub(crate) fn starts_a_zip(head: &[u8]) -> bool {
    head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06")
}

fn read_head_tail(p: &Path) -> std::io::Result<(Vec<u8>, Vec<u8>, u64)> {
    let mut f = File::open(p)?;
    let len = f.metadata()?.len();
    let mut head = Vec::new();
    (&mut f).take(HEAD).read_to_end(&mut head)?;
    let mut tail = Vec::new();
    if len > HEAD && starts_a_zip(&head) {
        f.seek(SeekFrom::Start(len.saturating_sub(TAIL).max(HEAD)))?;
        f.take(TAIL).read_to_end(&mut tail)?;
    }
    Ok((head, tail, len))
}

pub(crate) fn detect_bytes(
    head: &[u8],
    tail: &[u8],
    name: Option<&Path>,
    len: u64,
) -> Option<Format> {
    let by_ext = name.and_then(Format::from_extension);
    if head.starts_with(&CVM_MAGIC) {
        return Some(Format::CvmParams);
    }
    if head.len() >= 8 && head[4..8] == TENNIS_CODE {
        return Some(Format::TennisModule);
    }
    let hdf5_at = |o: usize| head.get(o..o + 8) == Some(&HDF5_SIGNATURE[..]);
    if hdf5_at(0) {
        return Some(Format::NnablaH5);
    }
    // A zip before an HDF5 file with a user block: a stored `.h5` member
    // (an `.nnp`'s `parameter.h5`) can put the HDF5 signature at 512, 1024
    // or 2048 bytes into the archive.
    if starts_a_zip(head) {
        let names_version = contains(head, NNP_VERSION) || contains(tail, NNP_VERSION);
        if names_version || by_ext == Some(Format::NnablaNnp) {
            return Some(Format::NnablaNnp);
        }
        if by_ext == Some(Format::Npz) || first_member_is_npy(head) {
            return Some(Format::Npz);
        }
    }
    if [512usize, 1024, 2048].into_iter().any(hdf5_at) {
        return Some(Format::NnablaH5);
    }
    if is_primitiv_header(head) {
        return Some(Format::Primitiv);
    }
    // registered formats' magic bytes, after every built-in magic
    if let Some(f) = crate::plugin::detect_registered(head) {
        return Some(f);
    }
    if let Some(f) = by_ext {
        match f.by_extension() {
            ByExtension::Decides => return Some(f),
            ByExtension::NeedsHeader => return None,
            ByExtension::Hint => {}
        }
    }
    if looks_like_nnabla_text(head) {
        return Some(Format::NnablaNntxt);
    }
    if looks_like_onnx(head) {
        return Some(Format::Onnx);
    }
    if looks_like_safetensors(head, len) {
        return Some(Format::Safetensors);
    }
    None
}

/// A binary `ModelProto` as ONNX writers write it: `ir_version` (field 1,
/// a varint from 1 to 63) first, then another field of `ModelProto` (a
/// string or the graph, the operator sets, metadata).
fn looks_like_onnx(b: &[u8]) -> bool {
    matches!(b, [0x08, 1..=63, next, ..]
        if matches!(next, 0x12 | 0x1a | 0x22 | 0x28 | 0x32 | 0x3a | 0x42 | 0x72 | 0xa2 | 0xca))
}

/// A zip whose first local header names a `.npy` member (what `numpy.savez` writes).
fn first_member_is_npy(b: &[u8]) -> bool {
    let Some(n) = b
        .get(26..28)
        .map(|n| u16::from_le_bytes([n[0], n[1]]) as usize)
    else {
        return false;
    };
    b.get(30..30 + n)
        .is_some_and(|name| name.ends_with(b".npy"))
}

/// A little-endian u64 header length that fits the file of `len` bytes,
/// then a JSON object (`{`).
fn looks_like_safetensors(b: &[u8], len: u64) -> bool {
    let Some(head) = b.get(..8) else {
        return false;
    };
    let mut a = [0u8; 8];
    a.copy_from_slice(head);
    let n = u64::from_le_bytes(a);
    n >= 2 && n <= len.saturating_sub(8) && b.get(8) == Some(&b'{')
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// `0xce 0` `0xce 1` `0xce <data type>` with a known data type.
fn is_primitiv_header(b: &[u8]) -> bool {
    if b.len() < 15 || b[0] != 0xce || b[5] != 0xce || b[10] != 0xce {
        return false;
    }
    let u = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    u(1) == 0 && u(6) == 1 && matches!(u(11), 0 | 0x100 | 0x200 | 0x300 | 0x400)
}

/// Text whose first token (after white space and `#` comments) is an NNabla
/// top-level field followed by `{` or `:`.
fn looks_like_nnabla_text(b: &[u8]) -> bool {
    let mut rest = b;
    loop {
        let trimmed = rest.trim_ascii_start();
        if let Some(after) = trimmed.strip_prefix(b"#") {
            match after.iter().position(|&c| c == b'\n') {
                Some(i) => rest = &after[i + 1..],
                None => return false,
            }
        } else {
            rest = trimmed;
            break;
        }
    }
    let end = rest
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .unwrap_or(rest.len());
    let Ok(word) = std::str::from_utf8(&rest[..end]) else {
        return false;
    };
    if !NNABLA_TOP_LEVEL.contains(&word) {
        return false;
    }
    matches!(rest[end..].trim_ascii_start().first(), Some(b'{' | b':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(bytes: &[u8], name: &str) -> Option<Format> {
        detect(Input::Named {
            bytes,
            name: Path::new(name),
        })
    }

    #[test]
    fn magics() {
        let mut cvm = CVM_MAGIC.to_vec();
        cvm.extend([0u8; 24]);
        assert_eq!(detect(&cvm[..]), Some(Format::CvmParams));
        // a CVM magic wins over a misleading name
        assert_eq!(named(&cvm, "x.tsm"), Some(Format::CvmParams));

        let mut tsm = vec![0u8; 4];
        tsm.extend(TENNIS_CODE);
        tsm.extend([0u8; 120]);
        assert_eq!(detect(&tsm[..]), Some(Format::TennisModule));

        let mut h5 = HDF5_SIGNATURE.to_vec();
        h5.extend([0u8; 100]);
        assert_eq!(detect(&h5[..]), Some(Format::NnablaH5));
        let mut h5_512 = vec![0u8; 512];
        h5_512.extend(HDF5_SIGNATURE);
        assert_eq!(detect(&h5_512[..]), Some(Format::NnablaH5));

        let prim = [0xce, 0, 0, 0, 0, 0xce, 0, 0, 0, 1, 0xce, 0, 0, 3, 0, 0x80];
        assert_eq!(detect(&prim[..]), Some(Format::Primitiv));
        let not_prim = [0xce, 0, 0, 0, 0, 0xce, 0, 0, 0, 2, 0xce, 0, 0, 3, 0, 0x80];
        assert_eq!(detect(&not_prim[..]), None);
    }

    #[test]
    fn zip_wins_over_an_hdf5_signature_inside_a_stored_member() {
        for at in [512usize, 1024, 2048] {
            // an .nnp whose stored parameter.h5 starts at `at`
            let mut nnp = b"PK\x03\x04".to_vec();
            nnp.extend([0u8; 26]);
            nnp.extend(NNP_VERSION);
            nnp.resize(at, b' ');
            nnp.extend(HDF5_SIGNATURE);
            nnp.resize(at + 64, 0);
            assert_eq!(detect(&nnp[..]), Some(Format::NnablaNnp), "nnp, h5 at {at}");
            // an .npz (first member .npy) with the same bytes further on
            let mut npz = b"PK\x03\x04".to_vec();
            npz.extend([0u8; 22]);
            npz.extend(5u16.to_le_bytes());
            npz.extend([0u8; 2]);
            npz.extend(b"a.npy");
            npz.resize(at, 0);
            npz.extend(HDF5_SIGNATURE);
            npz.resize(at + 64, 0);
            assert_eq!(detect(&npz[..]), Some(Format::Npz), "npz, h5 at {at}");
        }
        // a zip-looking user block of an HDF5 file that is neither is still HDF5
        let mut h5 = b"PK\x03\x04".to_vec();
        h5.resize(512, 0);
        h5.extend(HDF5_SIGNATURE);
        h5.resize(600, 0);
        assert_eq!(detect(&h5[..]), Some(Format::NnablaH5));
    }

    #[test]
    fn zip_needs_nnp_version_or_name() {
        let mut z = b"PK\x03\x04".to_vec();
        z.extend([0u8; 26]);
        assert_eq!(detect(&z[..]), None);
        assert_eq!(named(&z, "model.nnp"), Some(Format::NnablaNnp));
        z.extend(NNP_VERSION);
        assert_eq!(detect(&z[..]), Some(Format::NnablaNnp));
    }

    #[test]
    fn protobuf_text_and_binary() {
        assert_eq!(
            named(b"\xa2\x06\x00", "m.protobuf"),
            Some(Format::NnablaProtobuf)
        );
        assert_eq!(detect(&b"\xa2\x06\x00"[..]), None);
        assert_eq!(
            detect(&b"# comment\n  global_config {\n}"[..]),
            Some(Format::NnablaNntxt)
        );
        assert_eq!(detect(&b"network: {}"[..]), Some(Format::NnablaNntxt));
        assert_eq!(detect(&b"networks {}"[..]), None);
        assert_eq!(detect(&b"network = 1"[..]), None);
        assert_eq!(named(b"", "a.prototxt"), Some(Format::NnablaNntxt));
        assert_eq!(named(b"", "a.bin"), None);
        assert_eq!(detect(&b""[..]), None);
    }

    #[test]
    fn from_a_path() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big.nnp");
        // a zip whose nnp_version.txt entry is only in the tail
        let mut z = b"PK\x03\x04".to_vec();
        z.resize(200_000, 0);
        z.extend(NNP_VERSION);
        std::fs::write(&p, &z).unwrap();
        assert_eq!(detect(p.as_path()), Some(Format::NnablaNnp));
        assert_eq!(detect(dir.path().join("missing").as_path()), None);
    }

    #[test]
    fn onnx_by_name_and_shape() {
        // ir_version 7, producer_name "x"
        let m = [0x08, 7, 0x12, 1, b'x'];
        assert_eq!(detect(&m[..]), Some(Format::Onnx));
        assert_eq!(named(b"", "m.onnx"), Some(Format::Onnx));
        assert_eq!(detect(&[0x08, 7, 0x10][..]), None);
        assert_eq!(detect(&[0x08, 0, 0x12][..]), None);
    }

    #[test]
    fn what_an_extension_says_without_a_magic() {
        let text = b"network { name: \"n\" }";
        // binary protobuf, protobuf text and ONNX have no magic: the name decides
        assert_eq!(named(text, "m.pb"), Some(Format::NnablaProtobuf));
        assert_eq!(named(b"", "m.pbtxt"), Some(Format::NnablaNntxt));
        assert_eq!(named(text, "m.onnx"), Some(Format::Onnx));
        // a primitiv name without primitiv's header: nothing else is guessed
        assert_eq!(named(text, "m.data"), None);
        assert_eq!(named(text, "m.msgpack"), None);
        // other names leave it to the content
        assert_eq!(named(text, "m.h5"), Some(Format::NnablaNntxt));
        assert_eq!(named(text, "m.safetensors"), Some(Format::NnablaNntxt));
        assert_eq!(named(b"", "m.tsm"), None);
    }
}
