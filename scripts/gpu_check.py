#!/usr/bin/env python3
"""The GPU check (#36 item 5), run by the `run` script of a folder scripts/gpu-check packed: the
dmlbits binary on the machine's D3D12 adapter (vkd3d over its Vulkan driver), with no network.

  1. `dmlbits devices` and `devices --json`
  2. the golden manifest on d3d12 (`check data/golden/manifest.json --backend d3d12`)
  3. CASES random differential cases on d3d12 (operator, dtype, shape, broadcast, output type,
     shift mode), each a dmlbits process whose exit status must be 0 and whose output must equal
     NumPy's model (tests/numpy/differential_test.py's MODELS, packed beside this file)
  4. for each of SIZES (MiB of one uint32 input): `and`, `shl` (counts 0-39, past the width) and
     `popcount` on d3d12, chunked by the backend's 256 MiB buffers, against NumPy
  5. the timing table (OUT/timing.md, its d3d12 figures in OUT/timing.json): d3d12 execute
     (median; mean) and kernel (GPU timestamps), upload and readback per measured run, the
     warm-ups left out (measured_per_run), and their rates (bytes in over upload, bytes out over
     readback), a streamed file-to-file run (its pieces through the heaps: the wall time of the
     backend's streamed phase), the CPU backend on its default threads and on every core,
     PyTorch CUDA where it imports
  Any dmlbits process that dies of a signal is a crash: it is run again under gdb (or cuda-gdb),
  whose backtrace goes to OUT/crashes/, and the check exits 2. Other failures exit 1.

Options: --cases N (200), --sizes-mib "256 1024", --repeat N (10), --warmup N (2), --seed N,
--out DIR (./gpu-check-results), --skip-timing. On lavapipe (no GPU): --sizes-mib "1 3".
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DMLBITS = os.path.join(HERE, "bin", "dmlbits")
np = None    # NumPy, and
diff = None  # differential_test: the operators' NumPy models, one source of truth (import_numpy)


def import_numpy():
    """Imports NumPy and the models once the arguments are read (--help needs neither); where
    NumPy is missing, says what the check needs and exits 2."""
    global np, diff
    try:
        import numpy
    except ImportError as e:
        print("gpu_check: needs python3 with NumPy, which %s lacks (%s): install NumPy there, or run with "
              "PYTHON=... naming a python3 that has it" % (sys.executable, str(e).splitlines()[0] if str(e) else
                                                           type(e).__name__), file=sys.stderr)
        sys.exit(2)
    np = numpy
    os.environ["DMLBITS"] = DMLBITS  # read by dmlbits_testlib when differential_test is imported
    sys.path.insert(0, os.path.join(HERE, "py"))
    import differential_test
    diff = differential_test


class Runner:
    """Runs dmlbits, records failures and crashes; a crash is run again under a debugger."""

    def __init__(self, out):
        self.out = out
        self.failures = []
        self.crashes = []
        self.processes = 0
        self.debugger = shutil.which("gdb") or shutil.which("cuda-gdb")
        os.makedirs(os.path.join(out, "crashes"), exist_ok=True)

    def run(self, args, what, expect=0, timeout=900):
        self.processes += 1
        r = subprocess.run([DMLBITS] + list(args), capture_output=True, timeout=timeout)
        if r.returncode < 0 or r.returncode >= 128:
            self.crash(args, what, r)
        elif expect is not None and r.returncode != expect:
            self.fail("%s: exit %d, expected %d: %s" % (what, r.returncode, expect, r.stderr.decode(errors="replace")[-400:]))
        return r

    def fail(self, message):
        self.failures.append(message)
        print("FAIL " + message, flush=True)

    def crash(self, args, what, r):
        n = len(self.crashes) + 1
        path = os.path.join(self.out, "crashes", "crash-%d.txt" % n)
        status = "signal %d" % -r.returncode if r.returncode < 0 else "status %d" % r.returncode
        text = ["%s: dmlbits %s" % (what, " ".join(args)), status, "stderr:", r.stderr.decode(errors="replace")[-4000:]]
        if self.debugger:
            cmd = [self.debugger, "-q", "-batch", "-ex", "run", "-ex", "thread apply all bt", "--args", DMLBITS] + list(args)
            try:
                g = subprocess.run(cmd, capture_output=True, timeout=900)
                text += ["backtrace (%s):" % os.path.basename(self.debugger), g.stdout.decode(errors="replace")[-20000:],
                         g.stderr.decode(errors="replace")[-4000:]]
            except subprocess.TimeoutExpired:
                text.append("the debugger's run timed out")
        else:
            text.append("no gdb or cuda-gdb here: no backtrace")
        with open(path, "w") as f:
            f.write("\n".join(text) + "\n")
        self.crashes.append(path)
        print("CRASH %s: %s (%s)" % (what, status, path), flush=True)


def section(title):
    print("\n== " + title, flush=True)


def devices(runner, out):
    section("devices")
    r = runner.run(["devices"], "devices")
    print(r.stdout.decode(errors="replace"), end="")
    r = runner.run(["devices", "--json"], "devices --json")
    try:
        doc = json.loads(r.stdout)  # also from a process that crashed after printing it
    except ValueError:
        doc = {}
    with open(os.path.join(out, "devices.json"), "w") as f:
        json.dump(doc, f, indent=2)
    if not doc.get("d3d12", {}).get("available"):
        runner.fail("the d3d12 backend is unavailable: %s" % doc.get("d3d12", {}).get("reason", "?"))
        return False
    return True


def golden(runner):
    section("golden manifest on d3d12")
    r = runner.run(["check", os.path.join(HERE, "data", "golden", "manifest.json"), "--backend", "d3d12"], "check golden")
    lines = r.stdout.decode(errors="replace").strip().splitlines()
    print(lines[-1] if lines else "(no output)")


def random_shapes(rng, binary):
    """A's and B's shapes (B None for a unary operator): rank 0-4, sizes 1-7, with B broadcast
    against A in some dimensions; a tenth are flat tensors of 1-70,000 elements (tails past every
    group and word size)."""
    if rng.random() < 0.1:
        n = int(rng.integers(1, 70000))
        return (n,), ((n,) if rng.random() < 0.7 else (1,)) if binary else None
    rank = int(rng.integers(0, 5))
    a = tuple(int(rng.integers(1, 8)) for _ in range(rank))
    if not binary:
        return a, None
    b = tuple(1 if rng.random() < 0.3 else d for d in a)
    b = b[int(rng.integers(0, rank + 1)):] if rank else b
    if rng.random() < 0.5:
        a, b = b, a  # the broadcast on either side
    return a, b


def differential(runner, cases, seed, work):
    section("%d differential cases on d3d12 (seed %d)" % (cases, seed))
    names = sorted(n for n, o in diff.OPS.items() if o.gpu)
    rng = np.random.default_rng(seed)
    passed = 0
    for i in range(cases):
        name = names[int(rng.integers(0, len(names)))]
        op = diff.OPS[name]
        dtype = sorted(op.dtypes)[int(rng.integers(0, len(op.dtypes)))]
        sa, sb = random_shapes(rng, op.arity == 2)
        a = diff.logical_array(dtype, sa, "a", False, seed + i)
        b = None if sb is None else diff.logical_array(dtype, sb, "count" if op.shift else "b", False, seed + i)
        np.save(os.path.join(work, "a.npy"), a)
        args = [op.verb, os.path.join(work, "a.npy")]
        if b is not None:
            np.save(os.path.join(work, "b.npy"), b)
            args.append(os.path.join(work, "b.npy"))
        out = os.path.join(work, "out.npy")
        args += ["-o", out, "--backend", "d3d12"] + op.args
        what = "case %d: %s %s a%s b%s" % (i, name, dtype, sa, sb)
        if os.path.exists(out):
            os.remove(out)
        r = runner.run(args, what)
        if r.returncode != 0:
            continue
        why = diff.compare_arrays(np.load(out), diff.expected_result(name, a, b))
        if why:
            runner.fail("%s: %s" % (what, why))
        else:
            passed += 1
    print("%d of %d cases passed" % (passed, cases))


def large(runner, sizes, work):
    """and, shl (counts 0-39) and popcount of uint32 inputs of each size, against NumPy."""
    for mib in sizes:
        section("%d MiB on d3d12 against NumPy" % mib)
        n = (mib << 20) // 4
        rng = np.random.default_rng(mib)
        a = rng.integers(0, 2**32, size=n, dtype=np.uint32)
        b = rng.integers(0, 2**32, size=n, dtype=np.uint32)
        c = rng.integers(0, 40, size=n, dtype=np.uint32)
        pa, pb, pc, po = (os.path.join(work, x) for x in ("A.npy", "B.npy", "C.npy", "O.npy"))
        np.save(pa, a), np.save(pb, b), np.save(pc, c)
        for name, args, want in (
                ("and", ["and", pa, pb], lambda: a & b),
                ("shl", ["shl", pa, pc], lambda: diff.expected_result("shl", a, c)),
                ("popcount", ["popcount", pa], lambda: diff.expected_result("popcount", a, None))):
            if os.path.exists(po):
                os.remove(po)
            r = runner.run(args + ["-o", po, "--backend", "d3d12", "-q"], "%s %d MiB" % (name, mib))
            if r.returncode != 0:
                continue
            why = diff.compare_arrays(np.load(po, mmap_mode="r"), want())
            print("%s %d MiB: %s" % (name, mib, "equal to NumPy" if why is None else why), flush=True)
            if why:
                runner.fail("%s %d MiB: %s" % (name, mib, why))
        for p in (pa, pb, pc, po):
            if os.path.exists(p):
                os.remove(p)


def timed(runner, args, what, out):
    r = runner.run(args + ["-o", os.devnull, "-q", "--time-json", out], what)
    if r.returncode != 0:
        return None
    with open(out) as f:
        return json.load(f)


PER_RUN = ("upload", "dispatch", "readback")  # the d3d12 backend's phases that every run pays


def measured_per_run(g):
    """The d3d12 backend's upload, dispatch (kernel) and readback seconds per measured run of `g`
    (a --repeat R --warmup W timing JSON): execute.backend_phases, the measured runs' own phases
    (g["backend_phases"] sum every run of the backend, the warm-ups included, whose first dispatch
    may compile the shader: divided by the runs, a kernel read slower than the whole execution)."""
    own = g["execute"]["backend_phases"]
    return {k: own.get(k + "_s", 0) / g["execute_runs"] for k in PER_RUN}


def time_and_rate(seconds, nbytes):
    """'1.2 ms (3.4 GB/s)' for a phase of `seconds` that moves nbytes."""
    return "%.3g ms (%s)" % (seconds * 1e3, "%.3g GB/s" % (nbytes / seconds / 1e9) if seconds else "-")


def torch_times(op, n, repeat):
    """PyTorch CUDA on the same bits (int32 views): (kernel GB/s, pageable H2D + op + D2H ms), or None."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or op not in ("and", "not"):
        return None
    a = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32)
    b = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32)
    fn = (lambda x, y: x & y) if op == "and" else (lambda x, y: ~x)
    da, db = a.cuda(), b.cuda()
    for _ in range(2):
        fn(da, db)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeat):
        fn(da, db)
    end.record()
    torch.cuda.synchronize()
    kernel_s = start.elapsed_time(end) / 1000 / repeat
    moved = n * 4 * (3 if op == "and" else 2)
    t = time.perf_counter()
    fn(a.cuda(), b.cuda() if op == "and" else None).cpu()
    whole_ms = (time.perf_counter() - t) * 1000
    return moved / kernel_s / 1e9, whole_ms


