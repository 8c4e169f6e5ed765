"""dmlbits.dask on a real cluster: a LocalCluster of two worker processes (spawned: they import
the installed module, as the client does), Zarr stores in a temporary directory,
every operation compared bit for bit with NumPy (reference.py), errors raised on workers.

One cluster for the whole file (it starts in about 5 s); every test is bounded in time.
"""

import json
import os
import pickle
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

# Debian's python3-dask, -distributed, -zarr and -xarray are in scripts/bootstrap's packages:
# a missing one fails here rather than skipping.
import dask.array as da
import distributed
import numpy as np
import pytest
import xarray as xr
import zarr

import dmlbits
import dmlbits.dask as dd
import dmlbits.shards
from reference import bits, expected

# The operators from the table, each through its Dask wrapper (named as the module's function).
OPS = dmlbits.ops()
NUMPY_NAME = {d["name"]: d["numpy"] for d in OPS["dtypes"]}
BINARY = [o for o in OPS["ops"] if o["arity"] == 2 and not o["shift"]]
SHIFTS = [o for o in OPS["ops"] if o["shift"]]
UNARY = [o for o in OPS["ops"] if o["arity"] == 1]


def wrapper(op):
    return getattr(dd, op["python_name"])

pytestmark = pytest.mark.timeout(120)


def test_every_operator_has_a_dask_function():
    # dmlbits.dask maps each verb to the module's function; the verbs are the program's.
    for o in dmlbits.ops()["ops"]:
        assert o["verb"] in dd._FUNCTIONS, "operator '%s' has no function in lib/python/dmlbits/dask.py (_FUNCTIONS)" % o["verb"]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, memory_limit="1GiB")
    c = distributed.Client(cluster, timeout="60s")
    yield c
    c.close()
    cluster.close()


def _store(tmp_path, name, array, chunks):
    z = zarr.open(zarr.DirectoryStore(str(tmp_path / name)), mode="w", shape=array.shape,
                  chunks=chunks, dtype=array.dtype)
    z[...] = array
    return da.from_zarr(str(tmp_path / name))


def _round_trip(results, tmp_path):
    """Writes every {name: dask array} to its own Zarr store in one computation, and reads them
    back as NumPy arrays. (to_zarr needs regular chunks: unified chunkings are not.)"""
    import dask
    writes = [r.rechunk(tuple(min(16, s) or 1 for s in r.shape)).to_zarr(
                  zarr.DirectoryStore(str(tmp_path / f"{name}.zarr")), overwrite=True, compute=False)
              for name, r in results.items()]
    dask.compute(*writes)
    return {name: zarr.open(zarr.DirectoryStore(str(tmp_path / f"{name}.zarr")), mode="r")[...]
            for name in results}


def _assert_bits(actual, wanted):
    assert actual.dtype == wanted.dtype and actual.shape == wanted.shape
    np.testing.assert_array_equal(bits(actual), bits(wanted))


RNG = np.random.default_rng(26)
A = RNG.integers(0, 2**32, size=(45, 38), dtype=np.uint32)        # chunks (7, 11): 7 x 4 blocks
B = RNG.integers(0, 2**32, size=(45, 38), dtype=np.uint32)        # chunks (9, 8): unaligned
ROW = RNG.integers(0, 2**32, size=(38,), dtype=np.uint32)         # broadcast along rows
COL = RNG.integers(0, 2**32, size=(45, 1), dtype=np.uint32)       # a size-1 dimension
COUNTS = RNG.integers(0, 40, size=(45, 38), dtype=np.uint32)      # shift counts past the width


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("zarr")
    return tmp, {
        "a": _store(tmp, "a.zarr", A, (7, 11)),
        "b": _store(tmp, "b.zarr", B, (9, 8)),
        "row": _store(tmp, "row.zarr", ROW, (5,)),
        "col": _store(tmp, "col.zarr", COL, (10, 1)),
        "counts": _store(tmp, "counts.zarr", COUNTS, (6, 13)),
    }


