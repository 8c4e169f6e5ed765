#!/usr/bin/python3
"""Expressions through the built binary against NumPy (issue #46): random expressions of the
operator table's operators, depth 1 to 4, over every data type the operators take, with names
bound to .npy files of the output's shape, one element, or a shape that broadcasts along an
axis, and literals in the forms the command line takes; each run by `dmlbits eval` on every
backend there is (cpu at each instruction set, on 1 and 2 threads; cpu-reference; d3d12 where an
adapter is listed), the result compared bit for bit with what the NumPy models of
tests/python/reference.py compute node by node. The expected values come from NumPy only.

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
POPCOUNT = [op for op in TABLE if op["default_output_type"] is not None]
SAME_TYPE = [op for op in TABLE if op["default_output_type"] is None]


class Gen:
    """A random expression of one output dtype: its text and a NumPy evaluation of it."""

    def __init__(self, rng, shapes):
        self.rng = rng
        self.shapes = shapes  # name -> (dtype, shape) chosen on first use
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
        dt = np.dtype(dtype)
        bits = dt.itemsize * 8
        value = self.rng.getrandbits(bits)
        if self.rng.random() < 0.3:
            value = self.rng.choice([0, 1, 3, bits - 1, bits, bits + 1, 31, 32, 33]) % (1 << bits)
        form = self.rng.choice(["hex", "bin", "dec"])
        if dt.kind == "f" or (dt.kind == "i" and value >= 1 << (bits - 1)) or form == "hex":
            text = hex(value)
        elif form == "bin" and bits <= 16:
            text = bin(value)
        else:
            text = str(value)
        return text, np.array(value, dtype=reference.UINT[dt.itemsize]).view(dt)

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


def main():
    rng = random.Random(SEED)
    runs = failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(CASES):
            out_shape = rng.choice([(0,), (1,), (63,), (4097,), (3, 5), (70001,)])
            shapes = [out_shape, out_shape, ()]
            if len(out_shape) == 2:
                shapes.append((out_shape[0], 1))
            dtype = rng.choice(list(NUMPY.values()))
            g = Gen(rng, shapes)
            text, evaluate = g.expr(dtype, rng.randint(1, 4), top=True)
            env, args = {}, []
            for n, (d, shape) in g.names.items():
                env[n] = data(d, shape, hash((SEED, case, n)) & 0xFFFFFFFF)
                path = os.path.join(tmp, "%d-%s.npy" % (case, n))
                np.save(path, env[n])
                args.append("%s=%s" % (n, path))
            if not g.names:  # an expression of literals alone: give it a dtype
                args += ["--dtype", dtype]
            try:
                want = np.asarray(evaluate(env))
            except Exception as e:  # the model cannot broadcast what DirectML refuses too
                print("case %d: %s: NumPy: %s" % (case, text, e))
                continue
            for backend, extra in backends():
                out = os.path.join(tmp, "%d-out.npy" % case)
                p = run("eval", text, *args, "--backend", backend, *extra, "-o", out)
                runs += 1
                if p.returncode != 0:
                    failures += 1
                    print("FAIL case %d %s %s: %s: exit %d: %s" % (case, backend, extra, text, p.returncode,
                                                                  p.stderr.decode(errors="replace")))
                    continue
                got = np.load(out)
                if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
                    failures += 1
                    print("FAIL case %d %s %s: %s: got %s %s, want %s %s" % (case, backend, extra, text, got.dtype,
                                                                            got.shape, want.dtype, want.shape))
    print("expression_test: %d runs, %d failed" % (runs, failures))
    return 1 if failures or runs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
