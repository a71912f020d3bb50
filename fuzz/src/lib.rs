//! The fuzz harness: one function per fuzz target, each running a parser
//! (and what a caller does next with its result) on arbitrary bytes.
//!
//! Every function must never panic, whatever the input: a parser returns
//! `Ok` or `Err`. The checks here assert what must hold for any input the
//! parser accepts (every tensor's byte length matches its shape and dtype,
//! two readers of the same bytes agree, what was read can be written again
//! and read back). Every tensor returned is touched byte by byte and
//! through its typed view, so a lazily wrong view or offset shows up here.
//!
//! `fuzz/fuzz_targets/<name>.rs` calls `mlformats_fuzz::<name>`;
//! `crates/mlformats/tests/fuzz_regressions.rs` includes this file and
//! replays every input kept in `testdata/fuzz-regressions/<name>/` through
//! the same function. Only the `mlformats` crate (all features) is used.

use std::io::Cursor;

#[path = "shapes.rs"]
pub mod shapes;

#[path = "h5_shapes.rs"]
pub mod h5_shapes;

use mlformats::tensor_core::{
    self, DType, Limits, MappedFile, MemoryOrder, Tensor, checked_byte_len,
};

/// A fuzz target's function.
pub type Target = fn(&[u8]);

/// Every target: its name (the fuzz binary and the regression directory)
/// and its function.
pub const TARGETS: &[(&str, Target)] = &[
    ("cvm_params", cvm_params),
    ("primitiv_shape", primitiv_shape),
    ("primitiv_tensor", primitiv_tensor),
    ("primitiv_parameter", primitiv_parameter),
    ("primitiv_model", primitiv_model),
    ("primitiv_optimizer", primitiv_optimizer),
    ("nnabla_text", nnabla_text),
    ("nnabla_binary", nnabla_binary),
    ("nnabla_h5", nnabla_h5),
    ("nnp", nnp),
    ("tennis_module", tennis_module),
    ("inspect", inspect),
    ("zip_shapes", zip_shapes),
    ("nesting", nesting),
    ("h5_shapes", h5_shapes),
    ("onnx_import", onnx_import),
    ("graph_export", graph_export),
];

/// Reads every byte and every element of `t`; checks its byte length.
/// Returns a value derived from all of it (so nothing is optimised away).
pub fn touch(t: &Tensor<'_>) -> u64 {
    let b = t.bytes();
    assert_eq!(
        checked_byte_len(t.dims(), t.dtype()),
        Some(b.len()),
        "tensor byte length does not match {:?} {:?}",
        t.dtype(),
        t.dims()
    );
    let mut h = b.iter().fold(b.len() as u64, |a, &x| {
        a.wrapping_mul(31).wrapping_add(x as u64)
    });
    let s = tensor_core::stats::summarize(t);
    h = h.wrapping_add(s.count);
    tensor_core::stats::for_each_f64_block(t, |xs| {
        h = xs.iter().fold(h, |a, x| a.wrapping_add(x.to_bits()));
    });
    h = h.wrapping_add(typed_view(t));
    if t.order() == MemoryOrder::ColumnMajor && t.dtype().size() > 0 {
        let r = t
            .to_row_major()
            .expect("a consistent tensor converts to row-major");
        assert_eq!(r.bytes().len(), b.len());
        h = h.wrapping_add(r.bytes().iter().map(|&x| x as u64).sum::<u64>());
    }
    h
}

