//! Links from an operator to its reference documentation: the one mapping
//! that the layout JSON (`doc` of a box), the SVG (a link around a box)
//! and the viewer page use.

use crate::Format;
use crate::format::GraphKind;

/// Whose operators a graph uses, which decides where their documentation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OpSet {
    /// ONNX operators; those of the default domain (`ai.onnx`) link to
    /// `https://onnx.ai/onnx/operators/onnx__<Op>.html`.
    Onnx,
    /// NNabla functions; they link to their entry in the function list of
    /// nnabla's Python API reference (`nnabla.functions.<snake_name>`).
    Nnabla,
    /// TenniS operators: no stable public reference exists, so no link.
    Tennis,
    /// Unknown: no link.
    #[default]
    Unknown,
}

impl OpSet {
    /// The operators of the graphs a format's files hold.
    pub fn of_format(format: Format) -> OpSet {
        match format.graph_kind() {
            GraphKind::Graph => OpSet::Onnx,
            GraphKind::Network => OpSet::Nnabla,
            GraphKind::Module => OpSet::Tennis,
            GraphKind::None => OpSet::Unknown,
        }
    }
}

/// The address of the reference documentation of operator `op` of `set`,
/// when there is a stable one. `domain` is the ONNX node's domain (`""` or
/// `ai.onnx` for the default one; other domains have no link).
///
/// ```
/// use mlformats::layout::{OpSet, doc_url};
/// assert_eq!(
///     doc_url(OpSet::Onnx, "", "Conv").as_deref(),
///     Some("https://onnx.ai/onnx/operators/onnx__Conv.html")
/// );
/// assert_eq!(
///     doc_url(OpSet::Nnabla, "", "MaxPooling").as_deref(),
///     Some("https://nnabla.readthedocs.io/en/latest/python/api/function.html#nnabla.functions.max_pooling")
/// );
/// assert_eq!(doc_url(OpSet::Onnx, "com.microsoft", "FusedConv"), None);
/// assert_eq!(doc_url(OpSet::Tennis, "", "conv2d"), None);
/// ```
pub fn doc_url(set: OpSet, domain: &str, op: &str) -> Option<String> {
    // operator names are identifiers: anything else gets no link
    let plain = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
    };
    if !plain(op) {
        return None;
    }
    match set {
        OpSet::Onnx if domain.is_empty() || domain == "ai.onnx" => {
            Some(format!("https://onnx.ai/onnx/operators/onnx__{op}.html"))
        }
        OpSet::Nnabla => Some(format!(
            "https://nnabla.readthedocs.io/en/latest/python/api/function.html#nnabla.functions.{}",
            nnabla_python_name(op)
        )),
        _ => None,
    }
}

/// What a conversion of ours does with an operator: one row of the
/// published support tables (`IMPORT_SUPPORT.md`, `SUPPORT.md` of
/// graph-translate), which are generated from the same operator tables.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpSupport {
    /// The direction, e.g. `ONNX → NNabla`, `→ ONNX`.
    pub direction: String,
    /// Whether the conversion lowers the operator (false: refused).
    pub lowered: bool,
    /// The operators written, the opsets, the attributes read and the
    /// limits; or why the operator is refused.
    pub text: String,
    /// The operators written, as the table names them (empty when
    /// refused, and for ONNX control flow, rewritten before lowering).
    pub writes: String,
}

/// What our conversions do with operator `op` of `set` (ONNX operators of
/// the default domain: the imports into NNabla and TenniS; NNabla
/// functions and TenniS operators: the export to ONNX); empty when the
/// graph translation is not built in.
///
/// ```
/// use mlformats::layout::{OpSet, op_support};
/// let rows = op_support(OpSet::Onnx, "", "Conv");
/// assert!(rows.iter().any(|r| r.direction == "ONNX → NNabla" && r.lowered));
/// ```
pub fn op_support(set: OpSet, domain: &str, op: &str) -> Vec<OpSupport> {
    #[cfg(feature = "onnx")]
    {
        use graph_translate::about;
        let rows = match set {
            OpSet::Onnx if domain.is_empty() || domain == "ai.onnx" => about::onnx_operator(op),
            #[cfg(feature = "nnabla")]
            OpSet::Nnabla => about::nnabla_function(op),
            #[cfg(feature = "tennis")]
            OpSet::Tennis => about::tennis_operator(op),
            _ => Vec::new(),
        };
        rows.into_iter()
            .map(|c| OpSupport {
                direction: c.direction.to_string(),
                lowered: c.lowered,
                text: c.text,
                writes: c.writes,
            })
            .collect()
    }
    #[cfg(not(feature = "onnx"))]
    {
        let _ = (set, domain, op);
        Vec::new()
    }
}

/// The longest description [`describe`] gives, in characters.
const DESCRIPTION_CHARS: usize = 160;

/// The most characters of the operators one conversion writes that a
/// description quotes.
const WRITES_CHARS: usize = 64;

