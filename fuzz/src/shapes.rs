//! Fuzz targets that build hostile *shapes* on purpose from the fuzz input,
//! instead of flipping bytes of a valid file: archives whose central
//! directory points many names at one member, repeats names, declares 4 GiB
//! members or members that inflate far past their size (decompression
//! bombs), and documents nested thousands of levels deep.
//!
//! Builders only (no reading here: `lib.rs` opens what they build, and the
//! CLI's hostile-file tests use them to make their files).
//!
//! Each input is read as a small program ([`Bytes`]): every choice (how
//! many members, which name, which member an entry points to, which size it
//! declares) takes the next byte, so the fuzzer explores the shapes rather
//! than the byte layout, which is always valid. The readers may refuse what
//! they are given, but never panic, and never allocate or inflate more than
//! the limits allow (libFuzzer's RSS limit and timeout catch that).

/// The fuzz input read as a sequence of choices; zeros once it runs out.
pub struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    /// A reader of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Bytes(data)
    }

    /// The next byte (0 past the end).
    pub fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    /// A choice among `n` (n > 0).
    pub fn pick(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    /// The next little-endian u32.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }
}

// ------------------------------------------------------------ raw deflate

/// Writes a raw deflate stream with one fixed-Huffman block: `prefix` as
/// literals, then `zeros` zero bytes as a literal and matches of length
/// 258 at distance 1 (about 160:1, the shape of every zip bomb).
pub fn deflate_zeros(prefix: &[u8], zeros: u64) -> Vec<u8> {
    let mut w = BitWriter::default();
    w.bits(1, 1); // BFINAL
    w.bits(1, 2); // BTYPE = 01, fixed Huffman
    for &b in prefix {
        w.literal(b);
    }
    if zeros > 0 {
        w.literal(0);
        let mut left = zeros - 1;
        while left >= 258 {
            w.huffman(0xC5, 8); // length code 285: 258
            w.huffman(0, 5); // distance code 0: 1
            left -= 258;
        }
        for _ in 0..left {
            w.literal(0);
        }
    }
    w.huffman(0, 7); // end of block (256)
    w.finish()
}

