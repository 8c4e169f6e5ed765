#!/usr/bin/env bash
# --emit-dxdispatch: the model for Microsoft's DxDispatch and the .npy inputs beside it.
#
# The model is checked by check_model.py below, written from these sources in
# github.com/microsoft/DirectML at commit a9614e82c9226b09826d18c5e63926a774ca5ab5 (July 2025):
#   - DxDispatch/models/_schema.json, last changed in 17c282915e61ff2cddfa1c5137614be2b0175601:
#     required members and JSON types of the model, buffers, DML dispatchables, commands;
#   - DxDispatch/doc/Guide.md: the .npy file initialiser ({"sourcePath": ...}) and the writeFile
#     command, which the Guide documents and DxDispatch's parser accepts but the schema (older)
#     does not list; the DML_TENSOR_DESC fields and their types;
#   - DxDispatch/src/model/JsonParsers.cpp: input paths resolve relative to the model's folder,
#     a .npy's dtype must agree with initialValuesDataType, an explicit sizeInBytes is not
#     rounded, writeFile writes the whole buffer with "dimensions" as the .npy shape.
# DirectML's own rules come from its API reference (directml-bitwise.md): one Sizes for every
# tensor, TotalTensorSizeInBytes as DMLCalcBufferTensorSize computes it, buffers of a multiple of
# 4 bytes at least that large.
#
# check_model.py then runs the model the way DxDispatch and DirectML would, with NumPy: buffers
# filled from the .npy files, tensors read through Sizes and Strides (as_strided), the operator
# computed by NumPy, the output buffer written as DxDispatch's writeFile does. That output must
# equal NumPy's result on the original inputs; the expected strides come from NumPy's own
# broadcast_to, never from dmlbits.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"

cat >check_model.py <<'EOF'
import json, os, sys
import numpy as np
from numpy.lib.stride_tricks import as_strided

model_path, op, out_path = sys.argv[1], sys.argv[2], sys.argv[3]
originals = sys.argv[4:]  # the inputs as given to dmlbits (.npy)
errors = []
def err(msg): errors.append(msg)
def is_int(x): return isinstance(x, int) and not isinstance(x, bool)
def is_num(x): return (isinstance(x, (int, float)) and not isinstance(x, bool))

TYPES = ["FLOAT16", "FLOAT32", "FLOAT64", "UINT8", "UINT16", "UINT32", "UINT64",
         "INT8", "INT16", "INT32", "INT64", "UNKNOWN"]
DATA_TYPES = TYPES + ["DML_TENSOR_DATA_TYPE_" + t for t in TYPES]
EXEC_FLAGS = [p + f for f in ["NONE", "ALLOW_HALF_PRECISION_COMPUTATION", "DISABLE_META_COMMANDS",
                              "DESCRIPTORS_VOLATILE"] for p in ("", "DML_EXECUTION_FLAG_")]
NUMPY = {"FLOAT16": "f2", "FLOAT32": "f4", "FLOAT64": "f8", "UINT8": "u1", "UINT16": "u2",
         "UINT32": "u4", "UINT64": "u8", "INT8": "i1", "INT16": "i2", "INT32": "i4", "INT64": "i8"}
def short(t): return t.replace("DML_TENSOR_DATA_TYPE_", "")

model_dir = os.path.dirname(os.path.abspath(model_path))
with open(model_path) as f:
    m = json.load(f)

# ---- _schema.json: the root ----
if not isinstance(m, dict): sys.exit("model is not an object")
for k, t in (("resources", dict), ("dispatchables", dict), ("commands", list)):
    if not isinstance(m.get(k), t): err(f"root: '{k}' missing or not {t.__name__}")
if errors: sys.exit("\n".join(errors))

