#!/usr/bin/python3
"""Expressions through the built binary against NumPy (issue #46): random expressions of the
operator table's operators, depth 1 to 4, over every data type the operators take (each case's
output type in turn), with names bound to operands of the output's shape, one element, or a
shape that broadcasts along an axis (a column, a row), and literals in the forms the command
line takes (decimal, negative, hex, binary, lists, floats and nan/inf for float types, and names
bound to literals); each operand in one of the layouts an input may have (a C-order .npy, a
Fortran-order one, a big-endian one, a JSON file of bit patterns, standard input); each run by
`dmlbits eval` on every backend there is (cpu at each instruction set, on 1 and 2 threads;
cpu-reference; d3d12 where an adapter is listed), the result compared bit for bit with what the
NumPy models of tests/python/reference.py compute node by node, and every backend's with
cpu-reference's, the second oracle (also where NumPy cannot model the case). The expected
values come from NumPy and cpu-reference only; every layout and data type must have been run.

Usage: expression_test.py [DMLBITS [SEED]] (DMLBITS defaults to $DMLBITS, as CTest sets it)"""

import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import reference  # noqa: E402  (the NumPy models of the operators)

BINARY = sys.argv[1] if len(sys.argv) > 1 else os.environ["DMLBITS"]
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else int(os.environ.get("DMLBITS_EXPRESSION_SEED", "46"))
CASES = int(os.environ.get("DMLBITS_EXPRESSION_CASES", "48"))


def run(*args, **kw):
    return subprocess.run([BINARY, *map(str, args)], capture_output=True, timeout=300, **kw)


OPS = json.loads(run("ops", "--json").stdout)
NUMPY = {d["name"]: d["numpy"] for d in OPS["dtypes"]}
TABLE = OPS["ops"]
for op in TABLE:
    assert op["verb"] in reference.MODELS, "operator '%s' has no NumPy model in reference.py" % op["verb"]
DEVICES = json.loads(run("devices", "--json").stdout)


def backends():
    """(name, extra options) of every backend to run: cpu at each ISA on 1 and 2 threads."""
    out = [("cpu-reference", [])]
    for b in DEVICES["backends"]:
        if b["name"] == "cpu":
            for isa in b.get("isas", []) or [None]:
                for threads in (1, 2):
                    extra = ["--threads", threads] + (["--isa", isa] if isa else [])
                    out.append(("cpu", extra))
        elif b["name"] == "d3d12":
            out.append(("d3d12", []))
    return out


def takes(op, dtype):
    return NUMPY_NAME_OF[dtype] in op["tiers"][-1]["input_types"]


NUMPY_NAME_OF = {v: k for k, v in NUMPY.items()}
FLOATS = ["1.5", "-2.0", "0.5", "-0.0", "0.25"]  # exact in every float type
LAYOUTS = ["npy", "fortran", "big-endian", "json", "stdin", "literal"]
LITERALS = ["hex", "bin", "dec", "negative", "list", "float"]
SEEN_LITERALS = set()
POPCOUNT = [op for op in TABLE if op["default_output_type"] is not None]
SAME_TYPE = [op for op in TABLE if op["default_output_type"] is None]