fn typed_view(t: &Tensor<'_>) -> u64 {
    fn sum<T: tensor_core::Element>(t: &Tensor<'_>) -> u64 {
        let v = t
            .view::<T>()
            .expect("a tensor views as its own element type");
        assert_eq!(v.len(), t.numel());
        let mut buf = [0u8; 8];
        v.iter().fold(0u64, |a, &x| {
            x.write_le(&mut buf);
            a.wrapping_add(u64::from_le_bytes(buf))
        })
    }
    match t.dtype() {
        DType::I8 => sum::<i8>(t),
        DType::I16 => sum::<i16>(t),
        DType::I32 => sum::<i32>(t),
        DType::I64 => sum::<i64>(t),
        DType::U8 => sum::<u8>(t),
        DType::U16 => sum::<u16>(t),
        DType::U32 => sum::<u32>(t),
        DType::U64 => sum::<u64>(t),
        DType::F32 => sum::<f32>(t),
        DType::F64 => sum::<f64>(t),
        DType::F16 => sum::<tensor_core::half::f16>(t),
        DType::BF16 => sum::<tensor_core::half::bf16>(t),
        _ => 0,
    }
}

fn byte_sum(b: &[u8]) -> u64 {
    b.iter().map(|&x| x as u64).sum()
}

/// Loop expansion is meant to multiply what the file holds; the fuzz
/// targets bound it well below the default so that a legitimate expansion
/// is not mistaken for an unjustified allocation.
fn expansion_limits() -> Limits {
    Limits::default().with_max_tensors(10_000)
}

// ---------------------------------------------------------------- cvm-params

/// `cvm-params`: the zero-copy reader (strict and lenient), the lazy
/// `Read + Seek` reader (which must agree with it), and a re-encode of
/// what was read (which must read back identically).
pub fn cvm_params(data: &[u8]) {
    use mlformats::cvm::{LazyParams, Params, ParamsWriter, ReadOptions, WriteOptions};

    for opts in [ReadOptions::strict(), ReadOptions::lenient()] {
        let sliced = Params::parse_with(data, &opts);
        let lazy = LazyParams::from_reader(Cursor::new(data), &opts);
        let (params, mut lazy) = match (sliced, lazy) {
            (Ok(p), Ok(l)) => (p, l),
            (Err(_), Err(_)) => continue,
            (Ok(_), Err(e)) => panic!("slice reader accepts, lazy reader refuses: {e}"),
            (Err(e), Ok(_)) => panic!("lazy reader accepts, slice reader refuses: {e}"),
        };
        assert_eq!(params.len(), lazy.len());
        assert_eq!(params.trailing_bytes(), lazy.trailing_bytes());
        for (i, e) in params.entries().iter().enumerate() {
            touch(e.tensor());
            let _ = e.name();
            let info = e.info();
            assert_eq!(info.nbytes, e.tensor().bytes().len() as u64);
            let start = usize::try_from(info.data_offset).expect("offset fits");
            assert_eq!(
                data.get(start..start + e.tensor().bytes().len()),
                Some(e.tensor().bytes()),
                "tensor {i}: data_offset does not point at its bytes"
            );
            assert_eq!(lazy.name_bytes(i), Some(e.name_bytes()));
            let t = lazy.read(i).expect("lazy read of an accepted tensor");
            assert_eq!(
                t.bytes(),
                e.tensor().bytes(),
                "tensor {i}: lazy bytes differ"
            );
            assert_eq!(t.dims(), e.tensor().dims());
            assert_eq!(t.dtype(), e.tensor().dtype());
            if !opts.allow_duplicates {
                assert!(params.get_bytes(e.name_bytes()).is_some());
            }
        }
        // What `mlformats convert x.params y.params` does.
        let entries = params.entries();
        let mut out = Vec::new();
        let written = ParamsWriter::new(
            &mut out,
            entries.iter().map(|e| e.name_bytes()),
            &WriteOptions::default(),
        )
        .and_then(|mut pw| {
            for e in entries {
                let bools = e.info().dl_type.bool_encoding().unwrap_or_default();
                pw.write_tensor_as(e.tensor(), bools)?;
            }
            pw.finish().map(drop)
        });
        if written.is_ok() {
            let again = Params::parse_with(&out, &opts.with_lenient_trailing(false))
                .expect("a re-encoded file reads back");
            assert_eq!(again.len(), params.len());
            for (a, b) in again.entries().iter().zip(entries) {
                assert_eq!(a.name_bytes(), b.name_bytes());
                assert_eq!(a.tensor().bytes(), b.tensor().bytes());
                assert_eq!(a.tensor().dims(), b.tensor().dims());
            }
        }
        let _ = params.into_tensor_map();
    }
}