# ---- _schema.json: resource / buffer (+ Guide: file initialiser) ----
for name, r in m["resources"].items():
    if not isinstance(r, dict): err(f"resource {name}: not an object"); continue
    if "type" in r and r["type"] != "buffer": err(f"resource {name}: type {r['type']!r}")
    for k in ("initialValues", "initialValuesDataType"):
        if k not in r: err(f"resource {name}: required '{k}' missing")
    if r.get("initialValuesDataType") not in DATA_TYPES: err(f"resource {name}: bad initialValuesDataType")
    iv = r.get("initialValues")
    if isinstance(iv, list):
        if not all(is_num(x) or isinstance(x, str) for x in iv): err(f"resource {name}: array initialiser items")
    elif isinstance(iv, dict):
        if "sourcePath" in iv:  # Guide, "Buffer: File Data Initializer"
            if not isinstance(iv["sourcePath"], str): err(f"resource {name}: sourcePath not a string")
        elif "value" in iv:  # constantInitializer
            if not (is_int(iv.get("valueCount")) and iv["valueCount"] > 0): err(f"resource {name}: valueCount")
            if not (is_num(iv["value"]) or isinstance(iv["value"], str)): err(f"resource {name}: value")
        elif "valueStart" in iv:  # sequenceInitializer
            for k in ("valueCount", "valueStart", "valueDelta"):
                if k not in iv: err(f"resource {name}: sequence lacks {k}")
        else: err(f"resource {name}: unknown initialiser {iv}")
    else: err(f"resource {name}: initialValues is neither array nor object")
    if "sizeInBytes" in r and not (is_int(r["sizeInBytes"]) and r["sizeInBytes"] > 0):
        err(f"resource {name}: sizeInBytes must be an integer > 0")
    if "initialValuesOffsetInBytes" in r and not (is_int(r["initialValuesOffsetInBytes"]) and r["initialValuesOffsetInBytes"] >= 0):
        err(f"resource {name}: initialValuesOffsetInBytes")

# ---- _schema.json: dispatchable (DML) + Guide: DML_TENSOR_DESC ----
TENSOR_FIELDS = {"Type", "DataType", "Flags", "DimensionCount", "Sizes", "Strides",
                 "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment"}
for name, d in m["dispatchables"].items():
    if not isinstance(d, dict) or not isinstance(d.get("type"), str): err(f"dispatchable {name}: 'type' missing"); continue
    if d["type"] in ("hlsl", "onnx"): err(f"dispatchable {name}: not a DirectML operator"); continue
    if not isinstance(d.get("desc"), dict): err(f"dispatchable {name}: required 'desc' missing")
    if "executionFlags" in d:
        if not (isinstance(d["executionFlags"], list) and all(f in EXEC_FLAGS for f in d["executionFlags"])):
            err(f"dispatchable {name}: executionFlags {d['executionFlags']}")
    for field, t in d.get("desc", {}).items():
        if not isinstance(t, dict): err(f"{name}.{field}: not an object"); continue
        if set(t) - TENSOR_FIELDS: err(f"{name}.{field}: unknown fields {set(t) - TENSOR_FIELDS}")
        if t.get("DataType") not in DATA_TYPES: err(f"{name}.{field}: DataType {t.get('DataType')}")
        if t.get("Type", "BUFFER") not in ("BUFFER", "DML_TENSOR_TYPE_BUFFER"): err(f"{name}.{field}: Type")
        if t.get("Flags", "NONE") not in ("NONE", "DML_TENSOR_FLAG_NONE"): err(f"{name}.{field}: Flags")
        for k in ("Sizes", "Strides"):
            if not (isinstance(t.get(k), list) and all(is_int(x) and 0 <= x < 2**32 for x in t[k])):
                err(f"{name}.{field}: {k} must be a list of UINTs")
        for k in ("DimensionCount", "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment"):
            if k in t and not is_int(t[k]): err(f"{name}.{field}: {k} not an integer")

# ---- _schema.json: commands (+ Guide: writeFile) ----
for i, c in enumerate(m["commands"]):
    if not isinstance(c, dict) or "type" not in c: err(f"command {i}: 'type' missing"); continue
    if c["type"] == "dispatch":
        if not isinstance(c.get("dispatchable"), str): err(f"command {i}: dispatchable")
        b = c.get("bindings")
        if not isinstance(b, dict): err(f"command {i}: bindings must be an object"); continue
        for k, v in b.items():
            if not (isinstance(v, (str, dict)) or (isinstance(v, list) and all(isinstance(x, (str, dict)) for x in v))):
                err(f"command {i}: binding {k}")
    elif c["type"] == "print":
        if not isinstance(c.get("resource"), str): err(f"command {i}: print needs resource")
    elif c["type"] == "writeFile":
        for k in ("resource", "targetPath"):
            if not isinstance(c.get(k), str): err(f"command {i}: writeFile needs {k}")
        if "dimensions" in c and not (isinstance(c["dimensions"], list) and all(is_int(x) and 0 < x < 2**32 for x in c["dimensions"])):
            err(f"command {i}: dimensions")
    else: err(f"command {i}: unknown type {c['type']}")
