//! The formats `mlformats` knows, each described once.
//!
//! [`TABLE`] holds one [`Description`] per [`Format`]: its contract name,
//! the other names it goes by, its file extensions, its cargo feature and
//! what the rest of the crate decides per format (NNabla's family, the kind
//! of graph its files hold, how far its extension is trusted by
//! [`detect`](crate::detect)). Every method of [`Format`] reads the table,
//! so adding a format is a variant, a row here and an arm in
//! `codec::codec`. Formats from outside the crate are registered at run
//! time ([`crate::register_format`]) and denoted by [`Format::External`]:
//! the same methods read their plugin instead.

use crate::plugin::ExternalFormat;

/// A file format `mlformats` knows, named as the `inspect --json` contract names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// CVM-Runtime / Apache TVM parameter dictionary (`.params`).
    CvmParams,
    /// primitiv MessagePack file (any of its five data types).
    Primitiv,
    /// NNabla `.nnp` zip archive.
    NnablaNnp,
    /// NNabla protobuf text (`.nntxt`, `.prototxt`).
    NnablaNntxt,
    /// NNabla binary protobuf (`.protobuf`).
    NnablaProtobuf,
    /// NNabla HDF5 parameter file (`.h5`).
    NnablaH5,
    /// TenniS module (`.tsm`).
    TennisModule,
    /// Hugging Face `.safetensors`.
    Safetensors,
    /// numpy `.npz` (a zip of `.npy` arrays).
    Npz,
    /// ONNX model (`.onnx`).
    Onnx,
    /// A format added from outside the crate ([`crate::register_format`]):
    /// parameters only, read and written by its [`crate::FormatPlugin`].
    External(ExternalFormat),
}

/// The kind of graph the files of a format hold (when they hold one): how
/// summaries and reports word it and which ONNX exporter takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GraphKind {
    /// Parameters only: no graph.
    None,
    /// NNabla networks: functions and variables, run by executors.
    Network,
    /// A TenniS module: one graph of nodes and values.
    Module,
    /// An ONNX graph: nodes and values, initializers among older files' inputs.
    Graph,
}

/// How [`detect`](crate::detect) takes a file's extension when no magic
/// number or signature matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ByExtension {
    /// The extension names the format (files of it have no magic to look for).
    Decides,
    /// The format has a header that was not there: the file is not of it,
    /// and nothing else is guessed from its content.
    NeedsHeader,
    /// The content is looked at further (text, ONNX and safetensors shapes).
    Hint,
}

/// Everything the crate says about one format.
#[derive(Debug)]
pub(crate) struct Description {
    /// The variant described (the table is in declaration order).
    pub format: Format,
    /// The contract name (`inspect --json`'s `format`); never changes.
    pub name: &'static str,
    /// Other names `--to`/`--from` take, besides the extensions.
    pub aliases: &'static [&'static str],
    /// The file extensions (without the dot, lower case); the first is the
    /// one written. Each is a name too.
    pub extensions: &'static [&'static str],
    /// The cargo feature of the `mlformats` crate that reads and writes it.
    pub feature: &'static str,
    /// One of NNabla's four encodings of one model.
    pub nnabla: bool,
    /// The graph its files hold.
    pub graph: GraphKind,
    /// How detection takes its extension.
    pub by_extension: ByExtension,
}