// ---------------------------------------------------------------- primitiv

fn touch_primitiv(t: &mlformats::primitiv::Tensor<'_>) {
    let s = t.shape();
    let _ = (s.dims(), s.stored_dims(), s.batch(), s.volume(), s.size());
    assert_eq!(s.byte_len(), Some(t.data().len() as u64));
    let v = t.values();
    assert_eq!(v.len() * 4, t.data().len());
    let core = t.to_core().expect("an accepted primitiv tensor converts");
    touch(&core);
    assert_eq!(t.to_row_major_vec().len(), v.len());
}

fn touch_parameter(p: &mlformats::primitiv::Parameter<'_>) {
    touch_primitiv(&p.value);
    for (k, t) in &p.stats {
        touch_primitiv(t);
        assert!(p.stat(k).is_some());
    }
}

fn touch_file(f: &mlformats::primitiv::File<'_>) {
    use mlformats::primitiv::{BaseConfigs, File};
    match f {
        File::Shape(s) => {
            let _ = (
                s.dims(),
                s.batch(),
                s.volume(),
                s.size(),
                s.core_dims(),
                s.to_string(),
            );
        }
        File::Tensor(t) => touch_primitiv(t),
        File::Parameter(p) => touch_parameter(p),
        File::Model(m) => {
            for (k, p) in &m.entries {
                touch_parameter(p);
                let _ = mlformats::primitiv::join_key(k);
                assert!(m.get(k).is_some());
            }
        }
        File::Optimizer(o) => {
            let _ = BaseConfigs::from_optimizer(o);
            let _ = o.guess_class();
            for (k, _) in &o.uint_configs {
                let _ = o.uint(&String::from_utf8_lossy(k));
            }
            for (k, _) in &o.float_configs {
                let _ = o.float(&String::from_utf8_lossy(k));
            }
        }
    }
}

/// primitiv `Shape` files (`Shape::parse`) and the generic reader.
pub fn primitiv_shape(data: &[u8]) {
    let typed = mlformats::primitiv::Shape::parse(data);
    if let Ok(s) = &typed {
        let _ = (
            s.dims(),
            s.batch(),
            s.volume(),
            s.size(),
            s.core_dims(),
            s.to_string(),
        );
    }
    primitiv_generic(data, typed.is_ok());
}

/// primitiv `Tensor` files (`Tensor::parse`) and the generic reader.
pub fn primitiv_tensor(data: &[u8]) {
    let typed = mlformats::primitiv::Tensor::parse(data);
    if let Ok(t) = &typed {
        touch_primitiv(t);
    }
    primitiv_generic(data, typed.is_ok());
}

/// primitiv `Parameter` files (`Parameter::parse`) and the generic reader.
pub fn primitiv_parameter(data: &[u8]) {
    let typed = mlformats::primitiv::Parameter::parse(data);
    if let Ok(p) = &typed {
        touch_parameter(p);
    }
    primitiv_generic(data, typed.is_ok());
}

/// primitiv `Model` files (`Model::parse`) and the generic reader.
pub fn primitiv_model(data: &[u8]) {
    let typed = mlformats::primitiv::Model::parse(data);
    if let Ok(m) = &typed {
        touch_file(&mlformats::primitiv::File::Model(m.clone()));
    }
    primitiv_generic(data, typed.is_ok());
}

