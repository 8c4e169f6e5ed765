"""The module's answers against the CLI's for the same inputs, including the layouts the CLI
converts (big-endian, Fortran order), JSON and literals, and the CLI's other outputs."""

import json

import numpy as np
import pytest

import dmlbits

# Each operator's function, by verb, from the operator table the module's functions are made from.
FUNCS = {o["verb"]: getattr(dmlbits, o["python_name"]) for o in dmlbits.ops()["ops"]}


def data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype).reshape(shape)


# The operator table, as the module has it.
OPS = dmlbits.ops()
NUMPY_NAME = {d["name"]: d["numpy"] for d in OPS["dtypes"]}
OPS_BY_VERB = {o["verb"]: o for o in OPS["ops"]}

# Operand layouts the CLI converts: A's shape, B's shape (broadcast against A's), A's layout, B's.
LAYOUTS = [
    ((3, 4), (3, 4), "c", "c"),
    ((2, 3, 4), (4,), "big-endian", "c"),
    ((5, 6), (5, 6), "fortran", "big-endian-fortran"),
    ((7,), (7,), "big-endian", "c"),
    ((3, 3), (3, 1), "fortran", "c"),
    ((6,), (), "big-endian", "c"),
    ((2, 5), (2, 5), "fortran", "c"),
    ((), (), "c", "c"),
]


def make_cases():
    """Two cases per operator of the table, in turn over LAYOUTS, each with one of the types the
    operator takes at its newest tier and, where it has them, its options (shift-overflow modes,
    output types) in turn; and the first operator at its first level on cpu-reference."""
    cases = []
    for op in OPS["ops"]:
        types = op["tiers"][-1]["input_types"]
        outputs = [] if op["default_output_type"] is None else op["tiers"][-1]["output_types"]
        for _ in range(2):
            k = len(cases)
            a_shape, b_shape, la, lb = LAYOUTS[k % len(LAYOUTS)]
            if op["arity"] == 1:
                b_shape = lb = None
            options = {}
            if op["shift"]:
                modes = OPS["shift_overflow_modes"]
                options["shift_overflow"] = modes[k % len(modes)]
            if outputs:
                options["out_dtype"] = NUMPY_NAME[outputs[k % len(outputs)]]
            cases.append((op["verb"], NUMPY_NAME[types[3 * k % len(types)]], a_shape, b_shape, la, lb, options))
    first = OPS["ops"][0]
    four = (1, 2, 1, 2)  # 4 dimensions: what every operator's first tier takes
    cases.append((first["verb"], NUMPY_NAME[first["tiers"][0]["input_types"][-1]], four,
                  four if first["arity"] == 2 else None, "c", "c" if first["arity"] == 2 else None,
                  {"feature_level": first["introduced"], "backend": "cpu-reference"}))
    return cases


CASES = make_cases()


def layout(a, how):
    if how in ("big-endian", "big-endian-fortran"):
        a = a.astype(a.dtype.newbyteorder(">"))
    if how in ("fortran", "big-endian-fortran"):
        a = np.asarray(a, order="F")
    return a


def cli_options(options):
    args = []
    for k, v in options.items():
        args += ["--" + k.replace("_", "-"), v]
    return args


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[4]}-{i}" for i, c in enumerate(CASES)])
def test_same_answer_as_the_cli(cli, tmp_path, case):
    verb, dtype, a_shape, b_shape, la, lb, options = case
    a = layout(data(dtype, a_shape, 1), la)
    operands = [a]
    if b_shape is not None:
        b = data(dtype, b_shape, 2)
        if OPS_BY_VERB[verb]["shift"]:
            b = b % np.array(70, dtype)  # counts around and past every width
        operands.append(layout(b, lb))
    paths = []
    for i, x in enumerate(operands):
        paths.append(tmp_path / f"in{i}.npy")
        np.save(paths[-1], x)  # np.save keeps the byte order and the Fortran flag
    out = tmp_path / "out.npy"
    r = cli(verb, *paths, "-o", out, *cli_options(options))
    assert r.returncode == 0, r.stderr
    want = np.load(out)
    got = FUNCS[verb](*operands, **options)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_literals_as_the_cli_reads_them(cli):
    for verb, a, b, dtype in [("and", "0xff0f", "[1, 2, 65535]", "uint16"),
                              ("xor", "-1", "[[1, 2], [3, 4]]", "int64"),
                              ("shl", "1", "[0, 7, 8, 32, 33]", "uint8")]:
        r = cli(verb, a, b, "--dtype", dtype, "--format", "json")
        assert r.returncode == 0, r.stderr
        want = json.loads(r.stdout)
        got = FUNCS[verb](int(a, 0), json.loads(b), dtype=dtype)
        assert got.dtype.name == want["dtype"] and list(got.shape) == want["shape"]
        assert got.ravel().tolist() == np.array(want["data"], dtype=dtype).ravel().tolist()


def test_explain_is_the_clis_explain_json(cli, tmp_path):
    a = np.zeros((3, 1, 4), np.uint16)
    b = np.zeros((2, 1), np.uint16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    r = cli("shl", tmp_path / "a.npy", tmp_path / "b.npy", "--explain", "--feature-level", "4_1", "--shift-overflow", "zero")
    assert r.returncode == 0, r.stderr
    assert dmlbits.explain("left_shift", a, b, feature_level="4_1", shift_overflow="zero") == json.loads(r.stdout)
    assert dmlbits.explain("shl", a, b, feature_level="4.1", shift_overflow="zero") == json.loads(r.stdout)


def test_ops_is_the_clis_ops_json(cli):
    assert dmlbits.ops() == json.loads(cli("ops", "--json").stdout)
    assert dmlbits.ops("3_0") == json.loads(cli("ops", "--json", "--feature-level", "3_0").stdout)


def test_devices_has_the_clis_keys(cli):
    want = json.loads(cli("devices", "--json").stdout)
    got = dmlbits.devices()
    assert set(got) == set(want)
    assert got["backends"] == want["backends"]


def test_timing_has_the_clis_time_json_keys(cli, tmp_path):
    a = data("uint32", (64, 64), 3)
    np.save(tmp_path / "a.npy", a)
    r = cli("not", tmp_path / "a.npy", "-o", tmp_path / "o.npy", "--repeat", "3", "--warmup", "1",
            "--time-json", tmp_path / "t.json", "--backend", "cpu")
    assert r.returncode == 0, r.stderr
    want = json.loads((tmp_path / "t.json").read_text())
    result, timing = dmlbits.bitwise_not(a, timing=True, repeat=3, warmup=1, backend="cpu")
    assert result.tobytes() == np.load(tmp_path / "o.npy").tobytes()
    assert set(timing) == set(want)
    assert set(timing["execute"]) == set(want["execute"])
    assert set(timing["execute"]["stats_s"]) == set(want["execute"]["stats_s"])
    assert set(timing["phases"]) == set(want["phases"])  # one writer: the library's timing_json
    assert timing["execute_runs"] == 3 and len(timing["execute"]["samples_s"]) == 3
    assert timing["execute_bytes"] == want["execute_bytes"]
    for key in ("op", "dtype", "shape", "feature_level", "backend", "device"):
        assert timing[key] == want[key], key