/// Every built-in format, in [`Format`]'s declaration order.
pub(crate) const TABLE: [Description; 10] = [
    Description {
        format: Format::CvmParams,
        name: "cvm-params",
        aliases: &["cvm", "tvm"],
        extensions: &["params"],
        feature: "cvm",
        nnabla: false,
        graph: GraphKind::None,
        by_extension: ByExtension::Hint,
    },
    Description {
        format: Format::Primitiv,
        name: "primitiv",
        aliases: &[],
        extensions: &["data", "msgpack", "primitiv"],
        feature: "primitiv",
        nnabla: false,
        graph: GraphKind::None,
        by_extension: ByExtension::NeedsHeader,
    },
    Description {
        format: Format::NnablaNnp,
        name: "nnabla-nnp",
        aliases: &[],
        extensions: &["nnp"],
        feature: "nnp",
        nnabla: true,
        graph: GraphKind::Network,
        by_extension: ByExtension::Hint,
    },
    Description {
        format: Format::NnablaNntxt,
        name: "nnabla-nntxt",
        aliases: &[],
        extensions: &["nntxt", "prototxt", "pbtxt"],
        feature: "nnabla",
        nnabla: true,
        graph: GraphKind::Network,
        by_extension: ByExtension::Decides,
    },
    Description {
        format: Format::NnablaProtobuf,
        name: "nnabla-protobuf",
        aliases: &[],
        extensions: &["protobuf", "pb"],
        feature: "nnabla",
        nnabla: true,
        graph: GraphKind::Network,
        by_extension: ByExtension::Decides,
    },
    Description {
        format: Format::NnablaH5,
        name: "nnabla-h5",
        aliases: &[],
        extensions: &["h5", "hdf5"],
        feature: "nnp",
        nnabla: true,
        // parameters only, but of NNabla's family: asked for a network, it
        // says it holds none
        graph: GraphKind::Network,
        by_extension: ByExtension::Hint,
    },
    Description {
        format: Format::TennisModule,
        name: "tennis-module",
        aliases: &["tennis"],
        extensions: &["tsm"],
        feature: "tennis",
        nnabla: false,
        graph: GraphKind::Module,
        by_extension: ByExtension::Hint,
    },
    Description {
        format: Format::Safetensors,
        name: "safetensors",
        aliases: &["st"],
        extensions: &["safetensors"],
        feature: "safetensors",
        nnabla: false,
        graph: GraphKind::None,
        by_extension: ByExtension::Hint,
    },
    Description {
        format: Format::Npz,
        name: "npz",
        aliases: &["numpy"],
        extensions: &["npz"],
        feature: "npz",
        nnabla: false,
        graph: GraphKind::None,
        by_extension: ByExtension::Hint,
    },
    Description {
        format: Format::Onnx,
        name: "onnx",
        aliases: &[],
        extensions: &["onnx"],
        feature: "onnx",
        nnabla: false,
        graph: GraphKind::Graph,
        by_extension: ByExtension::Decides,
    },
];

/// A built-in format's row of [`TABLE`] (its declaration index), or the
/// registered format.
const fn row(f: Format) -> std::result::Result<usize, ExternalFormat> {
    Ok(match f {
        Format::CvmParams => 0,
        Format::Primitiv => 1,
        Format::NnablaNnp => 2,
        Format::NnablaNntxt => 3,
        Format::NnablaProtobuf => 4,
        Format::NnablaH5 => 5,
        Format::TennisModule => 6,
        Format::Safetensors => 7,
        Format::Npz => 8,
        Format::Onnx => 9,
        Format::External(e) => return Err(e),
    })
}

// The table is in declaration order, so a format's row is at its index.
const _: () = {
    let mut i = 0;
    while i < TABLE.len() {
        assert!(
            matches!(row(TABLE[i].format), Ok(r) if r == i),
            "TABLE is out of order"
        );
        assert!(
            !TABLE[i].extensions.is_empty(),
            "a format without an extension"
        );
        i += 1;
    }
};

/// [`Format::ALL`]'s array, read off the table.
const ALL_FORMATS: [Format; TABLE.len()] = {
    let mut out = [Format::CvmParams; TABLE.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = TABLE[i].format;
        i += 1;
    }
    out
};

impl Format {
    /// Every built-in format (those of this crate's features, whether
    /// enabled or not). A slice: more may come in a minor version.
    /// [`Format::all`] adds the registered ones.
    pub const ALL: &'static [Format] = &ALL_FORMATS;

    /// Every format: the built-in ones ([`Format::ALL`]), then those
    /// registered ([`crate::register_format`]), in registration order.
    pub fn all() -> Vec<Format> {
        let mut all = Format::ALL.to_vec();
        all.extend(crate::plugin::registered());
        all
    }