/// primitiv `Optimizer` files (`Optimizer::parse`, the typed optimizer
/// configs) and the generic reader.
pub fn primitiv_optimizer(data: &[u8]) {
    use mlformats::primitiv::{AdaDelta, AdaGrad, Adam, MomentumSgd, RmsProp, Sgd};
    let typed = mlformats::primitiv::Optimizer::parse(data);
    if let Ok(o) = &typed {
        touch_file(&mlformats::primitiv::File::Optimizer(o.clone()));
        let _ = Sgd::from_optimizer(o).to_optimizer();
        let _ = MomentumSgd::from_optimizer(o).to_optimizer();
        let _ = AdaGrad::from_optimizer(o).to_optimizer();
        let _ = RmsProp::from_optimizer(o).to_optimizer();
        let _ = AdaDelta::from_optimizer(o).to_optimizer();
        let _ = Adam::from_optimizer(o).to_optimizer();
    }
    primitiv_generic(data, typed.is_ok());
}

/// The generic reader must accept whatever a typed reader accepted.
fn primitiv_generic(data: &[u8], typed_ok: bool) {
    match mlformats::primitiv::File::parse(data) {
        Ok(f) => touch_file(&f),
        Err(e) => assert!(!typed_ok, "typed reader accepts, generic refuses: {e}"),
    }
}

// ---------------------------------------------------------------- NNabla protobuf

fn touch_nnabla_model(model: &mlformats::nnabla::NNablaProtoBuf) {
    use mlformats::nnabla::model::{Model, expand_all_loops};
    if let Ok(view) = Model::new(model) {
        for p in &view.parameters {
            touch(&p.tensor);
        }
        for n in &view.networks {
            let _ = n.has_loops();
        }
    }
    if let Ok(expanded) = expand_all_loops(model, &expansion_limits()) {
        assert!(expanded.network.iter().all(|n| n.repeat_info.is_empty()));
    }
    let _ = mlformats::nnabla::text::print(model);
    let _ = mlformats::nnabla::binary::encode(model);
}

/// NNabla text protobuf (`.nntxt`, `.prototxt`): parse, parameters as
/// tensors, typed view, loop expansion, print.
pub fn nnabla_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(model) = mlformats::nnabla::text::parse(text) else {
        return;
    };
    if let Ok(params) = mlformats::nnabla::parameters(&model) {
        for p in &params {
            touch(&p.tensor);
        }
    }
    touch_nnabla_model(&model);
}

/// NNabla binary protobuf (`.protobuf`): the borrowing decoder (as
/// `inspect` uses it) and the plain prost decoder, which must agree on
/// what they accept and on the parameters.
pub fn nnabla_binary(data: &[u8]) {
    let borrowed = mlformats::nnabla::binary::parse(data);
    let plain = mlformats::nnabla::binary::decode(data);
    if let Ok(file) = &borrowed {
        for p in &file.parameters {
            touch(&p.tensor);
        }
        touch_nnabla_model(&file.model);
    }
    if let Ok(model) = &plain
        && let Ok(params) = mlformats::nnabla::parameters(model)
    {
        for p in &params {
            touch(&p.tensor);
        }
        if let Ok(file) = &borrowed {
            assert_eq!(params.len(), file.parameters.len());
            for (a, b) in params.iter().zip(&file.parameters) {
                assert_eq!(a.name, b.name);
                assert_eq!(a.tensor.dims(), b.tensor.dims());
                assert_eq!(
                    a.tensor.bytes(),
                    b.tensor.bytes(),
                    "parameter {:?}: the two decoders differ",
                    a.name
                );
            }
        }
    }
}

// ---------------------------------------------------------------- .h5 and .nnp

/// NNabla `.h5` parameter files (over `hdf5-pure`), borrowed and owned.
pub fn nnabla_h5(data: &[u8]) {
    use mlformats::nnp::{ReadOptions, h5};
    let _ = h5::is_h5(data);
    let opts = ReadOptions::default();
    let borrowed = h5::parse_with(data, &opts);
    if let Ok(params) = &borrowed {
        for p in params {
            touch(&p.tensor);
        }
    }
    if let Ok(params) = h5::from_vec(data.to_vec(), &opts) {
        for p in &params {
            touch(&p.tensor);
        }
        if let Ok(b) = &borrowed {
            assert_eq!(b.len(), params.len());
        }
    }
}