class Gen:
    """A random expression of one output dtype: its text and a NumPy evaluation of it."""

    def __init__(self, rng, shapes, row):
        self.rng = rng
        self.shapes = shapes  # name -> (dtype, shape) chosen on first use
        self.row = row  # the length of a list literal, or 0 for none
        self.names = {}

    def name(self, dtype):
        # Names are per dtype: a name used twice is the same operand (a shared subexpression).
        existing = [n for n, (d, _) in self.names.items() if d == dtype]
        if existing and self.rng.random() < 0.4:
            return self.rng.choice(existing)
        n = "v%d" % len(self.names)
        self.names[n] = (dtype, self.rng.choice(self.shapes))
        return n

    def literal(self, dtype):
        text, value, form = self._literal(dtype)
        SEEN_LITERALS.add(form)
        return text, value

    def _literal(self, dtype):
        dt = np.dtype(dtype)
        bits = dt.itemsize * 8
        forms = ["hex"] + (["list"] if self.row else [])
        forms += ["float"] if dt.kind == "f" else ["dec"] + (["bin"] if bits <= 16 else [])
        forms += ["negative"] if dt.kind == "i" else []
        # Half the time the form run least so far, so that every form is run in a few cases.
        if self.rng.random() < 0.5:
            form = min(forms, key=lambda x: (x in SEEN_LITERALS, self.rng.random()))
        else:
            form = self.rng.choice(forms)
        if form == "list":
            # A list of the output's last dimension: decimal values of the type (floats for
            # float types), read with stride 0 along the first dimension.
            if dt.kind == "f":
                values = [self.rng.choice(FLOATS) for _ in range(self.row)]
            else:
                info = np.iinfo(dt)
                values = [self.rng.randint(int(info.min), int(info.max)) for _ in range(self.row)]
            return "[%s]" % ", ".join(map(str, values)), np.array(
                [float(v) if dt.kind == "f" else v for v in values], dtype=dt), form
        if form == "float":
            # A float literal is that value of the type (nan: NumPy's conversion of float64's nan).
            text = self.rng.choice(FLOATS + ["inf", "-inf", "nan", "1e3"])
            return text, np.array(np.float64(text), dtype=dt), form
        if form == "negative":
            value = -self.rng.randint(1, 1 << (bits - 1))
            return str(value), np.array(value, dtype=dt), form
        # hex: any bit pattern; dec and bin: values without a signed type's sign bit.
        value = self.rng.getrandbits(bits if form == "hex" or dt.kind == "u" else bits - 1)
        if self.rng.random() < 0.3:
            value = self.rng.choice([0, 1, 3, bits - 1, bits, bits + 1, 31, 32, 33]) % (1 << (bits - 1))
        text = hex(value) if form == "hex" else bin(value) if form == "bin" else str(value)
        return text, np.array(value, dtype=reference.UINT[dt.itemsize]).view(dt), form

    def expr(self, dtype, depth, top=False):
        """(text, evaluate(env) -> array of dtype); at the top an operator, never a leaf."""
        if not top and (depth == 0 or self.rng.random() < 0.2):
            if self.rng.random() < 0.75:
                n = self.name(dtype)
                return n, lambda env, n=n: env[n]
            text, value = self.literal(dtype)
            return text, lambda env, v=value: v
        choices = [op for op in SAME_TYPE if takes(op, dtype)]
        if dtype in ("uint8", "uint32"):
            choices += POPCOUNT
        op = self.rng.choice(choices)
        verb = op["verb"]
        if op in POPCOUNT:
            source = self.rng.choice([d for d in NUMPY.values() if takes(op, d)])
            # Its operand must hold a name: a count of literals alone has no input dtype.
            a, fa = self.expr(source, depth - 1)
            while not any(n in a.replace("(", " ").replace(")", " ").replace(",", " ").split() for n in self.names):
                a, fa = self.expr(source, depth - 1)
            text = "popcount(%s, out_dtype=%s)" % (a, dtype) if self.rng.random() < 0.7 else "%s(%s, out_dtype=%s)" % (
                verb, a, dtype)
            return text, lambda env: reference.expected(verb, fa(env), out_dtype=dtype)
        a, fa = self.expr(dtype, depth - 1)
        if op["arity"] == 1:
            text = "~(%s)" % a if op.get("symbol") == "~" and self.rng.random() < 0.6 else "%s(%s)" % (verb, a)
            return text, lambda env: reference.expected(verb, fa(env))
        b, fb = self.expr(dtype, depth - 1)
        symbol = op.get("symbol")
        text = "(%s %s %s)" % (a, symbol, b) if symbol and self.rng.random() < 0.7 else "%s(%s, %s)" % (verb, a, b)
        return text, lambda env: reference.expected(verb, fa(env), np.asarray(fb(env)))


def data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    return rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype).reshape(shape)


def bind(name, value, layout, tmp, case):
    """The NAME=INPUT argument binding `name` to `value` in `layout`, and the bytes for standard
    input (or None)."""
    path = os.path.join(tmp, "%d-%s" % (case, name))
    if layout == "literal":  # a 0-d operand as a literal: its bit pattern
        return "%s=%s" % (name, hex(int(value.view(reference.UINT[value.itemsize])))), None
    if layout == "json":  # exact for every type: each element's bits as a "0x..." string
        flat = value.reshape(-1).view(reference.UINT[value.itemsize])
        with open(path + ".json", "w") as f:
            json.dump({"dtype": value.dtype.name, "shape": list(value.shape), "data": [hex(int(x)) for x in flat]}, f)
        return "%s=%s.json" % (name, path), None
    stored = value
    if layout == "fortran":
        stored = np.asfortranarray(value)
    elif layout == "big-endian":
        stored = value.astype(value.dtype.newbyteorder(">"))
    np.save(path + ".npy", stored)
    if layout == "stdin":
        with open(path + ".npy", "rb") as f:
            return "%s=-" % name, f.read()
    return "%s=%s.npy" % (name, path), None