@pytest.mark.parametrize("other", ["b", "row", "col"])
def test_binary_zarr_round_trip(client, stores, other):
    tmp, s = stores
    results = {op["verb"]: wrapper(op)(s["a"], s[other]) for op in BINARY}
    assert all(isinstance(r, da.Array) and r.dtype == np.uint32 for r in results.values())
    for op, actual in _round_trip(results, tmp / other).items():
        _assert_bits(actual, expected(op, A, {"b": B, "row": ROW, "col": COL}[other]))


def test_shifts_zarr_round_trip(client, stores):
    tmp, s = stores
    results = {(op["verb"], overflow): wrapper(op)(s["a"], s["counts"], shift_overflow=overflow)
               for op in SHIFTS for overflow in (None, "zero", "wrap")}
    back = _round_trip({f"{op}-{overflow}": r for (op, overflow), r in results.items()}, tmp / "shifts")
    for op, overflow in results:
        _assert_bits(back[f"{op}-{overflow}"], expected(op, A, COUNTS, overflow=overflow or "directml"))


def test_unary_zarr_round_trip(client, stores):
    tmp, s = stores
    results, want = {}, {}
    for op in UNARY:
        verb, default = op["verb"], op["default_output_type"]
        results[verb] = wrapper(op)(s["a"])
        assert results[verb].dtype == (A.dtype if default is None else NUMPY_NAME[default]), verb
        want[verb] = expected(verb, A) if default is None else expected(verb, A, out_dtype=NUMPY_NAME[default])
        # An operator with output types of its own: each of them.
        for t in [] if default is None else op["tiers"][-1]["output_types"]:
            results[f"{verb}-{t}"] = wrapper(op)(s["a"], out_dtype=NUMPY_NAME[t])
            assert results[f"{verb}-{t}"].dtype == NUMPY_NAME[t], (verb, t)
            want[f"{verb}-{t}"] = expected(verb, A, out_dtype=NUMPY_NAME[t])
    back = _round_trip(results, tmp / "unary")
    for key, w in want.items():
        _assert_bits(back[key], w)


def test_float_patterns_literals_and_numpy_operands(client):
    x = np.array([[-0.0, np.nan, 1.5, -np.inf]] * 6, np.float32)
    dx = da.from_array(x, chunks=(4, 3))
    _assert_bits(dd.bitwise_xor(dx, x[:1]).compute(), expected("xor", x, x[:1]))
    # A literal is a value in the other operand's dtype (float32(2**31 - 1) is 2**31), as in the module.
    _assert_bits(dd.bitwise_and(dx, 0x7FFFFFFF).compute(),
                 expected("and", x, np.full(x.shape, 0x7FFFFFFF, np.float32)))
    _assert_bits(dd.left_shift(da.from_array(A, chunks=10), 3).compute(), expected("shl", A, np.uint32(3)))


def test_lazy_and_never_probed(client, monkeypatch):
    calls = []
    real = dmlbits._core.bitwise_and
    monkeypatch.setitem(dd._FUNCTIONS, "and", lambda *a, **k: calls.append(a) or real(*a, **k))
    r = dd.bitwise_and(da.from_array(A, chunks=10), da.from_array(B, chunks=7))
    assert calls == [] and r.dtype == np.uint32 and r._meta.shape == (0, 0)
    assert r.chunks[0] == (7, 3, 4, 6, 1, 7, 2, 5, 5, 2, 3)  # aligned: both chunkings' boundaries


def _threads_seen(monkeypatch, build, machine=16, **config):
    # The threads= each block's call was given (None: not given), computed with the scheduler
    # `config` sets on a machine of `machine` threads, the distributed client's hosts left aside.
    seen = []
    real = dmlbits._core.bitwise_and
    monkeypatch.setitem(dd._FUNCTIONS, "and", lambda *a, **k: seen.append(k.get("threads")) or real(*a, **k))
    monkeypatch.setattr(dmlbits._core._dmlbits, "machine_threads", lambda: machine)
    monkeypatch.setattr(dd, "_tasks_per_host", lambda: None)
    monkeypatch.delenv("DMLBITS_THREADS", raising=False)
    import dask
    with dask.config.set(**config):
        build().compute()
    return seen