fn touch_nnp(n: &mlformats::nnp::Nnp<'_>) {
    for p in n.parameters().iter() {
        touch(&p.tensor);
        let _ = &p.name;
    }
    for o in n.optimizer_states() {
        let _ = byte_sum(o.data.as_slice());
    }
    for m in n.members() {
        let _ = m;
    }
    let _ = n.parameters().to_tensor_map();
    touch_nnabla_model(n.model());
}

/// NNabla `.nnp` archives: from a slice (zero-copy), with CRC checks, and
/// through `Read + Seek` (owned).
pub fn nnp(data: &[u8]) {
    use mlformats::nnp::{Nnp, ReadOptions};
    let opts = ReadOptions::default();
    if let Ok(n) = Nnp::parse_with(data, &opts) {
        touch_nnp(&n);
    }
    if let Ok(n) = Nnp::parse_with(
        data,
        &opts.clone().verify_crc(true).allow_unsafe_names(true),
    ) {
        touch_nnp(&n);
    }
    if let Ok(n) = Nnp::from_reader(Cursor::new(data), &opts) {
        touch_nnp(&n);
    }
}

// ---------------------------------------------------------------- TenniS

fn touch_module(m: &mlformats::tennis::Module<'_>) {
    let _ = m.header();
    for (name, t) in m.named_tensors() {
        let _ = name;
        touch(t);
    }
    for (i, n) in m.nodes().iter().enumerate() {
        let _ = (n.op(), n.name(), n.kind(), n.offset());
        for &input in n.inputs() {
            assert!(input < m.len(), "node {i} input {input} out of range");
        }
        for p in n.params() {
            let _ = (p.key(), p.is_reserved(), p.as_str(), p.offset());
            for f in p.fields() {
                touch(f);
            }
        }
        if let Some(v) = n.value() {
            touch(v);
        }
        let _ = (n.shape_hint(), n.dtype_hint(), n.output_count());
        let _ = m.consumers(i);
        let _ = m.is_unused(i);
    }
    let _ = m.consumer_table();
    let _ = m.topological_order();
    let _ = m.reachable_from_outputs();
    for c in m.constants() {
        let _ = c;
    }
    let _ = m.constant_map();
}

/// TenniS `.tsm` modules: strict and structural reads, the graph API, and
/// a byte-preserving re-encode (what `convert x.tsm y.tsm` does) that must
/// read back with the same tensors.
pub fn tennis_module(data: &[u8]) {
    use mlformats::tennis::{Module, NodeOrder, ParamOrder, ReadOptions, WriteOptions};
    for opts in [ReadOptions::default(), ReadOptions::structural()] {
        let Ok(m) = Module::parse_with(data, &opts) else {
            continue;
        };
        touch_module(&m);
        let wopts = WriteOptions::default()
            .with_nodes(NodeOrder::AsGiven)
            .with_params(ParamOrder::AsGiven);
        if let Ok(bytes) = m.to_bytes(&wopts) {
            let again = Module::parse_with(&bytes, &opts).expect("a re-encoded module reads back");
            let a = again.named_tensors();
            let b = m.named_tensors();
            assert_eq!(a.len(), b.len());
            for ((na, ta), (nb, tb)) in a.iter().zip(&b) {
                assert_eq!(na, nb);
                assert_eq!(ta.bytes(), tb.bytes());
                assert_eq!(ta.dims(), tb.dims());
            }
        }
    }
}

// ---------------------------------------------------------------- detect + inspect

