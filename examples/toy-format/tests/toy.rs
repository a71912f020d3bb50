//! The toy format, registered from outside `mlformats`, goes through the
//! library's own paths: open, detect, the format lists, convert and save
//! both ways, refusals and errors.

use std::path::Path;

use mlformats::{ConvertOptions, DType, Error, Format, FormatPlugin, Input};
use toy_format::{MAGIC, Toy, register, toy_bytes};

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A toy file with a 2x3 f32 tensor and a 2 i64 tensor.
fn sample() -> Vec<u8> {
    let w = f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.5]);
    let b: Vec<u8> = [7i64, -8].iter().flat_map(|x| x.to_le_bytes()).collect();
    toy_bytes(&[
        ("layer/w", DType::F32, &[2, 3], &w),
        ("layer/b", DType::I64, &[2], &b),
    ])
}

#[test]
fn open_reads_a_toy_file_through_the_plugin() {
    let toy = register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.toyt");
    std::fs::write(&p, sample()).unwrap();
    let doc = mlformats::open(&p).unwrap();
    assert_eq!(doc.format(), toy);
    assert_eq!(doc.format().name(), "toy");
    let names: Vec<&str> = doc.tensors().map(|(n, _)| n).collect();
    assert_eq!(names, ["layer/w", "layer/b"]);
    let w = doc.tensor("layer/w").unwrap();
    assert_eq!(w.dtype(), DType::F32);
    assert_eq!(w.dims(), [2, 3]);
    assert_eq!(w.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.5]);
    let b = doc.tensor("layer/b").unwrap();
    assert_eq!(b.to_vec::<i64>().unwrap(), [7, -8]);
    assert_eq!(doc.metadata()["toy_version"], 1);
    assert!(doc.graph().is_none());
    let json = doc.inspect_json();
    assert_eq!(json["format"], "toy");
    assert_eq!(doc.summary().parameters, 8);
}

#[test]
fn toy_to_safetensors_and_back() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let toy = dir.path().join("m.toyt");
    let st = dir.path().join("m.safetensors");
    let again = dir.path().join("again.toyt");
    std::fs::write(&toy, sample()).unwrap();

    mlformats::convert(&toy, &st, &ConvertOptions::new()).unwrap();
    let doc = mlformats::open(&st).unwrap();
    assert_eq!(doc.format(), Format::Safetensors);
    assert_eq!(
        doc.tensor("layer/w").unwrap().to_vec::<f32>().unwrap(),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.5]
    );
    assert_eq!(doc.tensor("layer/b").unwrap().dims(), [2]);

    mlformats::convert(&st, &again, &ConvertOptions::new()).unwrap();
    // the plugin's writer gives back the very bytes written by hand
    assert_eq!(std::fs::read(&again).unwrap(), sample());
}