def timing(runner, sizes, repeat, warmup, work, out):
    section("timing (uint32; --repeat %d --warmup %d; GB/s count bytes read and written)" % (repeat, warmup))
    cores = os.cpu_count() or 1
    rows = ["| op, one input | d3d12 execute (median; mean) | d3d12 kernel per run (GPU timestamps) "
            "| d3d12 upload / readback per run | d3d12 streamed file to file | cpu backend, default threads "
            "| cpu backend, %d threads | torch CUDA kernel | torch pageable H2D + op + D2H |" % cores,
            "|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(rows), flush=True)
    table = []  # the d3d12 rows' figures, for timing.json
    for mib in sizes:
        n = (mib << 20) // 4
        rng = np.random.default_rng(7)
        pa, pb = os.path.join(work, "tA.npy"), os.path.join(work, "tB.npy")
        np.save(pa, rng.integers(0, 2**32, size=n, dtype=np.uint32))
        np.save(pb, rng.integers(0, 2**32, size=n, dtype=np.uint32))
        for op in ("and", "not", "popcount"):
            ins = [pa, pb] if op == "and" else [pa]
            base = [op] + ins + ["--repeat", str(repeat), "--warmup", str(warmup)]
            cells = []
            g = timed(runner, base + ["--backend", "d3d12"], "time %s %d MiB d3d12" % (op, mib), os.path.join(out, "t_%s_%d_d3d12.json" % (op, mib)))
            if g:
                med = g["execute"]["stats_s"]["median"]
                per_run = measured_per_run(g)
                in_bytes = n * 4 * len(ins)
                out_bytes = g["execute_bytes"] - in_bytes
                cells.append("%.2f ms (%.1f GB/s); %.2f ms" % (med * 1e3, g["execute_bytes"] / med / 1e9,
                                                             g["execute"]["stats_s"]["mean"] * 1e3))
                cells.append(time_and_rate(per_run["dispatch"], g["execute_bytes"]))
                cells.append("%s / %s" % (time_and_rate(per_run["upload"], in_bytes),
                                          time_and_rate(per_run["readback"], out_bytes)))
                table.append({"op": op, "mib": mib, "execute_mean_s": g["execute"]["stats_s"]["mean"],
                              "execute_median_s": med, "per_run_s": per_run})
            else:
                cells += ["-", "-", "-"]
            # Streamed: one run from the files to a file, through the heaps piece by piece.
            po = os.path.join(work, "tO.npy")
            r = runner.run([op] + ins + ["-o", po, "-q", "--backend", "d3d12", "--time-json",
                                         os.path.join(out, "s_%s_%d_d3d12.json" % (op, mib))],
                           "stream %s %d MiB d3d12" % (op, mib))
            streamed = None
            if r.returncode == 0:
                with open(os.path.join(out, "s_%s_%d_d3d12.json" % (op, mib))) as f:
                    s = json.load(f)
                streamed = s["backend_phases"].get("streamed_s")
                if not streamed:
                    runner.fail("stream %s %d MiB d3d12: the run did not stream through the heaps" % (op, mib))
                else:
                    cells.append("%.2f ms (%.1f GB/s)" % (streamed * 1e3, s["execute_bytes"] / streamed / 1e9))
            if not streamed:
                cells.append("-")
            if os.path.exists(po):
                os.remove(po)
            for threads in (None, cores):
                extra = ["--threads", str(threads)] if threads else []
                c = timed(runner, base + ["--backend", "cpu"] + extra, "time %s %d MiB cpu" % (op, mib),
                          os.path.join(out, "t_%s_%d_cpu%s.json" % (op, mib, threads or "")))
                if c:
                    med = c["execute"]["stats_s"]["median"]
                    cells.append("%.2f ms (%.1f GB/s)" % (med * 1e3, c["execute_bytes"] / med / 1e9))
                else:
                    cells.append("-")
            t = torch_times(op, n, repeat)
            cells += ["%.3g GB/s" % t[0], "%.1f ms" % t[1]] if t else ["-", "-"]
            rows.append("| %s %d MiB | %s |" % (op, mib, " | ".join(cells)))
            print(rows[-1], flush=True)
        os.remove(pa), os.remove(pb)
    notes = ["The d3d12 kernel, upload and readback: the mean of the measured runs, without the warm-ups."]
    rows += [""] + notes
    print("\n".join(notes), flush=True)
    with open(os.path.join(out, "timing.md"), "w") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(out, "timing.json"), "w") as f:
        json.dump(table, f, indent=2)
    print("(the table: %s)" % os.path.join(out, "timing.md"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--sizes-mib", default="256 1024")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "gpu-check-results"))
    ap.add_argument("--skip-timing", action="store_true")
    o = ap.parse_args()
    import_numpy()
    sizes = [int(s) for s in o.sizes_mib.split()]
    out = os.path.abspath(o.out)
    work = os.path.join(out, "work")
    os.makedirs(work, exist_ok=True)
    runner = Runner(out)
    r = subprocess.run([DMLBITS, "--version"], capture_output=True, text=True)
    print(r.stdout, end="")
    problems = diff.load_ops()
    for p in problems:
        runner.fail(p)
    if not problems and devices(runner, out):
        golden(runner)
        differential(runner, o.cases, o.seed, work)
        large(runner, sizes, work)
        if not o.skip_timing:
            timing(runner, sizes, o.repeat, o.warmup, work, out)
    shutil.rmtree(work, ignore_errors=True)
    section("summary")
    print("%d dmlbits processes, %d crashed, %d failures" % (runner.processes, len(runner.crashes), len(runner.failures)))
    for c in runner.crashes:
        print("crash: " + c)
    for f in runner.failures[:50]:
        print("failure: " + f)
    return 2 if runner.crashes else 1 if runner.failures else 0


if __name__ == "__main__":
    sys.exit(main())