/// Every format `data` is detected as (without a name, and with each of
/// `names`, which break ties) that `keep` accepts, each once, and the
/// document `data` opens as in it ([`mlformats::Document::from_map`], as
/// `mlformats inspect` opens a file); formats it does not open in are
/// skipped.
fn documents(
    data: &[u8],
    names: &[&str],
    keep: impl Fn(mlformats::Format) -> bool,
) -> Vec<(mlformats::Format, mlformats::Document)> {
    use mlformats::{Document, Format, Input, ReadOptions, detect};
    use std::path::{Path, PathBuf};
    let named = names.iter().map(|n| {
        detect(Input::Named {
            bytes: data,
            name: Path::new(n),
        })
    });
    let mut formats: Vec<Format> = Vec::new();
    for f in std::iter::once(detect(Input::Bytes(data)))
        .chain(named)
        .flatten()
    {
        assert_eq!(Format::from_name(f.name()), Some(f));
        if keep(f) && !formats.contains(&f) {
            formats.push(f);
        }
    }
    let map = tensor_core::MappedFile::from_vec(data.to_vec());
    let open = |f: Format| {
        let path = Some(PathBuf::from("x"));
        Document::from_map(map.clone(), path, Some(f), &ReadOptions::default()).ok()
    };
    formats
        .into_iter()
        .filter_map(|f| Some((f, open(f)?)))
        .collect()
}

/// What `mlformats inspect FILE` and every library user do on any bytes:
/// detect the format (without a name, and with each name that breaks a
/// tie), open it through the library's one entry point
/// ([`mlformats::Document::from_map`]), then use everything it offers: the
/// contract's JSON (hashes every tensor), every tensor, casts to f32, the
/// typed graph, and re-encoding in the file's own format.
pub fn inspect(data: &[u8]) {
    let names = ["x.protobuf", "x.nntxt", "x.nnp", "x.npz", "x.bin"];
    for (f, doc) in documents(data, &names, |_| true) {
        let json = doc.inspect_json();
        assert_eq!(json["format"], f.name());
        assert_eq!(
            json["tensors"].as_array().map(Vec::len),
            Some(doc.stored().len())
        );
        for (_, t) in doc.tensors() {
            touch(t);
            if t.dtype().is_numeric() {
                assert_eq!(t.to_vec::<f32>().map(|v| v.len()).ok(), Some(t.numel()));
            }
        }
        if let Some(g) = doc.graph() {
            for graph in &g.graphs {
                let _ = graph.weights().count();
            }
        }
    }
}

// ---------------------------------------------------------------- ONNX import

/// What `mlformats convert model.onnx out.nnp|out.tsm` does on any bytes:
/// open them as ONNX, import the graph into NNabla and into TenniS, then
/// reopen what was written (the import refuses or writes a file that
/// opens; it never panics, aborts or runs without bound).
pub fn onnx_import(data: &[u8]) {
    use mlformats::{ConvertOptions, Document, Format};
    let Ok(doc) = Document::from_bytes(data.to_vec(), None, Some(Format::Onnx)) else {
        return;
    };
    for target in [Format::NnablaNnp, Format::TennisModule] {
        let Ok((bytes, _)) =
            mlformats::convert_document_to_bytes(&doc, target, &ConvertOptions::new())
        else {
            continue;
        };
        let back = Document::from_bytes(bytes, None, Some(target));
        assert!(back.is_ok(), "{target:?}: {:?}", back.err());
    }
}

// ---------------------------------------------------------------- ONNX export

/// What `mlformats convert model.nnp|.nntxt|.protobuf|.tsm out.onnx` does on
/// any bytes: detect the format (without a name, and with each name that
/// breaks a tie), open it ([`mlformats::Document::from_map`]), and when it
/// holds an NNabla network or a TenniS module, export the graph to ONNX
/// ([`mlformats::export::export_model`], operator set 13 and 20) and write
/// the model. The export refuses or writes; it never panics, aborts or runs
/// without bound.
pub fn graph_export(data: &[u8]) {
    use mlformats::Format;
    use mlformats::export::{ExportOptions, export_model, has_graph};
    let names = ["x.protobuf", "x.nntxt", "x.nnp", "x.tsm"];
    let graphs = |f: Format| {
        matches!(
            f,
            Format::NnablaNnp | Format::NnablaNntxt | Format::NnablaProtobuf | Format::TennisModule
        )
    };
    for (_, doc) in documents(data, &names, graphs) {
        if !has_graph(&doc) {
            continue;
        }
        for opts in [ExportOptions::new(), ExportOptions::new().opset(20)] {
            let Ok((model, summary)) = export_model(&doc, &opts) else {
                continue;
            };
            let _ = (summary.nodes, &summary.network);
            let mut out = Vec::new();
            let _ = mlformats::onnx::write_model(&mut out, &model);
        }
    }
}

