"""The operators and the rest of the tool, as Python functions over the extension.

The operators' functions are built-in functions the extension makes from the operator table,
the others plain ``def``s: all pickle by reference (``dmlbits.bitwise_and``) and can be shipped
to worker processes (pybind11 2.10's own functions cannot be pickled).
"""

import dataclasses
import decimal
import functools
import json
import math
import os
import re
import struct
import sys
import textwrap

from . import _dmlbits



@functools.lru_cache(maxsize=256)
def _options(backend, feature_level, shift_overflow, out_dtype, threads, isa, adapter):
    # Parsed and checked once per combination, by the extension (the library's parsers): a small
    # call then parses no strings.
    return _dmlbits.run_options(backend or "", _text(feature_level), shift_overflow or "", out_dtype, threads,
                                isa or "", adapter or "")


def _usage(message):
    from ._errors import UsageError
    return UsageError(message)


def _text(level):
    if level is None:
        return ""
    if isinstance(level, (int, float)) and not isinstance(level, bool):
        level = repr(level)  # 4.1 -> "4.1"
    return str(level)


def _float_text(v):
    # A float as the literal text of its exact value, so that the reader rounds it once to the
    # dtype, as np.float32(v) rounds the double v (the shortest repr would be rounded again:
    # "1.0000000596046448", 1 + 2**-24, would round up to float32 where NumPy rounds to even).
    # NaN keeps its sign and payload ("-nan(0x8000000000000)"), infinities are named.
    if math.isnan(v):
        bits = struct.unpack("<Q", struct.pack("<d", v))[0]
        return json.dumps(f"{'-' if bits >> 63 else ''}nan({bits & 0xFFFFFFFFFFFFF:#x})")
    if math.isinf(v):
        return '"inf"' if v > 0 else '"-inf"'
    text = str(decimal.Decimal(v))
    return text if any(c in text for c in ".eE") else text + ".0"  # "-0" and "1" read as integers


def _operand(x):
    # Lists and tuples are JSON array literals, as on the command line ('[1, 2]'): they take the
    # other operand's dtype. Floats are written as _float_text writes them.
    if isinstance(x, (list, tuple)):
        def text(v):
            if isinstance(v, (list, tuple)):
                return "[" + ", ".join(text(e) for e in v) + "]"
            if isinstance(v, bool):
                return str(int(v))
            if isinstance(v, float):
                return _float_text(v)
            return json.dumps(v)
        return text(x)
    return x


# The operators' functions are made from the operator table (``ops()``: the library's one
# table), so that an operator added there has its Python function, docstring, keywords, alias
# and Dask wrapper without a line here. Each is a built-in function of the extension
# (``_dmlbits.operator_function``, lib/python/src/functions.hpp): Python's call parsed in C
# straight into the extension's run(op, x1, x2, out, dtype, backend, feature_level,
# shift_overflow, out_dtype, threads, isa, adapter, timing, repeat, warmup), with no Python frame
# on the way (a ``def`` wrapper cost a third of a 4x4 call). It has the signature of the ``def``
# it replaces (inspect and help() show it), Python's own TypeErrors for calls that do not fit,
# and pickles by reference as a ``def`` does. run() resolves the seven option keywords through
# _options (keeping the result for the objects it has seen), turns lists and tuples into literals
# as _operand does, and a dtype= other than a name with numpy.dtype(...).name.


def _params(row):
    return ["x"] if row["arity"] == 1 else ["x1", "x2"]


def _operator_keywords(row):
    """The keywords an operator takes beyond every operator's, by the table's columns."""
    return (["shift_overflow"] if row["shift"] else []) + (["out_dtype"] if row["default_output_type"] else [])