def layout_for(rng, value, stdin_free, literal_ok, seen=None):
    """A layout `value` can show: Fortran order only where it differs from C order (2-D, both
    dimensions > 1), big-endian only for types wider than a byte, stdin for one operand a run."""
    choices = ["npy", "json"]
    if value.ndim == 2 and min(value.shape) > 1:
        choices.append("fortran")
    if value.itemsize > 1:
        choices.append("big-endian")
    if stdin_free:
        choices.append("stdin")
    if literal_ok and value.ndim == 0:
        choices.append("literal")
    if seen is not None:  # the layout run least so far, so that every one is run in a few cases
        return min(choices, key=lambda x: (seen.get(x, 0), rng.random()))
    return rng.choice(choices)


def main():
    rng = random.Random(SEED)
    runs = failures = 0
    dtypes = sorted(set(NUMPY.values()))
    seen_layouts, seen_dtypes, seen_backends = {}, set(), set()
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(CASES):
            out_shape = rng.choice([(0,), (1,), (63,), (4097,), (3, 5), (70001,)])
            shapes = [out_shape, out_shape, ()]
            if len(out_shape) == 2:
                shapes += [(out_shape[0], 1), (out_shape[1],), (1, out_shape[1])]
            row = out_shape[-1] if 0 < out_shape[-1] <= 63 else 0
            dtype = dtypes[case % len(dtypes)]  # every output type in turn
            g = Gen(rng, shapes, row)
            text, evaluate = g.expr(dtype, rng.randint(1, 4), top=True)
            # A name bound to a literal has no type of its own: only where popcount, which takes
            # its operand's type from a name, is absent (one type throughout, given by --dtype).
            literal_ok = "popcount" not in text
            env, args, stdin = {}, [], None
            for i, (n, (d, shape)) in enumerate(g.names.items()):
                env[n] = data(d, shape, hash((SEED, case, n)) & 0xFFFFFFFF)
                layout = layout_for(rng, env[n], stdin is None, literal_ok, seen_layouts if i == 0 else None)
                arg, feed = bind(n, env[n], layout, tmp, case)
                args.append(arg)
                stdin = feed if feed is not None else stdin
                seen_layouts[layout] = seen_layouts.get(layout, 0) + 1
            if not g.names or literal_ok:  # literals alone or names bound to them: give the dtype
                args += ["--dtype", dtype]
            seen_dtypes.add(dtype)
            try:
                want = np.asarray(evaluate(env))
            except Exception as e:  # the model cannot broadcast what DirectML refuses too
                print("case %d: %s: NumPy: %s (cpu-reference is the oracle)" % (case, text, e))
                want = None
            oracle = None  # cpu-reference's result, which every other backend must equal
            for backend, extra in backends():
                out = os.path.join(tmp, "%d-out.npy" % case)
                p = run("eval", text, *args, "--backend", backend, *extra, "-o", out, input=stdin)
                runs += 1
                seen_backends.add(backend)
                if p.returncode != 0:
                    if want is None and oracle is None:  # refused by every backend alike
                        continue
                    failures += 1
                    print("FAIL case %d %s %s: %s: exit %d: %s" % (case, backend, extra, text, p.returncode,
                                                                  p.stderr.decode(errors="replace")))
                    continue
                got = np.load(out)
                if backend == "cpu-reference":
                    oracle = got
                elif want is None and oracle is None:
                    failures += 1
                    print("FAIL case %d %s %s: %s: ran where cpu-reference refused" % (case, backend, extra, text))
                for name, w in (("NumPy", want), ("cpu-reference", oracle)):
                    if w is None:
                        continue
                    if got.dtype != w.dtype or got.shape != w.shape or got.tobytes() != w.tobytes():
                        failures += 1
                        print("FAIL case %d %s %s: %s: got %s %s, %s gives %s %s" % (
                            case, backend, extra, text, got.dtype, got.shape, name, w.dtype, w.shape))
    missing = [x for x in LAYOUTS if x not in seen_layouts] + [d for d in dtypes if d not in seen_dtypes] + [
        x + " literals" for x in LITERALS if x not in SEEN_LITERALS]
    if missing:
        failures += 1
        print("FAIL: never run: %s (raise DMLBITS_EXPRESSION_CASES)" % ", ".join(missing))
    print("expression_test: %d runs, %d failed; backends %s; layouts %s; literals %s" % (
        runs, failures, ", ".join(sorted(seen_backends)), ", ".join(sorted(seen_layouts)),
        ", ".join(sorted(SEEN_LITERALS))))
    return 1 if failures or runs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