// ---------------------------------------------------------------- shapes

/// Limits for the fuzzer: small enough that a bomb is refused in
/// milliseconds, large enough for the archives it builds honestly.
fn zip_limits() -> Limits {
    Limits::default()
        .with_max_alloc(64 << 20)
        .with_min_inflate_budget(8 << 20)
        .with_max_total_inflated(32 << 20)
}

/// Archives of the shape the fuzz input describes ([`shapes::zip_program`]:
/// many names for one member, repeated names, declared sizes up to 4 GiB,
/// deflated zeros), opened as `.npz` and as `.nnp`, whole and by slices,
/// every tensor read.
pub fn zip_shapes(data: &[u8]) {
    open_everywhere(
        &shapes::zip_program(data),
        &["x.npz", "x.nnp"],
        zip_limits(),
    );
}

/// Documents nested as deep as the fuzz input says
/// ([`shapes::nesting_program`]).
pub fn nesting(data: &[u8]) {
    let (bytes, name) = shapes::nesting_program(data);
    open_everywhere(&bytes, &[name], Limits::default());
}

/// `.h5` files with hostile link shapes ([`h5_shapes::h5_program`]): every
/// reader runs on them, and none lists a dataset object twice, however many
/// links name it (each object is visited once by its address).
pub fn h5_shapes(data: &[u8]) {
    use mlformats::nnp::{ReadOptions, h5};
    let shape = h5_shapes::h5_program(data);
    let bytes = &shape.bytes;
    nnabla_h5(bytes);
    if let Ok(params) = h5::parse_with(bytes, &ReadOptions::default()) {
        assert!(
            params.len() <= shape.datasets,
            "{} parameters listed from {} dataset objects",
            params.len(),
            shape.datasets
        );
    }
    let read = |at: u64, buf: &mut [u8]| {
        let s = usize::try_from(at)
            .ok()
            .and_then(|a| bytes.get(a..a.checked_add(buf.len())?));
        match s {
            Some(s) => {
                buf.copy_from_slice(s);
                Ok(())
            }
            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
        }
    };
    if let Ok(Some(located)) = h5::locate(bytes.len() as u64, read, &ReadOptions::default()) {
        assert!(located.len() <= shape.datasets);
    }
    open_everywhere(bytes, &["x.h5"], Limits::default());
}

/// Opens `bytes` under each name, whole and by slices, and reads every
/// tensor; only the absence of a panic (and of unbounded work) is checked.
pub fn open_everywhere(bytes: &[u8], names: &[&str], limits: Limits) {
    use mlformats::{Document, ReadOptions};
    let opts = ReadOptions::default().with_limits(limits);
    let map = MappedFile::from_vec(bytes.to_vec());
    for name in names {
        let path = std::path::PathBuf::from(name);
        if let Ok(doc) = Document::from_map(map.clone(), Some(path.clone()), None, &opts) {
            for (_, t) in doc.tensors() {
                touch(t);
            }
        }
        if let Ok(doc) = Document::open_at(bytes.to_vec(), Some(&path), None, &opts) {
            let mut buf = Vec::new();
            for (i, t) in doc.entries().iter().enumerate() {
                let mut at = 0;
                while at < t.numel() {
                    match doc.read_elements(i, at, 1 << 18, &mut buf) {
                        Ok(part) if part.numel() > 0 => at += part.numel() as u64,
                        _ => break,
                    }
                }
            }
        }
    }
}
