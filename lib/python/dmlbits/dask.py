"""dmlbits' operators on Dask arrays (and xarray DataArrays backed by them): lazy, chunked.

    >>> import dask.array as da, dmlbits.dask as dd
    >>> a = da.from_zarr("a.zarr"); b = da.from_zarr("b.zarr")
    >>> dd.bitwise_xor(a, b, feature_level="5_0").to_zarr("x.zarr")

Each function takes what its namesake in ``dmlbits`` takes (Dask arrays, NumPy arrays, Python
literals: numbers, lists, the CLI's strings; the same keywords except ``out=`` and ``timing=``)
and returns a Dask array; nothing runs until it is computed. What it does, and why:

- The request is validated when the graph is built, by the module itself (``dmlbits.explain``
  on stand-in arrays of the operands' dtypes and ranks, with every keyword: nothing is
  allocated or run), so a refusal raises the module's exception (``dmlbits.InvalidInputError``,
  ``UsageError`` for ``threads=0`` ...) at once, not later on a worker. The result's dtype is
  the output tensor's of the same description, the dtype the blocks compute: bool is read as
  uint8 and gives uint8 (as in the module), big-endian data gives the native dtype (``>u4``:
  uint32). Dask is given ``dtype=`` and ``meta=`` and never probes the function with 0-d or
  size-1 arrays.
- A literal with a shape (a list, "[1, 2]") is read by the module in the operands' dtype and
  becomes an array that Dask cuts into blocks with the other operand; the full shapes must
  broadcast, checked at once. A number stays a literal of every block.
- Sizes Dask does not know (nan, after boolean indexing: ``x[x > 0]``) are fine with one array
  operand; with two, whose blocks could not be paired, the call is refused: call
  ``.compute_chunk_sizes()`` first.
- Two operands are combined with ``dask.array.blockwise`` as Dask's own element-wise operators
  are: their chunks are aligned (unified) and size-1 dimensions broadcast as NumPy does, so
  operands of different chunkings pair the right elements. (``map_blocks`` pairs blocks by
  position.)
- Each block runs ``dmlbits.<op>`` on a worker: a built-in function that pickles by
  reference; its exceptions pickle too, so an error on a worker reaches the caller as the same
  exception type with the same message.
- Tasks share the cores: unless ``threads=`` (or ``DMLBITS_THREADS``) is given, a block runs on
  the machine's CPU threads divided by the tasks that may run at once on it (the task threads of
  the workers on that host, as the current distributed client lists them, else the worker's or
  the local scheduler's, and no more than the graph's blocks), at least one.

Zarr end to end: ``da.from_zarr(src)`` -> an operation -> ``.to_zarr(dst)`` (``to_zarr`` needs
regular chunks: ``.rechunk(...)`` first if the result's chunks are not).

Expressions: ``evaluate("popcount(a ^ b)", {"a": a, "b": b})`` is dmlbits.evaluate blockwise,
each block's graph run as one (names found in the caller's frame as dmlbits.evaluate finds them).
"""

import collections
import functools
import json
import math
import numbers
import os
import sys

import numpy as np

from . import _core

# The module's function of each verb, from the operator table (dmlbits._core).
_FUNCTIONS = {row["verb"]: _core.OPERATORS[row["python_name"]] for row in _core._OPS}


def _is_literal(x):
    # What the module takes as a literal in the other operand's dtype: Python numbers, lists,
    # strings (the CLI's literals: "0xff", "0b101", "[1, 2]").
    return isinstance(x, (numbers.Number, list, tuple, str)) and not isinstance(x, np.generic)


def _literal_shape(x):
    # The shape of a literal the module has accepted (so rectangular): () for a number or a
    # string other than a JSON array.
    if isinstance(x, str):
        if not x.lstrip().startswith("["):
            return ()
        x = json.loads(x)
    shape = []
    while isinstance(x, (list, tuple)):
        shape.append(len(x))
        x = x[0] if x else None
    return tuple(shape)