#[test]
fn save_and_convert_select_and_cast_on_the_way_to_toy() {
    let toy = register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("h.safetensors");
    let half: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|x| mlformats::tensor_core::half::f16::from_f32(*x).to_le_bytes())
        .collect();
    let h = mlformats::Tensor::new(DType::F16, vec![2], &half[..]).unwrap();
    let u = mlformats::Tensor::new(DType::U8, vec![3], &[9u8, 8, 7][..]).unwrap();
    mlformats::save(&st, [("h", &h), ("u", &u)]).unwrap();

    // toy has no f16: refused before anything is written
    let out = dir.path().join("h.toyt");
    let e = mlformats::convert(&st, &out, &ConvertOptions::new()).unwrap_err();
    match e {
        Error::CannotHoldTensors { target, tensors } => {
            assert_eq!(target, toy);
            assert_eq!(tensors.len(), 1);
            assert_eq!(tensors[0].0, "h");
            assert!(tensors[0].1.contains("toy has no f16"), "{}", tensors[0].1);
        }
        other => panic!("{other}"),
    }
    assert!(!out.exists());

    // cast to f32, and a format named by --to rather than the extension
    let out = dir.path().join("h.bin");
    let opts = ConvertOptions::new().dtype(DType::F32).to(toy);
    mlformats::convert(&st, &out, &opts).unwrap();
    let doc = mlformats::Document::from_bytes(std::fs::read(&out).unwrap(), None, None).unwrap();
    assert_eq!(doc.format(), toy);
    assert_eq!(
        doc.tensor("h").unwrap().to_vec::<f32>().unwrap(),
        [1.5, -2.0]
    );
    assert_eq!(doc.tensor("u").unwrap().bytes(), [9, 8, 7]);

    // save names it by the extension
    let saved = dir.path().join("u.toyt");
    mlformats::save(&saved, [("u", &u)]).unwrap();
    let u_file = toy_bytes(&[("u", DType::U8, &[3], &[9, 8, 7])]);
    assert_eq!(std::fs::read(&saved).unwrap(), u_file);

    // the in-memory path writes through the same plugin
    let only_u = ConvertOptions::new().only("u");
    let (bytes, _) = mlformats::convert_document_to_bytes(&doc, toy, &only_u).unwrap();
    assert_eq!(bytes, u_file);
}

#[test]
fn detected_by_magic_named_by_extension() {
    let toy = register().unwrap();
    let bytes = sample();
    assert_eq!(mlformats::detect(&bytes[..]), Some(toy));
    // the magic wins over another format's name
    let named = |b: &[u8], n: &str| {
        mlformats::detect(Input::Named {
            bytes: b,
            name: Path::new(n),
        })
    };
    assert_eq!(named(&bytes, "m.safetensors"), Some(toy));
    assert_eq!(named(&bytes, "m.toyt"), Some(toy));
    // the extension names it, but without the magic nothing is guessed
    assert_eq!(Format::from_extension(Path::new("a/m.TOYT")), Some(toy));
    assert_eq!(named(b"not a toy", "m.toyt"), None);
    assert_eq!(toy.extension(), "toyt");
    assert_eq!(toy.extensions(), ["toyt"]);
    // built-in files are detected as before
    assert_eq!(
        mlformats::detect(&b"network { }"[..]),
        Some(Format::NnablaNntxt)
    );
}

#[test]
fn the_format_lists_include_it() {
    let toy = register().unwrap();
    assert_eq!(
        register().unwrap(),
        toy,
        "registering twice gives one format"
    );
    assert!(matches!(toy, Format::External(e) if e.plugin().name() == "toy"));
    for n in ["toy", "TOY", "toy-tensors", "toyt"] {
        assert_eq!(Format::from_name(n), Some(toy), "{n}");
    }
    let all = Format::all();
    assert_eq!(&all[..Format::ALL.len()], Format::ALL);
    assert!(all.contains(&toy));
    assert!(!Format::ALL.contains(&toy));
    // the list the CLI prints (`--to`'s choices, error messages)
    let names = Format::names();
    assert_eq!(names.first(), Some(&"cvm-params"));
    assert!(names.contains(&"toy"), "{names:?}");
    assert_eq!(toy.aliases().collect::<Vec<_>>(), ["toy-tensors", "toyt"]);
    assert_eq!(toy.to_string(), "toy");
    assert_eq!(toy.feature(), "");
    assert!(!toy.is_nnabla());
    assert_eq!(format!("{toy:?}"), "External(ExternalFormat(\"toy\"))");
}

/// A plugin whose names collide with built-in formats.
struct Impostor(&'static str, &'static [&'static str]);

impl FormatPlugin for Impostor {
    fn name(&self) -> &'static str {
        self.0
    }
    fn extensions(&self) -> &'static [&'static str] {
        self.1
    }
    fn detect(&self, head: &[u8]) -> bool {
        head.starts_with(b"IMPOSTOR")
    }
    fn dtypes(&self) -> &'static [DType] {
        &[]
    }
    fn read<'a>(
        &self,
        _: &'a [u8],
        _: &mlformats::tensor_core::Limits,
    ) -> mlformats::Result<mlformats::PluginRead<'a>> {
        Err(Error::plugin(self.0, "never read"))
    }
    fn write(
        &self,
        _: &mut mlformats::TensorsToWrite<'_, '_>,
        _: &mut dyn std::io::Write,
    ) -> mlformats::Result<()> {
        Err(Error::plugin(self.0, "never written"))
    }
}

