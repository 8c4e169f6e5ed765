#!/usr/bin/python3
"""The d3d12 backend before and after a change, interleaved (issue #36 items 3 and 4).

    scripts/bench_d3d12.py BEFORE_DMLBITS AFTER_DMLBITS WORKDIR SITTINGS [MIB[,MIB...]]

Writes random operands into WORKDIR once (uint32 a and b; uint8 and uint64 a up to 64 MiB), then
in each sitting runs every case with each binary in turn: `dmlbits OP A [B] -o out.npy --backend
d3d12 -q --time-json t.json`, in memory with `--repeat 3 --warmup 1` ("mem") or streamed
("stream"). Prints, per case and binary, the medians over the sittings of the execute time, of
the whole run but the backend's creation ("run": reading, computing and writing, which overlap
in a streamed run), and of the d3d12 phases per run (the backend's phases summed over all runs,
divided by them), with upload's rate over the input bytes and readback's over the output bytes.
GB/s count the bytes read and written. Run it where no other work shares the machine, or read
ratios.
"""
import json
import os
import statistics
import subprocess
import sys

import numpy as np


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    before, after, work, sittings = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sizes = [int(x) for x in sys.argv[5].split(",")] if len(sys.argv) > 5 else [64]
    before, after = os.path.abspath(before), os.path.abspath(after)
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    rng = np.random.default_rng(3)
    for mib in sizes:
        for dt, name in ((np.uint32, "u32"), (np.uint8, "u8"), (np.uint64, "u64")):
            if mib > 64 and name != "u32":
                continue
            for role in "ab":
                f = f"{role}{mib}{name}.npy"
                if not os.path.exists(f):
                    n = (mib << 20) // np.dtype(dt).itemsize
                    np.save(f, rng.integers(0, np.iinfo(dt).max, size=n, dtype=dt, endpoint=True))
    cases = []
    for mib in sizes:
        ab = [f"a{mib}u32.npy", f"b{mib}u32.npy"]
        cases += [("and", ab, mib, "mem"), ("and", ab, mib, "stream")]
        if mib <= 64:
            cases += [("not", [f"a{mib}u8.npy"], mib, "mem"), ("popcount", [f"a{mib}u64.npy"], mib, "mem"),
                      ("shl", ab, mib, "mem")]
    results = {}
    for s in range(sittings):
        for op, inputs, mib, route in cases:
            for label, binary in (("before", before), ("after", after)):
                args = [binary, op, *inputs, "-o", "out.npy", "--backend", "d3d12", "-q", "--time-json", "t.json"]
                if route == "mem":
                    args += ["--repeat", "3", "--warmup", "1"]
                subprocess.run(args, check=True)
                t = json.load(open("t.json"))
                # The measured runs' own phases where the binary reports them (execute.backend_phases),
                # else every run's, warm-ups included (a first dispatch may compile the shader).
                phases = t["execute"].get("backend_phases") or t["backend_phases"]
                runs = t["execute_runs"] + (0 if t["execute"].get("backend_phases") else t["execute"]["warmup"])
                row = {k: phases[k + "_s"] / runs for k in ("upload", "dispatch", "readback", "submit")}
                row["execute"] = t["execute"]["stats_s"]["median"]
                row["run"] = t["total_s"] - t["phases"]["backend_s"]
                row["bytes"] = t["execute_bytes"]
                row["in_bytes"] = sum(os.path.getsize(f) - 128 for f in inputs)  # .npy headers of 128 bytes
                results.setdefault((op, mib, route, label), []).append(row)
        print("sitting", s, "done", file=sys.stderr)
    for (op, mib, route, label), rows in sorted(results.items()):
        m = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        gbps = lambda b, s: b / max(s, 1e-9) / 1e9  # noqa: E731
        out_bytes = m["bytes"] - m["in_bytes"]
        print(f"{op:9s} {mib:4d} MiB {route:6s} {label:6s} execute {m['execute'] * 1e3:8.1f} ms "
              f"({gbps(m['bytes'], m['execute']):5.2f} GB/s)  run {m['run'] * 1e3:8.1f} ms "
              f"({gbps(m['bytes'], m['run']):5.2f} GB/s)  upload {m['upload'] * 1e3:7.1f} ms "
              f"({gbps(m['in_bytes'], m['upload']):5.2f} GB/s)  "
              f"dispatch {m['dispatch'] * 1e3:7.1f} ms ({gbps(m['bytes'], m['dispatch']):5.2f} GB/s)  "
              f"readback {m['readback'] * 1e3:7.1f} ms ({gbps(out_bytes, m['readback']):5.2f} GB/s)  "
              f"submit {m['submit'] * 1e3:6.1f} ms  n={len(rows)}")


if __name__ == "__main__":
    main()
