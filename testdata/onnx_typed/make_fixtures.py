"""Writes the ONNX models of this folder, whose initializers keep their
values in TensorProto's typed fields (float_data, double_data, int32_data,
int64_data, uint64_data) rather than raw_data, and expected.json: for each
initializer, the bytes onnx.numpy_helper.to_array reads (little-endian: hex,
or for a big one its head, length and FNV-1a 64 hash),
its dtype and shape, and whether onnxruntime (an Identity of it) gives the
same values.

Usage: python make_fixtures.py [OUT_DIR]  (onnx 1.23, onnxruntime, numpy)
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 21
IR = 10

I64 = np.iinfo(np.int64)
I32 = np.iinfo(np.int32)


def typed(name, dtype, dims, values):
    return helper.make_tensor(name, dtype, dims, values, raw=False)


def model(inits, graph_name):
    """A model whose graph outputs an Identity of each initializer."""
    nodes = [
        helper.make_node("Identity", [t.name], [f"out_{t.name}"], name=f"id_{t.name}")
        for t in inits
    ]
    outs = [
        helper.make_tensor_value_info(f"out_{t.name}", t.data_type, list(t.dims)) for t in inits
    ]
    g = helper.make_graph(nodes, graph_name, [], outs, initializer=inits)
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="onnx_typed"
    )
    m.ir_version = IR
    return m


def float_data():
    big = (np.arange(12000, dtype=np.float32) - 6000) / 7
    return [
        typed("f32", TensorProto.FLOAT, [2, 3], [1.5, -2.0, 0.0, -0.0, 3.25e38, 1e-40]),
        typed("f32_special", TensorProto.FLOAT, [3], [np.inf, -np.inf, np.nan]),
        typed("f32_big", TensorProto.FLOAT, [40, 300], big),
        typed("c64", TensorProto.COMPLEX64, [3], [1 + 2j, -3j, 0.5 - 0.25j]),
        typed("f32_empty", TensorProto.FLOAT, [0, 4], []),
        typed("f32_scalar", TensorProto.FLOAT, [], [42.0]),
    ]


def double_data():
    return [
        typed("f64", TensorProto.DOUBLE, [2, 2], [1.5, -2.0, 1e300, -5e-324]),
        typed("c128", TensorProto.COMPLEX128, [2], [1 + 2j, -1e200 - 3j]),
    ]


def int32_data():
    big = ((np.arange(8000, dtype=np.int64) * 2654435761) % (2**32) - 2**31).astype(np.int32)
    return [
        typed("i32", TensorProto.INT32, [5], [0, -1, 1, I32.min, I32.max]),
        typed("i32_big", TensorProto.INT32, [8000], big),
        typed("i16", TensorProto.INT16, [4], [-32768, 32767, -1, 300]),
        typed("i8", TensorProto.INT8, [4], [-128, 127, -1, 0]),
        typed("u16", TensorProto.UINT16, [3], [0, 65535, 300]),
        typed("u8", TensorProto.UINT8, [3], [0, 255, 128]),
        typed("bool", TensorProto.BOOL, [2, 2], [True, False, False, True]),
        typed(
            "f16",
            TensorProto.FLOAT16,
            [6],
            np.array([1.0, -65504, 6e-8, np.inf, -0.0, np.nan], np.float16),
        ),
        typed("bf16", TensorProto.BFLOAT16, [5], [1.0, -2.5, 3.14159, 1e38, -0.0]),
        typed("f8e4m3fn", TensorProto.FLOAT8E4M3FN, [3], [1.0, -448.0, 0.5]),
        typed("f8e5m2", TensorProto.FLOAT8E5M2, [3], [1.0, -57344.0, 0.25]),
    ]


def int64_data():
    big = (np.arange(12000, dtype=np.int64) - 6000) * 987654321987
    return [
        typed("i64", TensorProto.INT64, [6], [0, -1, 1, I64.min, I64.max, -(2**40)]),
        typed("i64_big", TensorProto.INT64, [12000], big),
    ]


def uint64_data():
    return [
        typed("u64", TensorProto.UINT64, [4], [0, 1, 2**64 - 1, 2**63]),
        typed("u32", TensorProto.UINT32, [3], [0, 2**32 - 1, 123456789]),
    ]


def mixed():
    return [
        numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "raw_f32"),
        typed("typed_f32", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0]),
        numpy_helper.from_array(np.array([-5, 7], dtype=np.int64), "raw_i64"),
        typed("typed_i64", TensorProto.INT64, [2], [-5, 7]),
        typed("typed_f16", TensorProto.FLOAT16, [2], np.array([0.5, -1], np.float16)),
        numpy_helper.from_array(np.array([1, 0, 1], dtype=np.bool_), "raw_bool"),
        typed("typed_u8", TensorProto.UINT8, [2], [7, 250]),
    ]


# hand-encoded protobuf: unpacked and several-run typed fields
def varint(v):
    v &= 2**64 - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def key(num, wt):
    return varint(num << 3 | wt)


def ld(num, payload):
    return key(num, 2) + varint(len(payload)) + payload


def header(name, dtype, dims):
    t = TensorProto(name=name, data_type=dtype, dims=dims)
    return t.SerializeToString()


def unpacked_tensors():
    """(name, TensorProto bytes) with typed fields written unpacked, in
    several packed runs, mixed, with other fields between them."""
    f = [1.5, -2.0, 0.25, 1e30]
    out = []
    body = b"".join(key(4, 5) + np.float32(v).tobytes() for v in f)
    out.append(("f32_unpacked", header("f32_unpacked", TensorProto.FLOAT, [4]) + body))
    # two packed runs with a doc_string between, then an unpacked value
    body = (
        ld(4, np.array(f[:2], "<f4").tobytes())
        + ld(12, b"doc between the runs")
        + ld(4, np.array(f[2:3], "<f4").tobytes())
        + key(4, 5)
        + np.float32(f[3]).tobytes()
    )
    out.append(("f32_runs", header("f32_runs", TensorProto.FLOAT, [2, 2]) + body))
    d = [1.5, -1e300, 5e-324]
    body = key(10, 1) + np.float64(d[0]).tobytes() + ld(10, np.array(d[1:], "<f8").tobytes())
    out.append(("f64_mixed", header("f64_mixed", TensorProto.DOUBLE, [3]) + body))
    i = [-1, I32.min, I32.max, 0, 300]
    body = b"".join(key(5, 0) + varint(v) for v in i)
    out.append(("i32_unpacked", header("i32_unpacked", TensorProto.INT32, [5]) + body))
    # int8 in two packed runs and one unpacked, with an over-long varint
    # (1 written in 3 bytes: valid protobuf)
    body = ld(5, varint(-128) + varint(127)) + key(5, 0) + b"\x81\x80\x00" + ld(5, varint(-1))
    out.append(("i8_runs", header("i8_runs", TensorProto.INT8, [4]) + body))
    h = np.array([1.0, -0.5, np.inf], np.float16).view(np.uint16)
    body = ld(5, varint(int(h[0]))) + b"".join(key(5, 0) + varint(int(v)) for v in h[1:])
    out.append(("f16_runs", header("f16_runs", TensorProto.FLOAT16, [3]) + body))
    b = [1, 0, 1]
    body = b"".join(key(5, 0) + varint(v) for v in b)
    out.append(("bool_unpacked", header("bool_unpacked", TensorProto.BOOL, [3]) + body))
    q = [I64.min, -1, I64.max, 2**40]
    body = key(7, 0) + varint(q[0]) + ld(7, varint(q[1]) + varint(q[2])) + key(7, 0) + varint(q[3])
    out.append(("i64_runs", header("i64_runs", TensorProto.INT64, [4]) + body))
    u = [2**64 - 1, 0, 2**63]
    body = b"".join(key(11, 0) + varint(v) for v in u)
    out.append(("u64_unpacked", header("u64_unpacked", TensorProto.UINT64, [3]) + body))
    u = [2**32 - 1, 7]
    body = ld(11, varint(u[0])) + key(11, 0) + varint(u[1])
    out.append(("u32_runs", header("u32_runs", TensorProto.UINT32, [2]) + body))
    return out


def unpacked_model():
    tensors = unpacked_tensors()
    shells = [TensorProto(name=n) for n, _ in tensors]
    m = model(shells, "unpacked")
    # the graph without initializers, then each hand-encoded one appended
    g = onnx.GraphProto()
    g.CopyFrom(m.graph)
    del g.initializer[:]
    for vi, (_, t) in zip(g.output, tensors):
        p = TensorProto()
        p.ParseFromString(t)
        vi.type.tensor_type.elem_type = p.data_type
        del vi.type.tensor_type.shape.dim[:]
        for d in p.dims:
            vi.type.tensor_type.shape.dim.add().dim_value = d
    gb = g.SerializeToString() + b"".join(ld(5, t) for _, t in tensors)
    m.ClearField("graph")
    return m.SerializeToString() + ld(7, gb)


def le_bytes(a):
    """The array's little-endian bytes: as hex up to 256 bytes, else their
    first 64 as hex, their length and their FNV-1a 64 hash."""
    b = a.astype(a.dtype.newbyteorder("<")).tobytes()
    if len(b) <= 256:
        return {"le_hex": b.hex()}
    h = 0xCBF29CE484222325
    for x in b:
        h = ((h ^ x) * 0x100000001B3) % 2**64
    return {"head_hex": b[:64].hex(), "len": len(b), "fnv1a64": f"{h:016x}"}


def ort_check(t):
    """Whether onnxruntime's Identity of `t` gives to_array's values."""
    try:
        import onnxruntime as ort

        m = model([t], "one")
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        (got,) = s.run(None, {})
        want = numpy_helper.to_array(t)
        same = got.dtype.itemsize == want.dtype.itemsize and got.tobytes() == want.tobytes()
        return "same" if same else "DIFFERENT"
    except Exception as e:  # noqa: BLE001
        return "not run: " + str(e).splitlines()[0][:120]


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    files = {
        "float_data.onnx": model(float_data(), "float_data").SerializeToString(),
        "double_data.onnx": model(double_data(), "double_data").SerializeToString(),
        "int32_data.onnx": model(int32_data(), "int32_data").SerializeToString(),
        "int64_data.onnx": model(int64_data(), "int64_data").SerializeToString(),
        "uint64_data.onnx": model(uint64_data(), "uint64_data").SerializeToString(),
        "mixed.onnx": model(mixed(), "mixed").SerializeToString(),
        "unpacked.onnx": unpacked_model(),
    }
    expected = {}
    for name, data in files.items():
        (out / name).write_bytes(data)
        m = onnx.load_from_string(data)
        onnx.checker.check_model(m)
        rows = []
        for t in m.graph.initializer:
            a = numpy_helper.to_array(t)
            rows.append(
                {
                    "name": t.name,
                    "data_type": TensorProto.DataType.Name(t.data_type),
                    "shape": list(a.shape),
                    **le_bytes(a),
                    "onnxruntime": ort_check(t),
                }
            )
        expected[name] = rows
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