/// A one-line description of operator `op` of `set`, drawn from the
/// support tables ([`op_support`]): what it becomes in each conversion of
/// ours (an ONNX operator in NNabla and TenniS, an NNabla function or a
/// TenniS operator in ONNX), or that a conversion does not take it. `None`
/// when no table speaks of the operator set (an unknown set, an ONNX
/// domain other than the default one, the graph translation not built in).
///
/// ```
/// use mlformats::layout::{OpSet, describe};
/// let conv = describe(OpSet::Onnx, "", "Conv").unwrap();
/// assert!(conv.starts_with("ONNX Conv → NNabla Convolution"), "{conv}");
/// assert_eq!(
///     describe(OpSet::Nnabla, "", "Convolution").as_deref(),
///     Some("NNabla Convolution → ONNX Conv")
/// );
/// assert_eq!(describe(OpSet::Onnx, "com.microsoft", "FusedConv"), None);
/// ```
pub fn describe(set: OpSet, domain: &str, op: &str) -> Option<String> {
    describe_rows(set, op, &op_support(set, domain, op))
}

/// [`describe`] from the support rows of `op`, already looked up.
pub(crate) fn describe_rows(set: OpSet, op: &str, rows: &[OpSupport]) -> Option<String> {
    let source = match set {
        OpSet::Onnx => "ONNX",
        OpSet::Nnabla => "NNabla",
        OpSet::Tennis => "TenniS",
        OpSet::Unknown => return None,
    };
    if rows.is_empty() {
        return None;
    }
    // the target of a direction: `ONNX → NNabla` → `NNabla`
    let target = |c: &OpSupport| {
        c.direction
            .rsplit('→')
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let mut into = Vec::new();
    let mut refused = Vec::new();
    let mut rewritten = None;
    for c in rows {
        if !c.lowered {
            refused.push(target(c));
        } else if c.writes.is_empty() {
            rewritten.get_or_insert(c.text.as_str());
        } else {
            into.push(format!(
                "{} {}",
                target(c),
                shorten(&c.writes, WRITES_CHARS)
            ));
        }
    }
    let verb = if set == OpSet::Onnx {
        "not imported into"
    } else {
        "not exported to"
    };
    let mut parts = Vec::new();
    if !into.is_empty() {
        parts.push(into.join("; "));
    }
    if let Some(text) = rewritten {
        parts.push(text.to_string());
    }
    if !refused.is_empty() {
        parts.push(format!("{verb} {}", refused.join(" or ")));
    }
    let sep = if into.is_empty() { ": " } else { " → " };
    Some(shorten(
        &format!("{source} {op}{sep}{}", parts.join("; ")),
        DESCRIPTION_CHARS,
    ))
}

/// `s` cut to at most `max` characters, at the last `, ` or space before
/// the cut when there is one, with `…` for what is left out.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    let last = head
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(head.len(), |(i, _)| i);
    let end = head
        .rfind(", ")
        .or_else(|| head.rfind(' '))
        .filter(|&i| i > 0)
        .unwrap_or(last);
    format!("{}…", head[..end].trim_end_matches([',', ';', ' ']))
}

/// Acronyms of NNabla function names that the Python name writes as one
/// word (`LeakyReLU` → `leaky_relu`, `PReLU` → `prelu`).
const ACRONYMS: &[(&str, &str)] = &[
    ("PReLU", "Prelu"),
    ("CReLU", "Crelu"),
    ("ReLU", "Relu"),
    ("SELU", "Selu"),
    ("CELU", "Celu"),
    ("GELU", "Gelu"),
    ("ELU", "Elu"),
    ("LSTM", "Lstm"),
    ("GRU", "Gru"),
    ("RNN", "Rnn"),
    ("ISTFT", "Istft"),
    ("STFT", "Stft"),
    ("IFFT", "Ifft"),
    ("FFT", "Fft"),
    ("ACos", "Acos"),
    ("ASin", "Asin"),
    ("ATan", "Atan"),
    ("SoftPlus", "Softplus"),
    ("SoftSign", "Softsign"),
];

/// The Python name (`nnabla.functions.<name>`) of an NNabla function as
/// network files name it: `MaxPooling` → `max_pooling`, `ReLU` → `relu`,
/// `RSubScalar` → `r_sub_scalar`, `Add2` → `add2`.
pub(crate) fn nnabla_python_name(op: &str) -> String {
    let mut s = op.to_string();
    for (from, to) in ACRONYMS {
        s = s.replace(from, to);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(chars.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::nnabla_python_name as py;
    use super::shorten;

    #[test]
    fn long_text_is_cut_at_a_word() {
        assert_eq!(shorten("Abs", 10), "Abs");
        assert_eq!(
            shorten("Reshape, Transpose, Concatenate", 20),
            "Reshape, Transpose…"
        );
        assert_eq!(shorten("abcdefghijkl", 5), "abcd…");
        assert_eq!(shorten("αβγδεζηθ", 4), "αβγ…");
    }

    #[test]
    fn nnabla_names_as_python_writes_them() {
        for (op, name) in [
            ("Convolution", "convolution"),
            ("MaxPooling", "max_pooling"),
            ("GlobalAveragePooling", "global_average_pooling"),
            ("BatchNormalization", "batch_normalization"),
            ("ReLU", "relu"),
            ("LeakyReLU", "leaky_relu"),
            ("ReLU6", "relu6"),
            ("PReLU", "prelu"),
            ("ELU", "elu"),
            ("SELU", "selu"),
            ("Add2", "add2"),
            ("AddN", "add_n"),
            ("MulScalar", "mul_scalar"),
            ("RSubScalar", "r_sub_scalar"),
            ("BatchMatmul", "batch_matmul"),
            ("LSTM", "lstm"),
            ("SoftPlus", "softplus"),
            ("TopKData", "top_k_data"),
            ("INQAffine", "inq_affine"),
            ("Affine", "affine"),
        ] {
            assert_eq!(py(op), name, "{op}");
        }
    }
}