def _broadcast_shape(verb, shapes):
    # NumPy's broadcast of the operands' shapes, where a size may be unknown (nan: a Dask array
    # after boolean indexing); an unknown size is taken to fit, and stays unknown.
    ndim = max(len(s) for s in shapes)
    out = []
    for axis in range(ndim):
        sizes = [s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0]
        known = {n for n in sizes if not math.isnan(n) and n != 1}
        if len(known) > 1:
            from ._errors import InvalidInputError
            raise InvalidInputError(f"dmlbits.dask: {verb}: shapes {' and '.join(map(str, shapes))} "
                                    f"cannot be broadcast together")
        out.append(math.nan if any(math.isnan(n) for n in sizes) else (known.pop() if known else 1))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def _numpy_dtypes():
    # DirectML's data type names (explain()'s "DataType") -> NumPy's, from the module's table.
    return {"DML_TENSOR_DATA_TYPE_" + d["name"]: np.dtype(d["numpy"]) for d in _core.ops()["dtypes"]}


def _tensor_dtype(described, tensor):
    return _numpy_dtypes()[described["tensors"][tensor]["DataType"]]


def _stand_in(x):
    # An array of x's dtype and rank with one element (none if x has a 0-length dimension):
    # enough for the module to validate dtype, rank and broadcast, nothing to compute.
    shape = tuple(0 if s == 0 else 1 for s in x.shape)
    return np.zeros(shape, dtype=x.dtype)


def _xarray_dataarray():
    try:
        import xarray
    except ImportError:
        return None
    return xarray.DataArray


def _apply(verb, operands, options):
    import dask.array as da

    DataArray = _xarray_dataarray()
    if DataArray is not None and any(isinstance(x, DataArray) for x in operands):
        import xarray
        # Names and coordinates from xarray; the data (Dask arrays) through this function.
        return xarray.apply_ufunc(functools.partial(_apply_to, verb, options), *operands, dask="allowed",
                                  keep_attrs=True)

    arrays = [x if _is_literal(x) else da.asarray(x) for x in operands]
    if all(_is_literal(x) for x in arrays):
        raise _core._usage("dmlbits.dask: at least one operand must be an array")
    # The module's own validation, on stand-ins, with every keyword (threads= too): raises the
    # module's exceptions now.
    stand_ins = [x if _is_literal(x) else _stand_in(x) for x in arrays]
    described = _core.explain(verb, *stand_ins, **options)
    # The result's dtype as the module computes it: bool is read as uint8 (and gives uint8),
    # big-endian data is made native (">u4" gives uint32), popcount gives out_dtype.
    out_dtype = _tensor_dtype(described, "OutputTensor")
    # A literal with a shape is an array in the operands' dtype, read by the module (x | 0 is
    # x, bit for bit, in every dtype): Dask then cuts it into blocks with the other operand.
    # (Each block would otherwise get the whole literal.) A number stays a literal.
    arrays = [da.from_array(_core.bitwise_or(x, 0, dtype=_tensor_dtype(described, "ATensor")))
              if _is_literal(x) and _literal_shape(x) != () else x for x in arrays]
    out_ind, args, blocks = _blockwise_layout(verb, arrays)
    ndim = len(out_ind)
    fn = functools.partial(_block, verb, options, blocks, _tasks_per_host())
    return da.blockwise(fn, out_ind, *args, dtype=out_dtype, meta=np.empty((0,) * ndim, out_dtype),
                        align_arrays=True, concatenate=True,
                        name=f"dmlbits-{verb}-" + _token(verb, arrays, options))


def _blockwise_layout(verb, arrays):
    """da.blockwise's output index, its (array, index) arguments (a literal: (value, None)) and the
    most blocks of any array, for the operands of an operator or an expression. NumPy's broadcast
    of the full shapes (the stand-ins checked the ranks and dtypes); blocks of unknown sizes cannot
    be paired with another array's."""
    shapes = [x.shape for x in arrays if not _is_literal(x)]
    out_shape = _broadcast_shape(verb, shapes)
    unknown = [x for x in arrays if not _is_literal(x) and any(math.isnan(n) for n in x.shape)]
    if unknown and len(shapes) > 1:
        raise _core._usage(f"dmlbits.dask: {verb}: shapes {' and '.join(map(str, shapes))}: an operand's chunk "
                           f"sizes are unknown (nan, as after boolean indexing); call .compute_chunk_sizes() on "
                           f"it first")
    ndim = len(out_shape)
    out_ind = tuple(range(ndim))
    args = []
    for x in arrays:
        args += [x, None] if _is_literal(x) else [x, out_ind[ndim - x.ndim:]]
    blocks = max([x.npartitions for x in arrays if not _is_literal(x)], default=1)
    return out_ind, args, blocks