if errors: sys.exit("\n".join(errors))

# ---- what this model must be ----
VERBS = {"and": ("BIT_AND", 2), "or": ("BIT_OR", 2), "xor": ("BIT_XOR", 2), "not": ("BIT_NOT", 1),
         "popcount": ("BIT_COUNT", 1), "shl": ("BIT_SHIFT_LEFT", 2), "shr": ("BIT_SHIFT_RIGHT", 2)}
if op not in VERBS: sys.exit(f"tests/cli/dxdispatch.sh has no model of operator '{op}': add it to VERBS")
suffix, arity = VERBS[op]
fields = ["ATensor", "BTensor"] if arity == 2 else ["InputTensor"]
if list(m["dispatchables"]) != [op]: err(f"dispatchables: {list(m['dispatchables'])}")
d = m["dispatchables"][op]
if d["type"] != "DML_OPERATOR_ELEMENT_WISE_" + suffix: err(f"type {d['type']}")
desc = d["desc"]
if sorted(desc) != sorted(fields + ["OutputTensor"]): err(f"desc fields {sorted(desc)}")
cmds = m["commands"]
if [c["type"] for c in cmds] != ["dispatch", "writeFile"]: err(f"commands {[c['type'] for c in cmds]}")
if errors: sys.exit("\n".join(errors))
disp, wf = cmds
if disp["dispatchable"] != op: err("dispatch names another dispatchable")
if sorted(disp["bindings"]) != sorted(desc): err(f"bind points {sorted(disp['bindings'])} != desc {sorted(desc)}")
for k, v in disp["bindings"].items():
    if v not in m["resources"]: err(f"binding {k} -> unknown resource {v}")
if wf["resource"] != disp["bindings"]["OutputTensor"]: err("writeFile writes another resource than the output")
if errors: sys.exit("\n".join(errors))