#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl BitWriter {
    /// `count` bits of `value`, least significant first (header fields).
    fn bits(&mut self, value: u32, count: u32) {
        for i in 0..count {
            self.push((value >> i) & 1);
        }
    }

    /// A Huffman code of `len` bits, most significant first.
    fn huffman(&mut self, code: u32, len: u32) {
        for i in (0..len).rev() {
            self.push((code >> i) & 1);
        }
    }

    fn literal(&mut self, b: u8) {
        if b < 144 {
            self.huffman(0x30 + u32::from(b), 8);
        } else {
            self.huffman(0x190 + u32::from(b) - 144, 9);
        }
    }

    fn push(&mut self, bit: u32) {
        self.acc |= bit << self.n;
        self.n += 1;
        if self.n == 8 {
            self.out.push(self.acc as u8);
            self.acc = 0;
            self.n = 0;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// The CRC-32 of zip (IEEE 802.3) of `prefix` followed by `zeros` zeros
/// (the zeros in O(log n): each zero byte is one linear map of the CRC
/// register, raised to the n-th power by squaring).
pub fn crc32(prefix: &[u8], zeros: u64) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *t = c;
    }
    let step = |c: u32, b: u8| table[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    let mut c = !0u32;
    for &b in prefix {
        c = step(c, b);
    }
    // the register after one zero byte, as a matrix (column i: bit i's image)
    let mut m = [0u32; 32];
    for (i, col) in m.iter_mut().enumerate() {
        *col = step(1 << i, 0);
    }
    let apply = |m: &[u32; 32], v: u32| {
        (0..32).fold(0u32, |r, i| if v >> i & 1 == 1 { r ^ m[i] } else { r })
    };
    let mut n = zeros;
    while n > 0 {
        if n & 1 == 1 {
            c = apply(&m, c);
        }
        let sq: Vec<u32> = m.iter().map(|&col| apply(&m, col)).collect();
        m.copy_from_slice(&sq);
        n >>= 1;
    }
    !c
}

// ------------------------------------------------------------ zip archives

/// One member's bytes as stored, and what its headers say of it.
pub struct Member {
    /// The member's name in its local header.
    pub name: String,
    /// 0 stored, 8 deflated.
    pub method: u16,
    /// The bytes as stored.
    pub stored: Vec<u8>,
    /// CRC-32 of the inflated bytes.
    pub crc: u32,
    /// The inflated size.
    pub size: u64,
}

impl Member {
    /// A member holding `prefix` then `zeros` zeros, deflated or stored.
    pub fn new(name: &str, prefix: &[u8], zeros: u64, deflated: bool) -> Self {
        let size = prefix.len() as u64 + zeros;
        let stored = if deflated {
            deflate_zeros(prefix, zeros)
        } else {
            let mut v = prefix.to_vec();
            v.resize(size as usize, 0);
            v
        };
        Member {
            name: name.to_string(),
            method: if deflated { 8 } else { 0 },
            stored,
            crc: crc32(prefix, zeros),
            size,
        }
    }
}

/// A central directory entry: which member, under which name, claiming
/// which inflated size.
pub struct Entry {
    /// Index into the members.
    pub member: usize,
    /// The name the central directory gives.
    pub name: String,
    /// The inflated size it declares (`None`: the member's own).
    pub size: Option<u32>,
}

/// A zip archive of `members` (each local header and data in order) whose
/// central directory lists `entries`, each pointing at a member's local
/// header (several may point at one).
pub fn zip(members: &[Member], entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for m in members {
        offsets.push(out.len() as u32);
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        for v in [20u16, 0, m.method, 0, 0x21] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [m.crc, m.stored.len() as u32, m.size as u32] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(m.name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(m.name.as_bytes());
        out.extend_from_slice(&m.stored);
    }
    let cd_start = out.len() as u32;
    let mut count = 0u16;
    for e in entries {
        let Some(m) = members.get(e.member) else {
            continue;
        };
        count += 1;
        out.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        for v in [20u16, 20, 0, m.method, 0, 0x21] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let size = e.size.unwrap_or(m.size as u32);
        for v in [m.crc, m.stored.len() as u32, size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [e.name.len() as u16, 0, 0, 0, 0] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        out.extend_from_slice(&offsets[e.member].to_le_bytes());
        out.extend_from_slice(e.name.as_bytes());
    }
    let cd_size = out.len() as u32 - cd_start;
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, count, count] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_start.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// A version-1 `.npy` header for `<f4` data of `dims`.
pub fn npy_header(dims: &[u64]) -> Vec<u8> {
    let shape: Vec<String> = dims.iter().map(u64::to_string).collect();
    let shape = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.join(", ")),
    };
    let mut dict = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut h = b"\x93NUMPY\x01\x00".to_vec();
    h.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    h.extend_from_slice(dict.as_bytes());
    h
}

const NAMES: &[&str] = &[
    "a.npy",
    "b.npy",
    "a.npy",
    "dir/c.npy",
    "/model.0/w.npy",
    "nnp_version.txt",
    "parameter.protobuf",
    "x.nntxt",
];

const SIZES: &[u32] = &[0, 1, 64, 1 << 20, 1 << 30, u32::MAX, u32::MAX - 1];

/// The archive the fuzz input describes (see [`Bytes`]).
pub fn zip_program(data: &[u8]) -> Vec<u8> {
    let mut u = Bytes::new(data);
    let n_members = 1 + u.pick(6);
    let mut members = Vec::new();
    for _ in 0..n_members {
        let name = NAMES[u.pick(NAMES.len())];
        let rank = u.pick(3);
        let dims: Vec<u64> = (0..rank).map(|_| u64::from(u.u32() % (1 << 24))).collect();
        // what the data really is: up to 8 MiB of zeros, however many the
        // header claims
        let zeros = u64::from(u.byte()) << (u.pick(4) * 5);
        let deflated = u.byte() & 1 == 1;
        let prefix = if name.ends_with(".npy") {
            npy_header(&dims)
        } else {
            b"2.0\n".to_vec()
        };
        let zeros = if deflated { zeros } else { zeros.min(1 << 16) };
        members.push(Member::new(name, &prefix, zeros, deflated));
    }
    let n_entries = 1 + u.pick(12);
    let entries: Vec<Entry> = (0..n_entries)
        .map(|_| {
            let member = u.pick(n_members);
            let name = match u.pick(3) {
                0 => NAMES[u.pick(NAMES.len())].to_string(),
                _ => members[member].name.clone(),
            };
            let size = match u.pick(3) {
                0 => Some(SIZES[u.pick(SIZES.len())]),
                _ => None,
            };
            Entry { member, name, size }
        })
        .collect();
    zip(&members, &entries)
}

// ------------------------------------------------------------ nesting

/// A protobuf length-delimited field.
fn field(out: &mut Vec<u8>, number: u32, body: &[u8]) {
    varint(out, u64::from(number) << 3 | 2);
    varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// An ONNX model whose graph holds an `If` whose branch holds an `If` ...
/// `depth` levels deep, written in time linear in `depth` (each level's
/// lengths worked out from the inside first, then the opening bytes of
/// every level, the innermost graph, and the closing bytes of every level).
pub fn nested_onnx(depth: usize) -> Vec<u8> {
    let mut leaf = Vec::new();
    field(&mut leaf, 2, b"leaf"); // GraphProto.name
    // per level: AttributeProto.type = GRAPH (5), then GraphProto.name "g"
    let mut close = Vec::new();
    varint(&mut close, 20 << 3);
    varint(&mut close, 5);
    let attr_close = close.len();
    field(&mut close, 2, b"g");
    let mut name = Vec::new();
    field(&mut name, 1, b"then_branch"); // AttributeProto.name
    let mut op = Vec::new();
    field(&mut op, 4, b"If"); // NodeProto.op_type
    let vlen = |v: u64| {
        let mut b = Vec::new();
        varint(&mut b, v);
        b.len() as u64
    };
    // the (attribute, node) lengths of each level, innermost first
    let mut lens = Vec::with_capacity(depth);
    let mut graph = leaf.len() as u64;
    for _ in 0..depth {
        let attr = name.len() as u64 + 1 + vlen(graph) + graph + attr_close as u64;
        let node = op.len() as u64 + 1 + vlen(attr) + attr;
        lens.push((attr, node, graph));
        graph = 1 + vlen(node) + node + (close.len() - attr_close) as u64;
    }
    let mut model = Vec::new();
    varint(&mut model, 1 << 3); // ir_version
    varint(&mut model, 8);
    let mut opset = Vec::new();
    varint(&mut opset, 2 << 3); // OperatorSetIdProto.version
    varint(&mut opset, 13);
    field(&mut model, 8, &opset);
    varint(&mut model, 7 << 3 | 2); // ModelProto.graph
    varint(&mut model, graph);
    for &(attr, node, inner) in lens.iter().rev() {
        varint(&mut model, 1 << 3 | 2); // GraphProto.node
        varint(&mut model, node);
        model.extend_from_slice(&op);
        varint(&mut model, 5 << 3 | 2); // NodeProto.attribute
        varint(&mut model, attr);
        model.extend_from_slice(&name);
        varint(&mut model, 6 << 3 | 2); // AttributeProto.g
        varint(&mut model, inner);
    }
    model.extend_from_slice(&leaf);
    for _ in 0..depth {
        model.extend_from_slice(&close);
    }
    model
}

/// A safetensors file whose `__metadata__` nests `depth` JSON arrays.
pub fn nested_safetensors(depth: usize) -> Vec<u8> {
    let header = format!(
        "{{\"__metadata__\":{}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out
}

/// The document the fuzz input describes: nested as deep as it says (up
/// to 65,535 levels), with the file name that selects its format.
pub fn nesting_program(data: &[u8]) -> (Vec<u8>, &'static str) {
    let mut u = Bytes::new(data);
    let depth = usize::from(u.byte()) << 8 | usize::from(u.byte());
    match u.pick(2) {
        0 => (nested_onnx(depth), "x.onnx"),
        _ => (nested_safetensors(depth), "x.safetensors"),
    }
}