static IMPOSTOR_NPZ: Impostor = Impostor("numpy2", &["npz"]);
static IMPOSTOR_ST: Impostor = Impostor("st", &["st2"]);
static IMPOSTOR_UPPER: Impostor = Impostor("Loud", &["loud"]);
static IMPOSTOR_NO_EXT: Impostor = Impostor("noext", &[]);

#[test]
fn names_of_other_formats_are_refused() {
    let toy = register().unwrap();
    match mlformats::register_format(&IMPOSTOR_NPZ).unwrap_err() {
        Error::FormatNameTaken { name, by } => {
            assert_eq!((name.as_str(), by), ("npz", Some(Format::Npz)));
        }
        other => panic!("{other}"),
    }
    match mlformats::register_format(&IMPOSTOR_ST).unwrap_err() {
        Error::FormatNameTaken { name, by } => {
            assert_eq!((name.as_str(), by), ("st", Some(Format::Safetensors)));
        }
        other => panic!("{other}"),
    }
    for p in [&IMPOSTOR_UPPER, &IMPOSTOR_NO_EXT] {
        let e = mlformats::register_format(p).unwrap_err();
        assert!(matches!(e, Error::FormatNameTaken { by: None, .. }), "{e}");
    }
    // none of them got in
    assert_eq!(Format::all().len(), Format::ALL.len() + 1);
    assert_eq!(Format::from_name("numpy2"), None);
    assert_eq!(Format::from_name("npz"), Some(Format::Npz));
    assert_eq!(Format::from_name("toy"), Some(toy));
}

#[test]
fn broken_toy_files_are_plugin_errors() {
    let toy = register().unwrap();
    let full = sample();
    // every truncation is an error, never a panic
    for n in 4..full.len() {
        let e = mlformats::Document::from_bytes(full[..n].to_vec(), None, Some(toy)).unwrap_err();
        assert!(
            matches!(e, Error::Plugin { format: "toy", .. } | Error::Core(_)),
            "{n}: {e}"
        );
    }
    let mut extra = full.clone();
    extra.push(0);
    let e = mlformats::Document::from_bytes(extra, None, None).unwrap_err();
    assert_eq!(e.to_string(), "toy: 1 bytes after the last tensor");
    // a huge count is bounded by the limits before anything is read
    let mut many = MAGIC.to_vec();
    many.extend(u32::MAX.to_le_bytes());
    assert!(mlformats::Document::from_bytes(many, None, None).is_err());
    // dims whose product overflows
    let mut big = MAGIC.to_vec();
    big.extend(1u32.to_le_bytes());
    big.extend(1u16.to_le_bytes());
    big.push(b'x');
    big.extend([0u8, 2]);
    big.extend(u64::MAX.to_le_bytes());
    big.extend(u64::MAX.to_le_bytes());
    let e = mlformats::Document::from_bytes(big, None, None).unwrap_err();
    assert!(matches!(e, Error::Plugin { .. }), "{e}");
    assert_eq!(Toy.name(), "toy");
}

#[test]
fn graph_options_are_refused_for_a_parameter_format() {
    register().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let toy = dir.path().join("m.toyt");
    std::fs::write(&toy, sample()).unwrap();
    let out = dir.path().join("m.safetensors");
    let e = mlformats::convert(&toy, &out, &ConvertOptions::new().network("main")).unwrap_err();
    assert!(matches!(e, Error::OptionDoesNotApply { .. }), "{e:?}");
    assert!(!out.exists());
}