# DirectML: every tensor has the output's Sizes; TotalTensorSizeInBytes is DMLCalcBufferTensorSize.
out_sizes = desc["OutputTensor"]["Sizes"]
for f, t in desc.items():
    if t["Sizes"] != out_sizes: err(f"{f}: Sizes {t['Sizes']} != output's {out_sizes}")
    if t.get("DimensionCount", len(t["Sizes"])) != len(t["Sizes"]): err(f"{f}: DimensionCount")
    bits = np.dtype(NUMPY[short(t["DataType"])]).itemsize * 8
    last = sum((s - 1) * st for s, st in zip(t["Sizes"], t["Strides"]))
    want = (((last + 1) * bits + 7) // 8 + 3) // 4 * 4
    if t["TotalTensorSizeInBytes"] != want: err(f"{f}: TotalTensorSizeInBytes {t['TotalTensorSizeInBytes']} != {want}")

# DxDispatch's parser: files beside the model; .npy dtype agrees; buffers big enough.
buffers = {}
for name, r in m["resources"].items():
    iv = r["initialValues"]
    dt = np.dtype(NUMPY[short(r["initialValuesDataType"])])
    if "sourcePath" in iv:
        if os.path.dirname(iv["sourcePath"]): err(f"{name}: sourcePath has a directory: {iv['sourcePath']}")
        path = os.path.join(model_dir, iv["sourcePath"])
        if not os.path.exists(path): err(f"{name}: {path} does not exist"); continue
        arr = np.load(path)
        if arr.dtype.newbyteorder("<") != dt.newbyteorder("<"): err(f"{name}: .npy dtype {arr.dtype} != {dt}")
        data = np.ascontiguousarray(arr).tobytes()
    else:
        data = np.full(iv["valueCount"], iv["value"], dtype=dt).tobytes()
    size = r.get("sizeInBytes", (len(data) + 3) // 4 * 4)
    if size % 4: err(f"{name}: sizeInBytes {size} is not a multiple of 4 (DirectML)")
    if size < len(data): err(f"{name}: sizeInBytes {size} < initial data {len(data)}")
    buffers[name] = bytearray(data + bytes(size - len(data)))
for f, t in desc.items():
    res = disp["bindings"][f]
    if res in buffers and len(buffers[res]) < t["TotalTensorSizeInBytes"]:
        err(f"{f}: bound buffer {res} ({len(buffers[res])} bytes) < TotalTensorSizeInBytes")
if errors: sys.exit("\n".join(errors))

# The inputs as dmlbits read them: equal to what it was given, and their descriptors are
# NumPy's view of them broadcast to the output shape.
inputs = [np.load(os.path.join(model_dir, m["resources"][disp["bindings"][f]]["initialValues"]["sourcePath"])) for f in fields]
orig = [np.load(p) for p in originals]
out_shape = np.broadcast_shapes(*[a.shape for a in orig])
for f, a, o in zip(fields, inputs, orig):
    if a.dtype != o.dtype or a.shape != o.shape or a.tobytes() != o.tobytes():
        err(f"{f}: the .npy differs from the input given ({a.dtype}{a.shape} vs {o.dtype}{o.shape})")
    b = np.broadcast_to(o, out_shape)
    want_sizes = list(out_shape) or [1]
    if desc[f]["Sizes"] != want_sizes: err(f"{f}: Sizes {desc[f]['Sizes']} != {want_sizes}")
    want_strides = [s // o.itemsize for s in b.strides] or [desc[f]["Strides"][0]]
    for i, (got, want, n) in enumerate(zip(desc[f]["Strides"], want_strides, want_sizes)):
        if n > 1 and got != want: err(f"{f}: Strides {desc[f]['Strides']} != NumPy's {want_strides}")
if wf["dimensions"] != (list(out_shape) or [1]): err(f"writeFile dimensions {wf['dimensions']} != {list(out_shape)}")
if errors: sys.exit("\n".join(errors))

# Run it as DxDispatch would, with NumPy as the operator.
def view(f):
    t = desc[f]
    dt = np.dtype(NUMPY[short(t["DataType"])])
    flat = np.frombuffer(bytes(buffers[disp["bindings"][f]]), dtype=dt)
    return as_strided(flat, shape=t["Sizes"], strides=[s * dt.itemsize for s in t["Strides"]])
def bits(x): return x.view(np.dtype("u%d" % x.itemsize))
def compute(args, out_dt):
    if op == "not": return (~bits(args[0])).view(out_dt)
    if op == "popcount":
        u = bits(args[0]).astype(np.uint64)
        c = np.zeros(u.shape, np.uint64)
        for k in range(64): c += (u >> np.uint64(k)) & np.uint64(1)
        return c.astype(out_dt)
    a, b = bits(args[0]), bits(args[1])
    if op in ("and", "or", "xor"): return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](a, b).view(out_dt)
    w = a.itemsize * 8
    s = np.minimum(b, w - 1)  # counts >= width give 0 (dmlbits' default; the tests use small counts)
    r = (a << s) if op == "shl" else (a >> s)
    return np.where(b >= w, 0, r).astype(a.dtype).view(out_dt)
out_dt = np.dtype(NUMPY[short(desc["OutputTensor"]["DataType"])])
result = compute([view(f) for f in fields], out_dt)
obuf = buffers[wf["resource"]]
ot = desc["OutputTensor"]
dst = as_strided(np.frombuffer(obuf, dtype=out_dt), shape=ot["Sizes"], strides=[s * out_dt.itemsize for s in ot["Strides"]])
dst[...] = result
# NumPy on the original inputs, without the model.
want = compute([np.broadcast_to(o, out_shape) for o in orig], out_dt).reshape(out_shape)
if result.reshape(out_shape).tobytes() != want.tobytes(): err("the model's operation differs from NumPy's on the inputs")
# DxDispatch's writeFile: the whole buffer after a header with "dimensions" as the shape.
header = {"descr": "<" + NUMPY[short(m["resources"][wf["resource"]]["initialValuesDataType"])], "fortran_order": False,
          "shape": tuple(wf["dimensions"])}
with open(out_path, "wb") as f:
    np.lib.format.write_array_header_1_0(f, header)
    f.write(bytes(obuf))
if errors: sys.exit("\n".join(errors))
EOF

# check NAME OP INPUT...: the model NAME.json is valid and runs to NAME-sim.npy.
check() {
  local name=$1 op=$2; shift 2
  checks=$((checks + 1))
  "$P" check_model.py "$name.json" "$op" "$name-sim.npy" "$@" 2>"$WORK/py_err" ||
    fail "model $name.json ($op): $(cat "$WORK/py_err")"
}
# trim FILE OUT: what DxDispatch wrote, re-saved by NumPy without the buffer's padding (and with
# the 0-d shape restored when SHAPE is "()"), as the man page advises.
trim() { "$P" -c "import numpy as np, sys; a = np.load(sys.argv[1]); np.save(sys.argv[2], a.reshape(eval(sys.argv[3])) if len(sys.argv) > 3 else a)" "$@"; }

"$P" -c "
import numpy as np
np.save('col.npy', np.array([[1],[3]], dtype=np.uint8))
np.save('row.npy', np.array([1,2,4], dtype=np.uint8))
np.save('pc.npy', np.array([[0,123],[456,789]], dtype=np.uint32))
np.save('i16.npy', np.array([0, -1, 12345], dtype=np.int16))
np.save('f32.npy', np.array([[1.5, -2.0], [-0.0, 3.25]], dtype=np.float32))
np.save('n8.npy', np.array([[0,128],[42,255]], dtype=np.uint8))
np.save('u16.npy', np.arange(12, dtype=np.uint16).reshape(3, 4) * 4099)
"

# A binary broadcast, with -o (which would otherwise stream): model, inputs, and the output.
expect_status 0 and col.npy row.npy -o out.npy --emit-dxdispatch m
for f in m.json m-a.npy m-b.npy out.npy; do [ -f "$f" ] || fail "$f was not written"; done
expect_no_file m-out.npy
check m and col.npy row.npy
# The simulated DxDispatch output carries the buffer's padding (6 bytes in an 8-byte buffer):
# NumPy reads it; trimmed, dmlbits accepts it as the golden file.
"$P" -c "import numpy as np; assert (np.load('m-sim.npy') == np.load('out.npy')).all()" || fail "m-sim.npy != out.npy"
trim m-sim.npy m-trim.npy
expect_status 0 and col.npy row.npy --expect m-trim.npy
# The model's note gives the feature level as DxDispatch's --dml_feature_level takes it.
"$P" -c "
import json; m = json.load(open('m.json'))
assert m['dmlbits']['dxdispatch_arguments'] == ['--dml_feature_level', '6.4'], m['dmlbits']
assert m['dmlbits']['output'] == {'path': 'm-out.npy', 'dtype': 'uint8', 'shape': [2, 3]}, m['dmlbits']
" || fail "m.json's dmlbits note"

# Unary, at 4_1 (INT16 needs it); a .json FILE names the model itself.
expect_status 0 not -l 4.1 i16.npy --emit-dxdispatch n.json
for f in n.json n-a.npy; do [ -f "$f" ] || fail "$f was not written"; done
expect_no_file n.json.json; expect_no_file n-b.npy
check n not i16.npy
"$P" -c "import json; assert json.load(open('n.json'))['dmlbits']['dxdispatch_arguments'][1] == '4.1'" || fail "n.json level"

# Popcount with a UINT32 output: no padding, so DxDispatch's file is a golden as it is.
expect_status 0 popcount -l 3_0 --out-dtype uint32 pc.npy --emit-dxdispatch p
check p popcount pc.npy
expect_status 0 popcount -l 3_0 --out-dtype uint32 pc.npy --expect p-sim.npy
"$P" -c "
import numpy as np; a = np.load('p-sim.npy')
assert a.dtype == np.uint32 and a.tolist() == [[0, 6], [4, 5]], a   # DirectML's documented example
" || fail "p-sim.npy is not DirectML's BIT_COUNT example"

# A shift whose count is a literal: B is a 0-d .npy read with stride 0 everywhere.
expect_status 0 shl u16.npy 3 --emit-dxdispatch s
check s shl u16.npy s-b.npy
"$P" -c "
import numpy as np; b = np.load('s-b.npy')
assert b.shape == () and b.dtype == np.uint16 and int(b) == 3, (b.shape, b.dtype, b)
" || fail "s-b.npy is not the literal 3 as a 0-d uint16"
expect_status 0 shl u16.npy 3 --expect s-sim.npy   # 24 bytes: no padding

# Floats are operated on as bits; the .npy keeps the dtype.
expect_status 0 and f32.npy 0x7fffffff --emit-dxdispatch f
check f and f32.npy f-b.npy
"$P" -c "
import numpy as np; b = np.load('f-b.npy')
assert b.dtype == np.float32 and b.shape == () and int(b.view(np.uint32)) == 0x7fffffff, b
" || fail "f-b.npy is not the bits 0x7fffffff as a 0-d float32"
expect_status 0 and f32.npy 0x7fffffff --expect f-sim.npy

# Standard input is written out like any operand.
checks=$((checks + 1))
"$DMLBITS" not - --emit-dxdispatch i <n8.npy >/dev/null 2>"$WORK/stderr" || fail "not - --emit-dxdispatch: $(cat "$WORK/stderr")"
check i not n8.npy

# In place: the model has A as it was before the run, and binds the output to A's buffer.
cp n8.npy x.npy
expect_status 0 xor --in-place x.npy 0x0f --emit-dxdispatch x
check x xor n8.npy x-b.npy
"$P" -c "
import numpy as np, json
assert np.load('x.npy').tolist() == [[15, 143], [37, 240]], np.load('x.npy')   # A was rewritten
m = json.load(open('x.json'))
assert 'Out' not in m['resources'] and m['commands'][0]['bindings']['OutputTensor'] == 'A', m
" || fail "in-place model"

# --explain writes the model without running; a mismatch still leaves the model to reproduce it.
expect_status 0 or --explain col.npy row.npy --emit-dxdispatch e
expect_out '"operator": "DML_OPERATOR_ELEMENT_WISE_BIT_OR"'
check e or col.npy row.npy
expect_status 1 not n8.npy --expect n8.npy --emit-dxdispatch w
check w not n8.npy

# Refusals: an empty result (DirectML sizes cannot be 0), no file name; nothing is written.
"$P" -c "import numpy as np; np.save('empty.npy', np.zeros((0, 3), np.uint8))"
expect_status 4 not empty.npy --emit-dxdispatch z
expect_err "zero size"; expect_one_line
expect_no_file z.json; expect_no_file z-a.npy
expect_status 2 not n8.npy --emit-dxdispatch -
expect_one_line
expect_status 2 not n8.npy --emit-dxdispatch sub/
expect_one_line

# An invalid operation is refused as without the option, and leaves no model.
expect_status 3 xor -l 3_0 i16.npy i16.npy --emit-dxdispatch v
expect_no_file v.json; expect_no_file v-a.npy

# dmlbits eval --emit-dxdispatch: the expression node by node (DxDispatch on master has no model
# of a hand-written DML_GRAPH_DESC). check_graph.py runs such a model as DxDispatch would, each
# dispatch in order with NumPy as its operator (check_model.py's rules: buffers a multiple of 4
# bytes and at least the TotalTensorSizeInBytes of every tensor bound to them, one Sizes per
# operator, .npy dtypes agreeing with initialValuesDataType), and compares the written buffer
# with WANT, the expression computed by NumPy on the original inputs in this script.
cat >check_graph.py <<'EOF'
import json, os, sys
import numpy as np
from numpy.lib.stride_tricks import as_strided
model_path, out_path, want_path = sys.argv[1:4]
NUMPY = {"FLOAT16": "f2", "FLOAT32": "f4", "FLOAT64": "f8", "UINT8": "u1", "UINT16": "u2",
         "UINT32": "u4", "UINT64": "u8", "INT8": "i1", "INT16": "i2", "INT32": "i4", "INT64": "i8"}
OPS = {"BIT_AND": np.bitwise_and, "BIT_OR": np.bitwise_or, "BIT_XOR": np.bitwise_xor}
def dt(t): return np.dtype(NUMPY[t.replace("DML_TENSOR_DATA_TYPE_", "")])
def bits(x): return x.view(np.dtype("u%d" % x.itemsize))
errors = []
model_dir = os.path.dirname(os.path.abspath(model_path))
m = json.load(open(model_path))
if set(m) != {"resources", "dispatchables", "commands", "dmlbits"}: errors.append("root keys %s" % sorted(m))
buffers = {}
for name, r in m["resources"].items():
    d, iv = dt(r["initialValuesDataType"]), r["initialValues"]
    if isinstance(iv, list): data = np.array(iv, dtype=d).tobytes()
    elif "sourcePath" in iv:
        if os.path.dirname(iv["sourcePath"]): errors.append("%s: sourcePath has a directory" % name)
        a = np.load(os.path.join(model_dir, iv["sourcePath"]))
        if a.dtype.newbyteorder("<") != d.newbyteorder("<"): errors.append("%s: .npy dtype %s" % (name, a.dtype))
        data = np.ascontiguousarray(a).tobytes()
    else: data = np.full(iv["valueCount"], iv["value"], dtype=d).tobytes()
    size = r["sizeInBytes"]
    if size % 4 or size < len(data): errors.append("%s: sizeInBytes %d for %d bytes" % (name, size, len(data)))
    buffers[name] = bytearray(data + bytes(size - len(data)))
def view(t, buf):
    d = dt(t["DataType"])
    return as_strided(np.frombuffer(buf, dtype=d), shape=t["Sizes"], strides=[s * d.itemsize for s in t["Strides"]])
written = None
for c in m["commands"]:
    if c["type"] == "writeFile":
        written = c
        continue
    disp = m["dispatchables"][c["dispatchable"]]
    op, desc, bind = disp["type"].replace("DML_OPERATOR_ELEMENT_WISE_", ""), disp["desc"], c["bindings"]
    if sorted(bind) != sorted(desc): errors.append("%s: bind points %s" % (c["dispatchable"], sorted(bind)))
    for f, t in desc.items():
        if t["Sizes"] != desc["OutputTensor"]["Sizes"]: errors.append("%s.%s: Sizes" % (c["dispatchable"], f))
        if len(buffers[bind[f]]) < t["TotalTensorSizeInBytes"]:
            errors.append("%s.%s: buffer %s too small" % (c["dispatchable"], f, bind[f]))
    if errors: break
    out_t = desc["OutputTensor"]
    args = [view(desc[f], bytes(buffers[bind[f]])) for f in ("ATensor", "BTensor", "InputTensor") if f in desc]
    od = dt(out_t["DataType"])
    if op in OPS: r = OPS[op](bits(args[0]), bits(args[1])).view(od)
    elif op == "BIT_NOT": r = (~bits(args[0])).view(od)
    elif op == "BIT_COUNT":
        r = np.unpackbits(np.ascontiguousarray(bits(args[0]))[..., None].view(np.uint8), axis=-1).sum(-1).astype(od)
    else:  # shifts by counts below the width (the tests' counts)
        a, b = bits(args[0]), bits(args[1])
        r = (a << b if op == "BIT_SHIFT_LEFT" else a >> b).astype(a.dtype).view(od)
    dst = as_strided(np.frombuffer(buffers[bind["OutputTensor"]], dtype=od), shape=out_t["Sizes"],
                     strides=[s * od.itemsize for s in out_t["Strides"]])
    dst[...] = r
if errors: sys.exit("\n".join(errors))
if written is None or m["commands"][-1] is not written: sys.exit("no writeFile last")
want = np.load(want_path)
if written["dimensions"] != (list(want.shape) or [1]): sys.exit("writeFile dimensions %s" % written["dimensions"])
od = dt(m["resources"][written["resource"]]["initialValuesDataType"])
got = np.frombuffer(bytes(buffers[written["resource"]]), dtype=od)[:want.size]
if got.tobytes() != np.ascontiguousarray(want).tobytes():
    sys.exit("the model computes %s, NumPy %s" % (got, want.reshape(-1)))
header = {"descr": od.str, "fortran_order": False, "shape": tuple(written["dimensions"])}
with open(out_path, "wb") as f:
    np.lib.format.write_array_header_1_0(f, header)
    f.write(bytes(buffers[written["resource"]]))
EOF
graph_check() {  # graph_check NAME: NAME.json runs to NAME-sim.npy and equals NAME-want.npy
  checks=$((checks + 1))
  "$P" check_graph.py "$1.json" "$1-sim.npy" "$1-want.npy" 2>"$WORK/py_err" || fail "model $1.json: $(cat "$WORK/py_err")"
}
mkdir -p g
"$P" -c "
import numpy as np
rng = np.random.default_rng(46)
x = rng.integers(0, 2**32, (2, 1), dtype=np.uint32); y = rng.integers(0, 2**32, (3,), dtype=np.uint32)
np.save('gx.npy', x); np.save('gy.npy', y)
np.save('h-want.npy', np.unpackbits((x ^ y)[..., None].view(np.uint8), axis=-1).sum(-1).astype(np.uint8))
w = np.array([0, 65535, 12345, 32768, 77], np.uint16)
np.save('gw.npy', w.astype('>u2'))   # big-endian: the model's .npy holds it as read, little-endian
np.save('w-in.npy', w)
np.save('g/f-want.npy', (w >> 3) & np.uint16(0xfff0))
f = np.array([[1.0, -2.5, 3.0], [0.0, -0.0, 7.75]], np.float32)
k = np.array([1.5, 2.0, 0.5], np.float32)
np.save('gf.npy', f)
t = f.view(np.uint32) & k.view(np.uint32)
np.save('s-want.npy', (t ^ ~t).view(np.float32))
"
# Hamming distance with a broadcast: a (2,1) and b (3,) into a (2,3) uint8 count.
expect_status 0 eval 'popcount(a ^ b)' a=gx.npy b=gy.npy --emit-dxdispatch h -o h-run.npy
for f in h.json h-a.npy h-b.npy; do [ -f "$f" ] || fail "$f was not written"; done
expect_no_file h-out.npy
graph_check h
"$P" -c "import numpy as np; assert (np.load('h-sim.npy') == np.load('h-run.npy')).all()" || fail "h-sim.npy != h-run.npy"
# Literals inline, an operand from standard input (big-endian), named by its expression name.
checks=$((checks + 1))
"$DMLBITS" eval '(w >> 3) & 0xfff0' w=- --emit-dxdispatch g/f.json -o /dev/null <gw.npy 2>"$WORK/stderr" ||
  fail "eval w=- --emit-dxdispatch: $(cat "$WORK/stderr")"
graph_check g/f
"$P" -c "
import numpy as np, json
a = np.load('g/f-w.npy'); assert a.dtype == np.uint16 and (a == np.load('w-in.npy')).all(), a
m = json.load(open('g/f.json'))
assert m['dmlbits']['inputs'] == {'w': 'f-w.npy'} and m['dmlbits']['shift_overflow'] == 'directml', m['dmlbits']
assert sorted(m['resources']) == ['const:0', 'const:1', 'node:0', 'node:1', 'w'], sorted(m['resources'])
" || fail "g/f.json's inputs"
# A shared node, a name bound to a float list (its bits inline), and --explain: the model
# without running.
expect_status 0 eval '(a & k) ^ ~(a & k)' a=gf.npy 'k=[1.5, 2.0, 0.5]' --explain --emit-dxdispatch s
graph_check s
expect_no_file s-k.npy
"$P" -c "
import json; m = json.load(open('s.json'))
assert [c['dispatchable'] for c in m['commands'][:-1]] == ['node:0', 'node:1', 'node:2'], m['commands']
assert m['resources']['const:0']['initialValues'] == [0x3fc00000, 0x40000000, 0x3f000000], m['resources']['const:0']
" || fail "s.json"
# Refusals, nothing written: an empty result; a name whose file would be the output's.
"$P" -c "import numpy as np; np.save('e0.npy', np.zeros((0,), np.uint8))"
expect_status 4 eval 'a & ~b' a=e0.npy b=7 --emit-dxdispatch z
expect_err "zero size"; expect_no_file z.json; expect_no_file z-a.npy
expect_status 2 eval 'out ^ 1' out=n8.npy --emit-dxdispatch o
expect_err "out"; expect_no_file o.json; expect_no_file o-out.npy

finish