def test_tasks_share_the_machines_threads(monkeypatch):
    # threads per task = the machine's threads / the tasks that run at once (the pool's, at most
    # the graph's blocks), at least one; unless asked.
    a = da.from_array(A, chunks=(3, 100))  # 15 blocks
    one = da.from_array(A, chunks=(100, 100))  # 1 block
    pool = dict(scheduler="threads", num_workers=4)
    assert set(_threads_seen(monkeypatch, lambda: dd.bitwise_and(a, a), **pool)) == {16 // 4}
    assert _threads_seen(monkeypatch, lambda: dd.bitwise_and(one, one), **pool) == [16]
    assert set(_threads_seen(monkeypatch, lambda: dd.bitwise_and(a, a), machine=3, **pool)) == {1}
    assert set(_threads_seen(monkeypatch, lambda: dd.bitwise_and(a, a), scheduler="sync")) == {16}
    assert set(_threads_seen(monkeypatch, lambda: dd.bitwise_and(a, a, threads=3), **pool)) == {3}
    monkeypatch.setenv("DMLBITS_THREADS", "2")
    seen = []
    real = dmlbits._core.bitwise_and
    monkeypatch.setitem(dd._FUNCTIONS, "and", lambda *a, **k: seen.append(k.get("threads")) or real(*a, **k))
    import dask
    with dask.config.set(**pool):
        dd.bitwise_and(a, a).compute()
    assert set(seen) == {None}  # DMLBITS_THREADS is asking: left to the module


def test_a_clusters_host_shares_its_cores_between_its_workers(client):
    # The fixture's two worker processes of one thread each run on this host: two tasks at once.
    assert dd._tasks_per_host() == 2
    assert dd._threads_per_task(16, 2) == 8 and dd._threads_per_task(1, 2) == 1


def test_refused_when_the_graph_is_built():
    a8 = da.zeros((10, 10), dtype=np.uint8, chunks=5)
    a16 = da.zeros((10, 10), dtype=np.uint16, chunks=5)
    with pytest.raises(dmlbits.InvalidInputError) as in_dask:
        dd.bitwise_and(a8, a16)
    with pytest.raises(dmlbits.InvalidInputError) as in_numpy:
        dmlbits.bitwise_and(np.zeros((10, 10), np.uint8), np.zeros((10, 10), np.uint16))
    assert str(in_dask.value) == str(in_numpy.value)
    with pytest.raises(dmlbits.InvalidInputError):
        dd.left_shift(da.zeros(4, dtype=np.int32, chunks=2), da.zeros(4, dtype=np.int32, chunks=2))
    with pytest.raises(dmlbits.UsageError):
        dd.bitwise_xor(a8, a8, backend="no-such-backend")
    with pytest.raises(dmlbits.InvalidInputError, match="broadcast"):
        dd.bitwise_or(a8, da.zeros((3,), dtype=np.uint8, chunks=2))


# The dtype a graph declares is the dtype its blocks compute (issue #37 item 2): bool is read as
# uint8 by the module (lib/docs/python.md), big-endian data is made native, popcount gives
# out_dtype. Zarr stores what is declared, so a wrong declaration is wrong data there.
DECLARED = [
    ("not", (np.array([True, False, True, True]),), {}),
    ("and", (np.array([True, False, True, True]), np.array([True, True, False, True])), {}),
    ("xor", (np.arange(8, dtype=">u4"), np.arange(8, dtype=">u4")[::-1].copy()), {}),
    ("not", (np.arange(8, dtype=">i2"),), {}),
    ("popcount", (np.arange(8, dtype=np.float16),), {"out_dtype": "uint32"}),
    ("popcount", (np.array([True, False] * 4),), {}),
]


@pytest.mark.parametrize("verb,operands,keywords", DECLARED)
def test_the_declared_dtype_is_the_computed_one(client, tmp_path, verb, operands, keywords):
    fn = dd._FUNCTIONS[verb].__name__
    r = getattr(dd, fn)(*(da.from_array(x, chunks=3) for x in operands), **keywords)
    computed = r.compute()
    assert r.dtype == computed.dtype == getattr(dmlbits, fn)(*operands, **keywords).dtype
    # NumPy's answer on the uint8 reading of bool and the native reading of big-endian data.
    native = [x.view(np.uint8) if x.dtype == bool else x.astype(x.dtype.newbyteorder("=")) for x in operands]
    _assert_bits(computed, expected(verb, *native, **keywords))
    back = _round_trip({"r": r}, tmp_path)["r"]
    _assert_bits(back, computed)


def test_literals_as_the_module_takes_them(client):
    a = np.arange(20, dtype=np.uint8) * 13
    A20 = da.from_array(a, chunks=6)
    # Strings: the CLI's literals, as the module takes them.
    _assert_bits(dd.bitwise_and("0xf0", A20).compute(), expected("and", np.full(20, 0xF0, np.uint8), a))
    _assert_bits(dd.bitwise_or(A20, "0b101").compute(), expected("or", a, np.full(20, 5, np.uint8)))
    # A list as long as the array: cut into blocks with it (each block gets its own part).
    lit = list(range(100, 120))
    _assert_bits(dd.bitwise_xor(A20, lit).compute(), expected("xor", a, np.array(lit, np.uint8)))
    _assert_bits(dd.bitwise_xor(A20, "[" + ", ".join(map(str, lit)) + "]").compute(),
                 expected("xor", a, np.array(lit, np.uint8)))
    # A list that does not broadcast with the array: refused when the graph is built.
    with pytest.raises(dmlbits.InvalidInputError, match=r"shapes \(20,\) and \(6,\) cannot be broadcast"):
        dd.bitwise_and(A20, [1, 2, 3, 4, 5, 6])
    # A float literal keeps its sign (item 1).
    z = da.from_array(np.zeros(5, np.float32), chunks=2)
    assert dd.bitwise_or(z, -0.0).compute().view(np.uint32).tolist() == [0x80000000] * 5


def test_unknown_chunk_sizes(client):
    a = np.arange(20, dtype=np.uint8)
    x = da.from_array(a, chunks=6)
    picked = x[x > 3]  # chunk sizes unknown (nan) until computed
    _assert_bits(dd.bitwise_not(picked).compute(), expected("not", a[a > 3]))
    _assert_bits(dd.bitwise_and(picked, 0x0F).compute(), expected("and", a[a > 3], np.uint8(0x0F)))
    # Two arrays whose blocks cannot be paired: a clear refusal now, not a wrong pairing later.
    with pytest.raises(dmlbits.UsageError, match=r"compute_chunk_sizes"):
        dd.bitwise_and(picked, x)
    _assert_bits(dd.bitwise_and(picked.compute_chunk_sizes(), picked).compute(), a[a > 3])


def test_option_errors_at_graph_build():
    x = da.from_array(np.arange(8, dtype=np.uint8), chunks=4)
    # The module's own refusals, word for word, before anything is computed.
    for keywords in ({"threads": 0}, {"threads": 300, "backend": "cpu"}, {"isa": "no-such-isa"},
                     {"threads": 2, "backend": "d3d12"}):
        with pytest.raises(dmlbits.UsageError) as in_dask:
            dd.bitwise_xor(x, 1, **keywords)
        with pytest.raises(dmlbits.UsageError) as in_numpy:
            dmlbits.bitwise_xor(np.arange(8, dtype=np.uint8), 1, **keywords)
        assert str(in_dask.value) == str(in_numpy.value), keywords


@pytest.mark.parametrize("cls", [dmlbits.Error, dmlbits.UsageError, dmlbits.InvalidInputError,
                                 dmlbits.UnsupportedError, dmlbits.FileError, dmlbits.BackendError,
                                 dmlbits.InternalError, dmlbits.MismatchError])
def test_exceptions_pickle(cls):
    e = cls("reading 'a.npy': unsupported dtype '<c8'")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is cls and str(back) == str(e) and back.exit_status == e.exit_status


def test_worker_error_reaches_the_caller(client):
    a8, a16 = np.zeros(4, np.uint8), np.zeros(4, np.uint16)
    with pytest.raises(dmlbits.InvalidInputError) as here:
        dmlbits.bitwise_and(a8, a16)
    with pytest.raises(dmlbits.InvalidInputError) as there:
        client.submit(dmlbits.bitwise_and, a8, a16).result()
    assert type(there.value) is type(here.value) and str(there.value) == str(here.value)
    # Through a graph: an operand whose declared dtype (uint8) is not what its blocks hold, so
    # that the graph validates and the worker refuses.
    lying = da.from_array(a16, chunks=2).map_blocks(lambda b: b, dtype=np.uint8)
    with pytest.raises(dmlbits.InvalidInputError) as graph:
        dd.bitwise_and(lying, da.from_array(a8, chunks=2)).compute()
    with pytest.raises(dmlbits.InvalidInputError) as block:
        dmlbits.bitwise_and(a16[:2], a8[:2])
    assert str(graph.value) == str(block.value)


def test_xarray_dataarray(client):
    a = xr.DataArray(da.from_array(A, chunks=(7, 11)), dims=("y", "x"), name="a")
    b = xr.DataArray(da.from_array(ROW, chunks=9), dims=("x",))
    r = dd.bitwise_xor(a, b)
    assert isinstance(r, xr.DataArray) and r.dims == ("y", "x") and isinstance(r.data, da.Array)
    _assert_bits(r.compute().values, expected("xor", A, ROW))


# The recipe of dmlbits.shards (README, "When one machine is not enough"): a manifest fanned out
# over the cluster, one task per shard running the CLI, the reports gathered and merged.
MANIFEST = Path(__file__).resolve().parents[2] / "testdata" / "golden" / "manifest.json"


def test_sharded_check_on_the_cluster(client, tmp_path):
    cli = os.environ["DMLBITS"]
    whole = subprocess.run([cli, "check", MANIFEST], capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    names = [c["name"] for c in json.loads(MANIFEST.read_text())["cases"]]
    report = dmlbits.shards.check_on_cluster(client, str(MANIFEST), shards=5, cli=cli,
                                             junit=tmp_path / "merged.xml", junit_dir=tmp_path)
    assert report and report.passed == len(names) and report.not_run == [] and report.problems == []
    assert sorted(p.name for p in tmp_path.glob("shard-*.xml")) == [f"shard-{k}.xml" for k in range(5)]
    merged = [c.get("name") for c in ET.parse(tmp_path / "merged.xml").getroot().iter("testcase")]
    assert sorted(merged) == sorted(names)


def test_a_dying_shard_loses_only_its_own_cases(client, tmp_path):
    # Shard 1 of 3 is killed (SIGKILL) every time it runs, retries included; 0 and 2 report.
    wrapper = tmp_path / "dmlbits-dies-in-shard-1"
    wrapper.write_text('#!/bin/sh\ncase "$*" in *"--shard 1/3"*) kill -9 $$;; esac\n'
                       f'exec "{os.environ["DMLBITS"]}" "$@"\n')
    wrapper.chmod(0o755)
    names = [c["name"] for c in json.loads(MANIFEST.read_text())["cases"]]
    report = dmlbits.shards.check_on_cluster(client, str(MANIFEST), shards=3, cli=str(wrapper),
                                             junit=tmp_path / "merged.xml")
    lost = [n for i, n in enumerate(names) if i % 3 == 1]
    assert not report
    assert [c for _, c, _ in report.not_run] == lost and report.passed == len(names) - len(lost)
    assert len(report.problems) == 1 and "shard 1/3" in report.problems[0] and "status -9" in report.problems[0]
    assert f"NOT RUN {lost[0]} " in report.summary()
    errors = {c.get("name"): c.find("error").get("message")
              for c in ET.parse(tmp_path / "merged.xml").getroot().iter("testcase") if c.find("error") is not None}
    assert errors == {n: "did not run: no report from shard 1/3" for n in lost}