def _operator_doc(row, keywords):
    params = _params(row)
    summary = row["summary"]
    for letter, name in zip("AB", params):
        summary = re.sub(rf"\b{letter}\b", name, summary)
    symbol = row["symbol"]
    head = (f"{symbol}{params[0]}" if row["arity"] == 1 else f"{params[0]} {symbol} {params[1]}") if symbol else \
        f"{row['python_name']}({', '.join(params)})"
    body = [row["python_notes"]]
    if row["arity"] == 2:
        body.append("Python ints, floats and lists are literals in the other operand's dtype (or ``dtype``).")
    if "out_dtype" in keywords:
        types = [t.lower() for t in row["tiers"][-1]["output_types"]]
        body.append(f"The result is {types[0]} unless ``out_dtype`` is one of {', '.join(map(repr, types[1:]))}.")
    body.append(f"The CLI's ``dmlbits {row['verb']}``{'; alias: ' + row['python_alias'] if row['python_alias'] else ''}.")
    head = f"{head}: the {summary}, as DirectML's {row['dml_operator']} computes it."
    # Every keyword the function takes (the table's columns add shift_overflow and out_dtype).
    described = {
        "out": "a writeable array of the result's dtype and shape, written and returned",
        "dtype": "the dtype of literal operands (default: the other operand's)",
        "shift_overflow": '"directml" (default), "zero" or "wrap": counts at or past the width',
        "out_dtype": "the result's dtype, " + " or ".join(
            repr(t.lower()) for t in row["tiers"][-1]["output_types"]) if "out_dtype" in keywords else "",
        "backend": '"auto" (default), "cpu", "d3d12" or "cpu-reference"',
        "feature_level": 'DirectML\'s feature level whose rules apply ("6_4", 4.1; default: dmlbits(1)\'s)',
        "threads": "CPU threads (default: DMLBITS_THREADS, else the library's choice)",
        "isa": "the CPU instruction set of the kernels (default: the library's choice for this CPU)",
        "adapter": "the D3D12 adapter (d3d12 backend)",
        "timing": "True returns ``(result, timing_dict)``, the CLI's --time-json",
        "repeat": "runs timed (with timing=True)",
        "warmup": "untimed runs first",
    }
    names = ["out", "dtype", *keywords, "backend", "feature_level", "threads", "isa", "adapter", "timing", "repeat",
             "warmup"]
    listed = "\n".join(textwrap.fill(f"{k}: {described[k]}.", 96, subsequent_indent="    ") for k in names)
    return textwrap.fill(head, 96) + "\n\n" + textwrap.fill(" ".join(body), 96) + "\n\nKeywords:\n" + listed


def _compiled(source, name, scope, where, module, doc):
    """The function ``name`` that ``source`` defines, its names looked up in ``scope`` (a
    module's globals), named as a ``def`` of ``module`` is, so that it pickles by reference."""
    namespace = {}
    exec(compile(source, where, "exec"), scope, namespace)
    f = namespace[name]
    f.__module__, f.__qualname__, f.__doc__ = module, name, doc
    return f


def _operator_functions(rows, module="dmlbits"):
    """{name: function} for the table's rows, aliases included, in table order: each row's
    position is its operator index. ``rows`` is ``ops()["ops"]`` (a test passes others)."""
    functions = {}
    for index, row in enumerate(rows):
        name, keywords = row["python_name"], _operator_keywords(row)
        if not name.isidentifier() or name in functions:
            raise ImportError(f"dmlbits: operator '{row['verb']}' has no usable Python name ({name!r})")
        f = _dmlbits.operator_function(index, name, module, row["arity"], "shift_overflow" in keywords,
                                       "out_dtype" in keywords, _operator_doc(row, keywords))
        functions[name] = f
        if row["python_alias"]:
            functions[row["python_alias"]] = f
    return functions


_OPS = _dmlbits.ops("")["ops"]
_OP_INDEX = {row["verb"]: i for i, row in enumerate(_OPS)}
# NumPy's names (and the aliases) for the CLI's verbs.
_NUMPY_NAMES = {name: row["verb"] for row in _OPS for name in (row["python_name"], row["python_alias"]) if name}
OPERATORS = _operator_functions(_OPS)
globals().update(OPERATORS)


