"""The module's operator functions and Dask wrappers are made from the operator table (issue #45
item 1): every row of ``ops()`` has its function, keywords, docstring, alias and wrapper, and a
row added to the table gets them with no other change. A throwaway ninth operator, in a copy of
the table, goes through the same generators."""
import copy
import inspect
import pickle

import numpy as np
import pytest

import dmlbits
import dmlbits.dask as dd
from dmlbits import _core

OPS = dmlbits.ops()["ops"]
COMMON = ["out", "dtype", "backend", "feature_level", "threads", "isa", "adapter", "timing", "repeat", "warmup"]


def expected_keywords(row):
    return (["shift_overflow"] if row["shift"] else []) + (["out_dtype"] if row["default_output_type"] else [])


@pytest.mark.parametrize("row", OPS, ids=[o["verb"] for o in OPS])
def test_every_row_has_its_function_and_wrapper(row):
    f, w = getattr(dmlbits, row["python_name"]), getattr(dd, row["python_name"])
    params = list(inspect.signature(f).parameters)
    arity = row["arity"]
    assert params[:arity] == (["x"] if arity == 1 else ["x1", "x2"])
    assert sorted(params[arity:]) == sorted(COMMON + expected_keywords(row))
    assert sorted(list(inspect.signature(w).parameters)[arity:]) == \
        sorted(["dtype", "backend", "feature_level", "threads", "isa", "adapter"] + expected_keywords(row))
    assert f"``dmlbits {row['verb']}``" in f.__doc__ and row["python_notes"].split()[0] in f.__doc__
    assert dd._FUNCTIONS[row["verb"]] is f
    assert pickle.loads(pickle.dumps(f)) is f and pickle.loads(pickle.dumps(w)) is w
    assert row["python_name"] in dmlbits.__all__ and row["python_name"] in dd.__all__
    if row["python_alias"]:
        assert getattr(dmlbits, row["python_alias"]) is f and getattr(dd, row["python_alias"]) is w


def test_a_ninth_operator_gets_its_function_and_wrapper_from_its_row():
    rows = copy.deepcopy(OPS)
    ninth = dict(copy.deepcopy(next(o for o in OPS if o["verb"] == "and")), verb="andnot",
                 python_name="bitwise_andnot", python_alias="andnot", symbol="",
                 summary="bitwise AND of A and the complement of B", python_notes="A made-up operator.",
                 dml_operator="DML_OPERATOR_ELEMENT_WISE_BIT_ANDNOT")
    functions = _core._operator_functions(rows + [ninth], module="scratch")
    wrappers = dd._wrappers(rows + [ninth])
    f, w = functions["bitwise_andnot"], wrappers["bitwise_andnot"]
    assert functions["andnot"] is f and wrappers["andnot"] is w
    assert list(inspect.signature(f).parameters)[:2] == ["x1", "x2"]
    assert " ".join(f.__doc__.split()).startswith("bitwise_andnot(x1, x2): the bitwise AND of x1 and the complement of x2, as "
                                "DirectML's DML_OPERATOR_ELEMENT_WISE_BIT_ANDNOT computes it.")
    assert "``dmlbits andnot``; alias: andnot" in " ".join(f.__doc__.split())
    # The library has no such operator: its index, the row's position, is refused there.
    with pytest.raises(ValueError, match="no such operator"):
        f(1, 2)
    # The other operators' functions are the same as the module's.
    for o in OPS:
        assert inspect.signature(functions[o["python_name"]]) == inspect.signature(getattr(dmlbits, o["python_name"]))


def test_a_row_without_a_usable_python_name_is_refused():
    rows = copy.deepcopy(OPS)
    rows[0]["python_name"] = "not a name"
    with pytest.raises(ImportError, match="has no usable Python name"):
        _core._operator_functions(rows)


# The functions are built-in functions parsing their arguments in C (lib/python/src/functions.hpp):
# a call that does not fit the signature inspect shows is refused with the TypeError a ``def``
# of that signature raises, word for word; one that fits reaches the operator with each value
# where it was given.
BAD_CALLS = [((), {}), (("a",), {}), (("a", "b", "c", "d"), {}), (("a", "b", "c"), {"out": 1}),
             (("a",), {"x2": 1}), (("a", "b"), {"x1": 1}), (("a", "b"), {"bogus": 1}), (("a",), {"x": 1}),
             (("a", "b"), {"shift_overflow": "zero"}), (("a", "b"), {"out_dtype": "uint8"}), ((), {"x": 1}),
             (("a", "b", "c", "d"), {"bogus": 1}), (("a", "b"), {"out": 1, "dtype": 2, "out_dtype": 3})]


@pytest.mark.parametrize("row", OPS, ids=[o["verb"] for o in OPS])
def test_a_call_that_does_not_fit_is_refused_as_a_def_refuses_it(row):
    f = getattr(dmlbits, row["python_name"])
    namespace = {}
    exec(f"def {row['python_name']}{inspect.signature(f)}: return 'bound'", {}, namespace)
    model = namespace[row["python_name"]]
    refused = 0
    for args, kwargs in BAD_CALLS:
        try:
            model(*args, **kwargs)
        except TypeError as e:
            with pytest.raises(TypeError) as got:
                f(*args, **kwargs)
            assert str(got.value) == str(e), (args, kwargs)
            refused += 1
    assert refused >= len(BAD_CALLS) - 2  # (the shifts take shift_overflow=, bitwise_count out_dtype=)


def test_each_keyword_reaches_the_operator():
    a = np.array([1, 2, 0x80000000], np.uint32)
    shifts = np.array([1, 33, 1], np.uint32)
    assert dmlbits.left_shift(a, shifts, shift_overflow="zero").tolist() == [2, 0, 0]
    assert dmlbits.left_shift(a, shifts, shift_overflow="wrap").tolist() == [2, 4, 0]
    assert dmlbits.bitwise_count(a, out_dtype="uint32").dtype == np.uint32
    out = np.zeros(3, np.uint32)
    assert dmlbits.bitwise_and(a, 3, out) is out and out.tolist() == [1, 2, 0]
    assert dmlbits.bitwise_or(a, 1, out=out) is out and out.tolist() == [1, 3, 0x80000001]
    r, timing = dmlbits.bitwise_xor(a, [1, 1, 1], timing=True, repeat=2, warmup=1, backend="cpu", threads=1)
    assert r.tolist() == [0, 3, 0x80000001] and timing["execute_runs"] == 2 and timing["execute"]["warmup"] == 1
    assert timing["device"].endswith(", 1 thread")
    assert dmlbits.bitwise_and(5, 3, dtype="uint8", backend="cpu-reference").dtype == np.uint8  # (a NumPy scalar)
    with pytest.raises(dmlbits.InvalidInputError, match="needs DML_FEATURE_LEVEL_3_0 or later"):
        dmlbits.bitwise_and(a, a, feature_level="1_0")
    with pytest.raises(dmlbits.UsageError):
        dmlbits.bitwise_and(a, a, isa="neon")
    with pytest.raises(dmlbits.UsageError):
        dmlbits.bitwise_and(a, a, adapter="no such adapter", backend="d3d12")


def test_the_functions_are_made_once_per_row():
    again = _core._operator_functions(OPS)
    assert all(again[name] is getattr(dmlbits, name) for name in again)
