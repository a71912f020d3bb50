//! Library values (JSON documents, typed graphs, reports) as plain Python
//! objects: dicts, lists, strings and numbers.

use mlformats::diff::DiffReport;
use mlformats::graph::{Attribute, Graph, ModelGraph};
use serde_json::Value;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// A JSON value as Python: `None`, `bool`, `int`, `float`, `str`, `list`,
/// `dict` (keys in the document's order).
pub(crate) fn json<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(a) => {
            let list = PyList::empty(py);
            for x in a {
                list.append(json(py, x)?)?;
            }
            list.into_any()
        }
        Value::Object(m) => json_map(py, m)?.into_any(),
    })
}

/// A JSON object as a dict.
pub(crate) fn json_map<'py>(
    py: Python<'py>,
    m: &serde_json::Map<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, x) in m {
        d.set_item(k, json(py, x)?)?;
    }
    Ok(d)
}

/// A node attribute that names a tensor of the file (NNabla and TenniS
/// attributes too large or too typed to inline): read it with
/// `Document.get_tensor(ref.name)`.
#[pyclass(frozen, eq, hash, module = "mlformats", name = "TensorRef")]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct TensorRef {
    /// The tensor's name in the document.
    #[pyo3(get)]
    name: String,
}

#[pymethods]
impl TensorRef {
    #[new]
    fn new(name: String) -> Self {
        TensorRef { name }
    }

    fn __repr__(&self) -> String {
        format!("TensorRef({:?})", self.name)
    }
}

fn attribute<'py>(py: Python<'py>, a: &Attribute) -> PyResult<Bound<'py, PyAny>> {
    Ok(match a {
        Attribute::Int(v) => v.into_pyobject(py)?.into_any(),
        Attribute::Float(v) => v.into_pyobject(py)?.into_any(),
        Attribute::Bool(v) => v.into_pyobject(py)?.to_owned().into_any(),
        Attribute::String(v) => v.into_pyobject(py)?.into_any(),
        Attribute::Ints(v) => PyList::new(py, v)?.into_any(),
        Attribute::Floats(v) => PyList::new(py, v)?.into_any(),
        Attribute::Bools(v) => PyList::new(py, v)?.into_any(),
        Attribute::Strings(v) => PyList::new(py, v)?.into_any(),
        Attribute::Tensor(name) => Bound::new(py, TensorRef { name: name.clone() })?.into_any(),
        Attribute::Tensors(names) => {
            let out = PyList::empty(py);
            for name in names {
                out.append(Bound::new(py, TensorRef { name: name.clone() })?)?;
            }
            out.into_any()
        }
        Attribute::Message(fields) => attributes(py, fields)?.into_any(),
        Attribute::Messages(list) => {
            let out = PyList::empty(py);
            for fields in list {
                out.append(attributes(py, fields)?)?;
            }
            out.into_any()
        }
        // a kind of attribute newer than this binding: its debug text
        other => format!("{other:?}").into_pyobject(py)?.into_any(),
    })
}

fn attributes<'py>(
    py: Python<'py>,
    fields: &[(String, Attribute)],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in fields {
        d.set_item(k, attribute(py, v)?)?;
    }
    Ok(d)
}

fn graph_dict<'py>(py: Python<'py>, g: &Graph) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &g.name)?;
    d.set_item("batch_size", g.batch_size)?;
    d.set_item("inputs", &g.inputs)?;
    d.set_item("outputs", &g.outputs)?;
    let values = PyList::empty(py);
    for v in &g.values {
        let x = PyDict::new(py);
        x.set_item("name", &v.name)?;
        x.set_item("kind", v.kind.as_str())?;
        x.set_item("shape", v.shape.clone())?;
        x.set_item("tensor", v.tensor.clone())?;
        values.append(x)?;
    }
    d.set_item("values", values)?;
    let nodes = PyList::empty(py);
    for n in &g.nodes {
        let x = PyDict::new(py);
        x.set_item("op", &n.op)?;
        x.set_item("name", &n.name)?;
        x.set_item("inputs", &n.inputs)?;
        x.set_item("outputs", &n.outputs)?;
        x.set_item("attributes", attributes(py, &n.attributes)?)?;
        nodes.append(x)?;
    }
    d.set_item("nodes", nodes)?;
    Ok(d)
}

/// The typed graph as dicts: `graphs` (each with name, batch_size, inputs,
/// outputs, values, nodes), `executors`, `optimizers`, `datasets`, `monitors`.
pub(crate) fn model_graph<'py>(py: Python<'py>, m: &ModelGraph) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let graphs = PyList::empty(py);
    for g in &m.graphs {
        graphs.append(graph_dict(py, g)?)?;
    }
    d.set_item("graphs", graphs)?;
    let executors = PyList::empty(py);
    for e in &m.executors {
        let x = PyDict::new(py);
        x.set_item("name", &e.name)?;
        x.set_item("network", &e.network)?;
        x.set_item("data", &e.data)?;
        x.set_item("outputs", &e.outputs)?;
        executors.append(x)?;
    }
    d.set_item("executors", executors)?;
    d.set_item("optimizers", &m.optimizers)?;
    d.set_item("datasets", &m.datasets)?;
    d.set_item("monitors", &m.monitors)?;
    Ok(d)
}

/// A diff report as a dict: the library's JSON form of it.
pub(crate) fn diff_report<'py>(py: Python<'py>, r: &DiffReport) -> PyResult<Bound<'py, PyAny>> {
    json(py, &r.to_json())
}