def _verb(op):
    verb = _NUMPY_NAMES.get(op, op)
    if verb not in _OP_INDEX:
        raise _usage(f"unknown operator '{op}' (known: {', '.join(list(_NUMPY_NAMES) + list(_OP_INDEX))})")
    return verb


def explain(op, x1, x2=None, /, *, dtype=None, shift_overflow=None, out_dtype=None, backend="auto",
            feature_level=None, threads=None, isa=None, adapter=None):
    """The DirectML operator description ``op`` would execute on these operands, as a dict:
    the content of the CLI's ``--explain-json``. Nothing runs. ``op`` is a NumPy name
    ("bitwise_and") or the CLI's verb ("and")."""
    verb = _verb(op)
    return _dmlbits.explain(_OP_INDEX[verb], _operand(x1), None if x2 is None else _operand(x2),
                            dtype,
                            _options(backend, feature_level, shift_overflow, out_dtype, threads, isa, adapter))


@functools.lru_cache(maxsize=256)
def _expression_names(expression):
    # Parsed once per text (a syntax error is raised, and not kept, every time).
    return tuple(_dmlbits.expression_names(expression))


def _bindings(expression, local_dict, frame):
    """{name: operand} for the expression's names: ``local_dict``'s entries (all of them: one the
    expression does not use is refused by the library, as on the command line), then, for a name
    the dict lacks, the variable of that name in ``frame`` (its locals, then its globals), as
    numexpr looks names up. A name found nowhere is left out: the library refuses it with a
    caret under it. Parses the expression (its syntax refused here, as UsageError)."""
    names = _expression_names(expression) if type(expression) is str else _dmlbits.expression_names(expression)
    bindings = dict(local_dict) if local_dict is not None else {}
    for key in bindings:
        if not isinstance(key, str):
            raise _usage(f"local_dict: its keys are the expression's names (strings), not {key!r}")
    for name in names:
        if name in bindings or frame is None:
            continue
        if name in frame.f_locals:
            bindings[name] = frame.f_locals[name]
        elif name in frame.f_globals:
            bindings[name] = frame.f_globals[name]
    return bindings


def _evaluate(expression, bindings, out, dtype, options, timing, repeat, warmup, explain_only):
    if not isinstance(expression, str):
        raise _usage(f"expression: expected a string, not {type(expression).__name__}")
    return _dmlbits.evaluate(expression, list(bindings), list(bindings.values()), out, dtype,
                             options, bool(timing), repeat, warmup, explain_only)


def evaluate(expression, local_dict=None, *, out=None, dtype=None, out_dtype=None, shift_overflow=None,
             backend="auto", feature_level=None, threads=None, isa=None, adapter=None, timing=False, repeat=1,
             warmup=0):
    """An expression of the operators, run as one graph, as ``dmlbits eval`` runs it::

        >>> dmlbits.evaluate("popcount(a ^ b)", {"a": x, "b": y})

    The language (dmlbits(1), EXPRESSIONS): C's operators ``& | ^ ~ << >>`` with C's precedence,
    the operators as functions by their verbs or NumPy's names (``popcount(x)``,
    ``bitwise_count(x, out_dtype=uint32)``, ``xor(a, b)``), names and literals (``5``, ``0xff``,
    ``[1, 2]``). Each name is an operand: an ndarray (any layout the operator functions take),
    anything ``numpy.asarray`` takes, or a Python int, float, list or tuple, which is a literal
    taking the dtype of the operand it meets (or ``dtype``), as the functions' literals do.
    Names are looked up in ``local_dict``, then, as numexpr does, in the caller's locals and
    globals; every entry of ``local_dict`` must be a name of the expression (an unused one is
    refused, as on the command line). Keywords as the operator functions' (``help(dmlbits)``):
    ``out_dtype`` is the result type of every popcount that names none, ``shift_overflow``
    applies to every shift; ``out=`` must have the result's dtype and shape; ``timing=True``
    returns ``(result, timing_dict)``. The GIL is released while it runs, Ctrl-C stops it, and
    a refusal raises a dmlbits.Error subclass (a syntax error: UsageError, its message quoting the
    expression with a caret under the column).
    """
    frame = sys._getframe(1)
    try:
        bindings = _bindings(expression, local_dict, frame)
    finally:
        del frame
    return _evaluate(expression, bindings, out, dtype,
                     _options(backend, feature_level, shift_overflow, out_dtype, threads, isa, adapter), timing,
                     repeat, warmup, False)