def _threads_per_task(machine_threads, concurrent):
    # The machine's threads shared by the tasks that run at once on it, at least one each.
    return max(1, machine_threads // max(1, concurrent))


def _tasks_per_host():
    # With a distributed client: the most task threads of the workers on one host (worker
    # processes there share its cores); None without one.
    if "distributed" not in sys.modules:
        return None
    try:
        client = sys.modules["distributed"].default_client()
    except ValueError:
        return None
    per_host = collections.Counter()
    for w in client.scheduler_info().get("workers", {}).values():
        per_host[w.get("host")] += w.get("nthreads", 1)
    return max(per_host.values(), default=None)


def _local_tasks():
    # The tasks that may run at once in this process: a distributed worker's threads, or the
    # local scheduler's pool (one for the synchronous scheduler, which runs tasks on the
    # calling thread; the threaded one runs them on its pool's).
    try:
        from distributed import get_worker
        return get_worker().nthreads
    except (ImportError, ValueError):
        pass
    import threading
    import dask
    import dask.system
    if threading.current_thread() is threading.main_thread():
        return 1
    return dask.config.get("num_workers", None) or dask.system.CPU_COUNT


def _block_options(options, blocks, host_tasks):
    # A block's options on a worker: `blocks` of the graph and `host_tasks` (None: unknown when
    # the graph was built) bound the tasks that run at once beside it.
    if ("threads" not in options and not os.environ.get("DMLBITS_THREADS")
            and _core._dmlbits.backend_uses_cpu(options.get("backend") or "auto")):
        tasks = min(blocks, host_tasks or _local_tasks())
        options = dict(options, threads=_threads_per_task(_core._dmlbits.machine_threads(), tasks))
    return options


def _block(verb, options, blocks, host_tasks, *operands):
    return _FUNCTIONS[verb](*operands, **_block_options(options, blocks, host_tasks))


def _run_expression(expression, bindings, options, explain_only=False):
    # dmlbits.evaluate with its names already found (bindings) and the wrappers' options dict.
    o = options
    return _core._evaluate(expression, bindings, None, o.get("dtype"),
                           _core._options(o.get("backend") or "auto", o.get("feature_level"), o.get("shift_overflow"),
                                          o.get("out_dtype"), o.get("threads"), o.get("isa"), o.get("adapter")),
                           False, 1, 0, explain_only)


def _expression_block(expression, names, options, blocks, host_tasks, *operands):
    return _run_expression(expression, dict(zip(names, operands)), _block_options(options, blocks, host_tasks))


def evaluate(expression, local_dict=None, *, dtype=None, out_dtype=None, shift_overflow=None, backend=None,
             feature_level=None, threads=None, isa=None, adapter=None):
    """dmlbits.evaluate on Dask arrays, lazily: a Dask array whose blocks are the expression
    evaluated on the operands' blocks (aligned and broadcast as Dask's element-wise operators
    pair them). Operands as dmlbits.evaluate's, found as it finds them (``local_dict``, then the
    caller's locals and globals): Dask arrays, NumPy arrays and Python literals; a literal with
    a shape (a list) becomes an array of the dtype it meets and is cut into blocks. The graph is
    validated at once, on stand-ins (see this module's help); at least one operand must be an
    array. Keywords as dmlbits.evaluate's, but for ``out=`` and ``timing=``."""
    frame = sys._getframe(1)
    try:
        bindings = _core._bindings(expression, local_dict, frame)
    finally:
        del frame
    return _apply_expression(expression, bindings,
                             _opts(dtype=dtype, out_dtype=out_dtype, shift_overflow=shift_overflow, backend=backend,
                                   feature_level=feature_level, threads=threads, isa=isa, adapter=adapter))


def _apply_expression(expression, bindings, options):
    import dask.array as da

    names = list(bindings)
    arrays = [x if _is_literal(x) else da.asarray(x) for x in bindings.values()]
    if all(_is_literal(x) for x in arrays):
        raise _core._usage("dmlbits.dask: at least one operand of the expression must be an array")
    stand_ins = [x if _is_literal(x) else _stand_in(x) for x in arrays]
    described = _run_expression(expression, dict(zip(names, stand_ins)), options, explain_only=True)
    out_dtype = _numpy_dtypes()["DML_TENSOR_DATA_TYPE_" + described["output"]["dtype"]]
    # A literal with a shape becomes an array of the dtype it meets in the graph (its
    # constant's), so that Dask cuts it into blocks with the arrays; one that meets two dtypes
    # has no one array.
    bound = {str(_core._operand(x)).strip() for x in arrays if _is_literal(x)}
    for c in described["constants"]:
        if c["shape"] and c["literal"] not in bound:
            raise _core._usage(f"dmlbits.dask: evaluate: the literal {c['literal']} of the expression would be given "
                               f"whole to every block; bind it to a name instead (a literal with a shape bound to a "
                               f"name is cut into blocks)")
    for i, x in enumerate(arrays):
        if not (_is_literal(x) and _literal_shape(x) != ()):
            continue
        text = x if isinstance(x, str) else _core._operand(x)
        dtypes = {c["dtype"] for c in described["constants"] if c["literal"] == text.strip()}
        if len(dtypes) != 1:
            raise _core._usage(f"dmlbits.dask: evaluate: the literal '{names[i]}' meets operands of "
                               f"{len(dtypes) or 'no'} dtypes; give it as an array")
        dt = _numpy_dtypes()["DML_TENSOR_DATA_TYPE_" + dtypes.pop()]
        arrays[i] = da.from_array(_core.bitwise_or(x, 0, dtype=dt))
    out_ind, args, blocks = _blockwise_layout("evaluate", arrays)
    ndim = len(out_ind)
    fn = functools.partial(_expression_block, expression, tuple(names), options, blocks, _tasks_per_host())
    return da.blockwise(fn, out_ind, *args, dtype=out_dtype, meta=np.empty((0,) * ndim, out_dtype),
                        align_arrays=True, concatenate=True,
                        name="dmlbits-evaluate-" + _token(expression, names, arrays, options))


def _apply_to(verb, options, *operands):
    return _apply(verb, operands, options)


def _token(*parts):
    from dask.base import tokenize
    return tokenize(*parts)


def _opts(**kw):
    return {k: v for k, v in kw.items() if v is not None}


# The wrappers, made from the operator table as the module's functions are: each a plain def.
_WRAPPER_SOURCE = """
def {name}({params}, /, *, dtype=None{keywords}, backend=None, feature_level=None, threads=None, isa=None,
        adapter=None):
    return _apply({verb!r}, ({params},), _opts(dtype=dtype{keyword_args}, backend=backend,
                  feature_level=feature_level, threads=threads, isa=isa, adapter=adapter))
"""


def _wrappers(rows):
    """{name: wrapper} for the operator table's rows, aliases included (a test passes others)."""
    wrappers = {}
    for row in rows:
        name, keywords, params = row["python_name"], _core._operator_keywords(row), _core._params(row)
        source = _WRAPPER_SOURCE.format(name=name, params=", ".join(params), verb=row["verb"],
                                        keywords="".join(f", {k}=None" for k in keywords),
                                        keyword_args="".join(f", {k}={k}" for k in keywords))
        alias = f" Alias: {row['python_alias']}." if row["python_alias"] else ""
        f = _core._compiled(source, name, globals(), f"<dmlbits.dask operator {row['verb']}>", __name__,
                            f"dmlbits.{name} on Dask arrays, lazily: a Dask array, computed blockwise when it is "
                            f"computed (see this module's help).{alias}")
        wrappers[name] = f
        if row["python_alias"]:
            wrappers[row["python_alias"]] = f
    return wrappers


_WRAPPERS = _wrappers(_core._OPS)
globals().update(_WRAPPERS)
__all__ = list(_WRAPPERS) + ["evaluate"]