    /// This format's row of the table, or its plugin.
    pub(crate) fn description(self) -> std::result::Result<&'static Description, ExternalFormat> {
        row(self).map(|i| &TABLE[i])
    }

    /// Every format's name ([`Format::all`]), for messages and help texts.
    pub fn names() -> Vec<&'static str> {
        Format::all().iter().map(|f| f.name()).collect()
    }

    /// The cargo feature of the `mlformats` crate that reads and writes it
    /// (empty for a registered format: none).
    pub fn feature(self) -> &'static str {
        match self.description() {
            Ok(d) => d.feature,
            Err(_) => "",
        }
    }

    /// True for NNabla's four encodings of one model (text, binary, `.nnp`, `.h5`).
    pub fn is_nnabla(self) -> bool {
        self.description().is_ok_and(|d| d.nnabla)
    }

    /// The extension a file of this format is written with (without the dot).
    pub fn extension(self) -> &'static str {
        // every format has an extension (the table's rows are checked at
        // compile time, plugins when registered)
        match self.extensions().first() {
            Some(e) => e,
            None => self.name(),
        }
    }

    /// Every extension files of this format have (without the dot, lower
    /// case), the one written first. [`Format::from_extension`] takes each.
    pub fn extensions(self) -> &'static [&'static str] {
        match self.description() {
            Ok(d) => d.extensions,
            Err(e) => e.plugin().extensions(),
        }
    }

    /// The contract's name: `cvm-params`, `primitiv`, `nnabla-nnp`, …,
    /// `safetensors`, `npz` (a registered format's own name).
    pub fn name(self) -> &'static str {
        match self.description() {
            Ok(d) => d.name,
            Err(e) => e.plugin().name(),
        }
    }

    /// The names besides the contract's that [`Format::from_name`] takes
    /// (lower case): its aliases (`cvm`, `tvm`, `tennis`, `st`, `numpy`),
    /// then its extensions (`params`, `nnp`, `pb`, `hdf5`, …).
    pub fn aliases(self) -> impl Iterator<Item = &'static str> {
        let name = self.name();
        let aliases = match self.description() {
            Ok(d) => d.aliases,
            Err(e) => e.plugin().aliases(),
        };
        aliases
            .iter()
            .chain(self.extensions())
            .copied()
            .filter(move |n| *n != name)
    }

    /// The kind of graph its files hold.
    pub(crate) fn graph_kind(self) -> GraphKind {
        match self.description() {
            Ok(d) => d.graph,
            Err(_) => GraphKind::None,
        }
    }

    /// How detection takes its extension.
    pub(crate) fn by_extension(self) -> ByExtension {
        match self.description() {
            Ok(d) => d.by_extension,
            Err(e) if e.plugin().extension_decides() => ByExtension::Decides,
            Err(_) => ByExtension::NeedsHeader,
        }
    }

    /// The format with the contract name, an alias or an extension as a
    /// name, in any case (`cvm-params`, `params`, `cvm`, `tvm`, `data`,
    /// `nnp`, `nntxt`, `prototxt`, `pbtxt`, `protobuf`, `pb`, `h5`, `hdf5`,
    /// `tsm`, `tennis`, `st`, `numpy`, …, and registered formats' names).
    pub fn from_name(name: &str) -> Option<Format> {
        let n = name.to_ascii_lowercase();
        Format::all()
            .into_iter()
            .find(|f| f.name() == n || f.aliases().any(|a| a == n))
    }

    /// The format a file extension names (for output files), if any.
    pub fn from_extension(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Format::all()
            .into_iter()
            .find(|f| f.extensions().contains(&ext.as_str()))
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Every variant, by an exhaustive match: a new variant fails to compile
    /// here until it is listed, and the test fails until it is in the table.
    fn listed(f: Format) -> bool {
        match f {
            Format::CvmParams
            | Format::Primitiv
            | Format::NnablaNnp
            | Format::NnablaNntxt
            | Format::NnablaProtobuf
            | Format::NnablaH5
            | Format::TennisModule
            | Format::Safetensors
            | Format::Npz
            | Format::Onnx => Format::ALL.contains(&f),
            Format::External(_) => !Format::ALL.contains(&f),
        }
    }

    #[test]
    fn all_covers_every_variant_once() {
        let every = [
            Format::CvmParams,
            Format::Primitiv,
            Format::NnablaNnp,
            Format::NnablaNntxt,
            Format::NnablaProtobuf,
            Format::NnablaH5,
            Format::TennisModule,
            Format::Safetensors,
            Format::Npz,
            Format::Onnx,
        ];
        for f in every {
            assert!(listed(f), "{f:?} is not in Format::ALL");
            assert_eq!(f.description().map(|d| d.format).ok(), Some(f));
        }
        assert_eq!(Format::ALL, &every[..]);
    }

    #[test]
    fn every_name_alias_and_extension_parses_back() {
        for &f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
            assert_eq!(Format::from_name(&f.name().to_ascii_uppercase()), Some(f));
            for a in f.aliases() {
                assert_eq!(Format::from_name(a), Some(f), "alias {a}");
            }
            for e in f.extensions() {
                let p = format!("model.{}", e.to_ascii_uppercase());
                assert_eq!(Format::from_extension(Path::new(&p)), Some(f), "{p}");
                assert_eq!(Format::from_name(e), Some(f), "extension {e} as a name");
            }
            assert_eq!(f.extensions()[0], f.extension());
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!(Format::from_name("zzz"), None);
        assert_eq!(Format::from_name(""), None);
        assert_eq!(Format::from_extension(Path::new("model")), None);
        assert_eq!(Format::from_extension(Path::new("model.st")), None);
    }

    #[test]
    fn no_name_names_two_formats() {
        let mut seen = std::collections::HashMap::new();
        for &f in Format::ALL {
            for n in std::iter::once(f.name()).chain(f.aliases()) {
                assert_eq!(n, n.to_ascii_lowercase(), "{n} is not lower case");
                if let Some(g) = seen.insert(n, f) {
                    assert_eq!(g, f, "{n} names {g} and {f}");
                }
            }
        }
    }

    #[test]
    fn the_names_that_worked_before_the_table_still_do() {
        let before = [
            ("cvm-params", Format::CvmParams),
            ("params", Format::CvmParams),
            ("cvm", Format::CvmParams),
            ("tvm", Format::CvmParams),
            ("primitiv", Format::Primitiv),
            ("data", Format::Primitiv),
            ("nnabla-nnp", Format::NnablaNnp),
            ("nnp", Format::NnablaNnp),
            ("nnabla-nntxt", Format::NnablaNntxt),
            ("nntxt", Format::NnablaNntxt),
            ("prototxt", Format::NnablaNntxt),
            ("nnabla-protobuf", Format::NnablaProtobuf),
            ("protobuf", Format::NnablaProtobuf),
            ("nnabla-h5", Format::NnablaH5),
            ("h5", Format::NnablaH5),
            ("tennis-module", Format::TennisModule),
            ("tsm", Format::TennisModule),
            ("tennis", Format::TennisModule),
            ("safetensors", Format::Safetensors),
            ("st", Format::Safetensors),
            ("npz", Format::Npz),
            ("numpy", Format::Npz),
            ("onnx", Format::Onnx),
            // the CLI offered these; they are extensions, so names now
            ("pb", Format::NnablaProtobuf),
            ("pbtxt", Format::NnablaNntxt),
            ("hdf5", Format::NnablaH5),
        ];
        for (n, f) in before {
            assert_eq!(Format::from_name(n), Some(f), "{n}");
        }
        let extensions = [
            ("params", Format::CvmParams),
            ("nnp", Format::NnablaNnp),
            ("nntxt", Format::NnablaNntxt),
            ("prototxt", Format::NnablaNntxt),
            ("pbtxt", Format::NnablaNntxt),
            ("protobuf", Format::NnablaProtobuf),
            ("pb", Format::NnablaProtobuf),
            ("h5", Format::NnablaH5),
            ("hdf5", Format::NnablaH5),
            ("tsm", Format::TennisModule),
            ("data", Format::Primitiv),
            ("msgpack", Format::Primitiv),
            ("primitiv", Format::Primitiv),
            ("safetensors", Format::Safetensors),
            ("npz", Format::Npz),
            ("onnx", Format::Onnx),
        ];
        for (e, f) in extensions {
            let p = format!("x.{e}");
            assert_eq!(Format::from_extension(Path::new(&p)), Some(f), "{p}");
        }
        let written: Vec<&str> = Format::ALL.iter().map(|f| f.extension()).collect();
        assert_eq!(
            written,
            [
                "params",
                "data",
                "nnp",
                "nntxt",
                "protobuf",
                "h5",
                "tsm",
                "safetensors",
                "npz",
                "onnx"
            ]
        );
        let features: Vec<&str> = Format::ALL.iter().map(|f| f.feature()).collect();
        assert_eq!(
            features,
            [
                "cvm",
                "primitiv",
                "nnp",
                "nnabla",
                "nnabla",
                "nnp",
                "tennis",
                "safetensors",
                "npz",
                "onnx"
            ]
        );
        let nnabla: Vec<Format> = Format::ALL
            .iter()
            .copied()
            .filter(|f| f.is_nnabla())
            .collect();
        assert_eq!(
            nnabla,
            [
                Format::NnablaNnp,
                Format::NnablaNntxt,
                Format::NnablaProtobuf,
                Format::NnablaH5
            ]
        );
    }
}