def explain_expression(expression, local_dict=None, *, dtype=None, out_dtype=None, shift_overflow=None,
                       backend="auto", feature_level=None, threads=None, isa=None, adapter=None):
    """The graph ``evaluate`` would run on these operands, as a dict (``dmlbits eval --explain``):
    its expression, inputs, constants, nodes (each its DirectML operator description) and
    output. Names are found as ``evaluate`` finds them. Nothing runs."""
    frame = sys._getframe(1)
    try:
        bindings = _bindings(expression, local_dict, frame)
    finally:
        del frame
    return _evaluate(expression, bindings, None, dtype,
                     _options(backend, feature_level, shift_overflow, out_dtype, threads, isa, adapter), False, 1,
                     0, True)


def ops(feature_level=None):
    """The support table (``dmlbits ops --json``): every operator, its DirectML names, arity and
    what it accepts at each feature level, or at ``feature_level`` only."""
    return _dmlbits.ops(_text(feature_level))


def devices():
    """What can run operations here (``dmlbits devices --json``): the backends, the D3D12
    adapters and the instruction sets of the CPU."""
    return _dmlbits.devices()


def read_tensor(path, /, *, dtype=None):
    """A tensor from an .npy or JSON file (as the CLI reads it: JSON with exact 64-bit integers,
    "0x..." bit patterns, "nan"), as a NumPy array in C order and native byte order. ``dtype``
    is for JSON that names none."""
    return _dmlbits.read_tensor(os.fspath(path), dtype)


def write_tensor(array, path, /, *, format=None, hex=False):
    """Writes ``array`` to ``path`` as .npy or JSON (by ``format`` or the extension), atomically:
    the file appears whole or not at all. ``hex=True`` writes JSON values as bit patterns."""
    _dmlbits.write_tensor(array, os.fspath(path), format or "", bool(hex))


@dataclasses.dataclass(frozen=True)
class CaseResult:
    """One case of a manifest: ``outcome`` is "pass", "fail" or "error"; ``detail`` says why in
    a line, ``report`` is the mismatch report (as --expect prints it)."""
    name: str
    outcome: str
    detail: str
    report: str
    seconds: float
    updated: bool
    golden: str

    @property
    def passed(self):
        return self.outcome == "pass"


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """What ``dmlbits check MANIFEST`` reports: the cases in manifest order."""
    manifest: str
    cases: list

    @property
    def passed(self):
        return sum(c.passed for c in self.cases)

    @property
    def failed(self):
        return len(self.cases) - self.passed

    def __bool__(self):
        return self.failed == 0

    def __iter__(self):
        return iter(self.cases)

    def __len__(self):
        return len(self.cases)

    def __getitem__(self, name):
        """The case named ``name``."""
        for c in self.cases:
            if c.name == name:
                return c
        raise KeyError(name)


def check(manifest, /, *, backend=None, isa=None, adapter=None, filter=None, update=False, jobs=0,
          max_listed=10):
    """Runs a golden-check manifest (``dmlbits check``) and returns its per-case results; a case
    that fails is a result, not an exception. A malformed manifest raises InvalidInputError."""
    o = _dmlbits.CheckOptions()
    o.backend, o.isa, o.adapter, o.filter = backend or "", isa or "", adapter or "", filter or ""
    o.update, o.jobs, o.max_listed = bool(update), int(jobs), int(max_listed)
    path = os.fspath(manifest)
    return CheckResult(path, [CaseResult(*c) for c in _dmlbits.check(path, o)])


for _f in (explain, evaluate, explain_expression, ops, devices, read_tensor, write_tensor, check, CaseResult, CheckResult):
    _f.__module__ = "dmlbits"
del _f
