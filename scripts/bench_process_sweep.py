"""Whole-process size sweep (scripts/bench-process --sweep): dmlbits `and`, `not` and `popcount` on
1 and 2 threads against `cp` of input A and the NumPy one-liners, uint32 operands from 1 KiB to
1 GiB, page cache warm, every output replacing an existing file.

At each size the commands take turns (one run of each per round, in an order shuffled afresh each
round, seeded, so every sweep runs the same orders; NumPy, 50-1000x slower at small sizes, only in
the first --numpy-rounds rounds),
so a busy stretch of a shared machine hits them alike; each is timed from spawn to exit (os.wait4
gives its CPU time; peak RSS comes from one warm-up run under /usr/bin/time). Outputs of 1 MiB or more are synced to disk before each run
(untimed), so that no run pays for the write-back of the previous one's output. Each command has
an output file of its own, which each of its runs replaces: replacing a file frees the old one's
page cache in the rename, and with one output shared by the dmlbits commands each run freed the
previous command's output, `and t1` always that of `popcount t2`, a quarter the size (at 1 GiB
that favoured `and t1` by ~0.3x cp). The outputs of a size are removed when it is done. The order
was once only rotated, so each command always ran after the same neighbour: `and t1`, after the
last floor command, ran the first dmlbits process after another program and took 1.08-1.18x cp at
1-16 KiB where `and t2`, the same work there, took 0.93-1.06x (a quiet sweep, load 0.4-0.5), while
a direct interleaved check of the same binary gave 1.03x; a shuffled order spreads that cost
over every command. A
command's ratio to cp is the median of its ratios to the cp run of the same round.

Every measured executable (dmlbits, the --baseline build and cp itself, /usr/bin/cp) is copied
afresh into WORKDIR/bin at each size, all the same way in the same moment, and run from there:
the page-cache state of an executable file changes a process's start-up by up to 0.5 ms on the
reference VM (the same binary: 5.93 ms from a fresh copy against 6.44 ms from an old file), which
is 10% of a small run. NumPy runs /usr/bin/python3 as installed (it is 30x cp, not a target).

    bench_process_sweep.py DMLBITS WORKDIR OUT_PREFIX [--baseline OTHER_DMLBITS]
                           [--sizes 10,12,...] [--rounds-scale X] [--no-numpy] [--inmemory] [--floor]

--sizes are log2 of the operand size in bytes (default: every power of 4 from 1 KiB to 1 GiB,
and 512 KiB, 2 MiB, 8 MiB where the cost per byte used to bump). With --baseline, the same
dmlbits commands of another build run in the same rounds ("before"). Writes OUT_PREFIX.json (every
time), OUT_PREFIX.md (the table) and OUT_PREFIX.png (log-log time per run against size, and each
command's ratio to cp).

--floor adds the floor (scripts/bench_floor.c, built with cc into WORKDIR/bin): the least a whole
`and`/`not` must do in plain C (pread, compute, write into an unnamed file, rename over the
output), on one thread ("floor and t1"), as dmlbits' two-thread pipeline ("floor and t2") and as
two threads each doing half the file ("floor and halves"); "floor and t1x" is t1 committing as
dmlbits does (RENAME_EXCHANGE + unlink instead of rename, which on ext4 starts the new file's
write-back inside the call).

--inmemory sweeps the in-memory paths instead: `--repeat 3` (and, not, popcount), `and --expect`
against NumPy's result and `and -o out.json` (to 16 MiB), with cp for scale; OUT_PREFIX.md gives
wall time per operand byte and each command's phases per byte (--time-json: read, allocate, the
first and the last execution, write), where a size whose cost per byte jumps shows.
"""
import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

NUMPY = {
    "and": 'import numpy as np; np.save("{out}", np.load("{a}") & np.load("{b}"))',
    "not": 'import numpy as np; np.save("{out}", ~np.load("{a}"))',
}
CP = "/usr/bin/cp"
DEFAULT_SIZES = [10, 12, 14, 16, 18, 19, 20, 21, 22, 23, 24, 26, 28, 30]


def rounds_for(size, scale):
    if size <= 1 << 20:
        r = 31
    elif size <= 1 << 24:
        r = 21
    elif size <= 1 << 26:
        r = 11
    elif size <= 1 << 28:
        r = 7
    else:
        r = 5
    return max(3, int(r * scale))


def human(size):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift:
            v = size / (1 << shift)
            return f"{v:g} {unit}"
    return f"{size} B"


def make_inputs(workdir, k):
    a, b = os.path.join(workdir, f"a{k}.npy"), os.path.join(workdir, f"b{k}.npy")
    if not (os.path.exists(a) and os.path.exists(b)):
        rng = np.random.default_rng(k)
        n = (1 << k) // 4
        for path in (a, b):
            arr = np.lib.format.open_memmap(path + ".tmp", mode="w+", dtype=np.uint32, shape=(n,))
            step = 1 << 24
            for i in range(0, n, step):
                m = min(step, n - i)
                arr[i:i + m] = rng.integers(0, 2**32, size=m, dtype=np.uint32)
            del arr
            os.replace(path + ".tmp", path)
    return a, b


def fresh_copies(executables, workdir):
    """Copies of the executables, made now, the same way (see the header): path -> copy."""
    bindir = os.path.join(workdir, "bin")
    os.makedirs(bindir, exist_ok=True)
    copies = {}
    for i, exe in enumerate(executables):
        dst = os.path.join(bindir, f"{i}-{os.path.basename(exe)}")
        if os.path.exists(dst):
            os.remove(dst)  # a new inode: the old file's page-cache pages are not reused
        shutil.copyfile(exe, dst)
        os.chmod(dst, 0o755)
        copies[exe] = dst
    return copies


def build_floor(workdir):
    """scripts/bench_floor.c, compiled once into WORKDIR/bin."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench_floor.c")
    exe = os.path.join(workdir, "bin", "bench_floor.build")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    subprocess.run(["cc", "-O3", "-march=native", "-pthread", "-o", exe, src], check=True)
    return exe


def commands(dmlbits, baseline, a, b, workdir, with_numpy, floor=None):
    out = lambda tag: os.path.join(workdir, f"out_{tag}.npy")
    exe = fresh_copies([CP, dmlbits] + ([baseline] if baseline else []) + ([floor] if floor else []), workdir)
    cp, dmlbits, baseline, floor = exe[CP], exe[dmlbits], exe.get(baseline), exe.get(floor)
    cmds = [("cp", [cp, a, out("cp")])]
    if floor:
        for op, args in (("and", [a, b]), ("not", [a])):
            for name, mode in (("t1", "1"), ("t2", "2"), ("halves", "s"), ("t1x", "1x")):
                cmds.append((f"floor {op} {name}", [floor, mode, op, "512", *args, out(f"floor_{op}_{name}")]))
    builds = [("", dmlbits)] + ([("before ", baseline)] if baseline else [])
    for prefix, exe in builds:
        tag = "base" if prefix else "dml"
        for op, args in (("and", [a, b]), ("not", [a]), ("popcount", [a])):
            for t in (1, 2):
                cmds.append((f"{prefix}{op} t{t}", [exe, op, *args, "-o", out(f"{tag}_{op}_t{t}"), "--threads", str(t)]))
    if with_numpy:
        for op, code in NUMPY.items():
            cmds.append((f"numpy {op}", ["/usr/bin/python3", "-c", code.format(a=a, b=b, out=out(f"np_{op}"))]))
    return cmds


def inmemory_commands(dmlbits, baseline, a, b, size, workdir):
    """The in-memory paths: --repeat (forces them), --expect against NumPy's result, JSON output."""
    golden = os.path.join(workdir, "golden.npy")
    np.save(golden, np.load(a) & np.load(b))
    out = os.path.join(workdir, "out_mem.npy")
    exe = fresh_copies([CP, dmlbits] + ([baseline] if baseline else []), workdir)
    dmlbits, baseline = exe[dmlbits], exe.get(baseline)
    cmds = [("cp", [exe[CP], a, os.path.join(workdir, "out_cp.npy")], None)]
    for prefix, exe in [("", dmlbits)] + ([("before ", baseline)] if baseline else []):
        tj = lambda tag: os.path.join(workdir, f"time_{prefix.strip()}{tag}.json")
        for op, args in (("and", [a, b]), ("not", [a]), ("popcount", [a])):
            cmds.append((f"{prefix}{op} --repeat 3", [exe, op, *args, "-o", out, "--repeat", "3", "--time-json", tj(op)],
                         tj(op)))
        cmds.append((f"{prefix}and --expect", [exe, "and", a, b, "--expect", golden, "--time-json", tj("expect")],
                     tj("expect")))
        if size <= 16 << 20:  # a JSON result of 4M values is ~45 MB of text
            cmds.append((f"{prefix}and -o .json", [exe, "and", a, b, "-o", os.path.join(workdir, "out.json"),
                                                   "--time-json", tj("json")], tj("json")))
    return cmds


def sweep_inmemory(args):
    """Per size: wall ns per operand byte of each in-memory command, and its phases per byte
    (from --time-json: read, allocate, the first and the last execution, write)."""
    results = []
    for k in args.sizes:
        size = 1 << k
        a, b = make_inputs(args.workdir, k)
        cmds = inmemory_commands(args.dmlbits, args.baseline, a, b, size, args.workdir)
        sync = size >= 1 << 20
        for _, argv, _ in cmds:
            run_once(argv, sync)
        rounds = max(3, rounds_for(size, args.rounds_scale) // 2)
        row = {"log2_bytes": k, "bytes": size, "rounds": rounds, "load": [os.getloadavg()[0]], "commands": {}}
        data = {name: {"wall": [], "cpu": [], "phases": []} for name, _, _ in cmds}
        order = random.Random(k)
        for r in range(rounds):
            for name, argv, tj in order.sample(cmds, len(cmds)):
                t, c = run_once(argv, sync)
                data[name]["wall"].append(t)
                data[name]["cpu"].append(c)
                if tj:
                    js = json.load(open(tj))
                    ph = dict(js["phases"])
                    samples = js["execute"]["samples_s"]
                    ph["execute_first_s"], ph["execute_last_s"] = samples[0], samples[-1]
                    data[name]["phases"].append(ph)
        row["load"].append(os.getloadavg()[0])
        for name, d in data.items():
            entry = {"median_s": statistics.median(d["wall"]), "min_s": min(d["wall"]),
                     "cpu_median_s": statistics.median(d["cpu"])}
            if d["phases"]:
                entry["phases_median_s"] = {key: statistics.median(p.get(key, 0.0) for p in d["phases"])
                                            for key in d["phases"][0]}
            row["commands"][name] = entry
        results.append(row)
        print(f"{human(size):>8} ({rounds} rounds): " + "  ".join(
            f"{n} {v['median_s'] * 1e3:.2f}ms" for n, v in row["commands"].items()), flush=True)
        if size >= 1 << 28:
            for path in (a, b):
                os.remove(path)
    return results


def write_inmemory_table(results, path, meta):
    names = [n for n in results[0]["commands"]]
    with open(path, "w") as f:
        f.write(f"<!-- {meta} -->\n")
        f.write("Wall time per run, ns per byte of operand A (median over the rounds):\n\n")
        f.write("| size | " + " | ".join(f"`{n}`" for n in names) + " |\n")
        f.write("|---|" + "---|" * len(names) + "\n")
        for row in results:
            f.write(f"| {human(row['bytes'])} | " + " | ".join(
                f"{row['commands'][n]['median_s'] * 1e9 / row['bytes']:.3g}" if n in row["commands"] else "-"
                for n in names) + " |\n")
        keys = ["read_s", "allocate_s", "execute_first_s", "execute_last_s", "write_s"]
        for n in names:
            if "phases_median_s" not in results[0]["commands"][n]:
                continue
            f.write(f"\n`{n}`: phases (--time-json), ns per byte of operand A (median over the rounds):\n\n")
            f.write("| size | " + " | ".join(k[:-2] for k in keys) + " |\n|---|" + "---|" * len(keys) + "\n")
            for row in results:
                if n not in row["commands"]:
                    continue
                ph = row["commands"][n]["phases_median_s"]
                f.write(f"| {human(row['bytes'])} | " + " | ".join(
                    f"{ph.get(k, 0.0) * 1e9 / row['bytes']:.3g}" for k in keys) + " |\n")


def run_once(argv, sync):
    if sync:
        os.sync()
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0] if argv[0].startswith("/") else "/usr/bin/" + argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, usage = os.wait4(pid, 0)
    t = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench-process --sweep: failed ({status}): {' '.join(argv)}")
    return t, usage.ru_utime + usage.ru_stime


def peak_rss_kib(argv, workdir):
    """The command's peak RSS, from GNU time (its wait4 on its own small fork): wait4 on a child
    of posix_spawn reports the Python parent's high-water mark, which the child's address space
    started from, so every command showed the same figure."""
    report = os.path.join(workdir, "rss.txt")
    exe = argv[0] if argv[0].startswith("/") else "/usr/bin/" + argv[0]
    pid = os.posix_spawn("/usr/bin/time", ["/usr/bin/time", "-f", "%M", "-o", report, exe, *argv[1:]], os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, _ = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench-process --sweep: failed under /usr/bin/time ({status}): {' '.join(argv)}")
    with open(report) as f:
        return int(f.read().split()[-1])


def sweep(args):
    results = []
    for k in args.sizes:
        size = 1 << k
        a, b = make_inputs(args.workdir, k)
        cmds = commands(args.dmlbits, args.baseline, a, b, args.workdir, args.numpy, args.floor_exe)
        sync = size >= 1 << 20
        rss = {}
        for name, argv in cmds:  # warm-up: page cache, every output file exists, and peak RSS
            run_once(argv, sync)
            rss[name] = peak_rss_kib(argv, args.workdir)
        rounds = rounds_for(size, args.rounds_scale)
        times = {name: {} for name, _ in cmds}  # round -> seconds
        cpu = {name: {} for name, _ in cmds}
        load = [os.getloadavg()[0]]
        order = random.Random(k)  # the same orders in every sweep of this size
        for r in range(rounds):
            for name, argv in order.sample(cmds, len(cmds)):
                if name.startswith("numpy") and r >= args.numpy_rounds:
                    continue
                t, c = run_once(argv, sync)
                times[name][r] = t
                cpu[name][r] = c
            load.append(os.getloadavg()[0])
        row = {"log2_bytes": k, "bytes": size, "rounds": rounds, "load": [min(load), max(load)], "commands": {}}
        cp, cp_cpu = times["cp"], cpu["cp"]
        for name, by_round in times.items():
            x, xc = list(by_round.values()), list(cpu[name].values())
            row["commands"][name] = {
                "median_s": statistics.median(x), "min_s": min(x), "samples_s": x, "peak_rss_kib": rss[name],
                "runs": len(x), "ratio_to_cp": statistics.median(t / cp[r] for r, t in by_round.items()),
                "cpu_median_s": statistics.median(xc), "cpu_samples_s": xc,
                "cpu_ratio_to_cp": statistics.median(t / max(cp_cpu[r], 1e-6) for r, t in cpu[name].items()),
            }
        results.append(row)
        line = "  ".join(f"{n} {v['median_s'] * 1e3:.2f}ms {v['ratio_to_cp']:.2f}x"
                         for n, v in row["commands"].items())
        print(f"{human(size):>8} ({rounds} rounds, load {min(load):.1f}-{max(load):.1f}): {line}", flush=True)
        for name in os.listdir(args.workdir):  # the outputs, one per command (15 GiB at 1 GiB)
            if name.startswith("out_") and name.endswith(".npy"):
                os.remove(os.path.join(args.workdir, name))
        if size >= 1 << 28:  # the big inputs are not kept: a 1 GiB sweep needs ~6 GiB of disk
            for path in (a, b):
                os.remove(path)
    return results


def write_table(results, path, meta):
    names = list(results[0]["commands"])
    with open(path, "w") as f:
        f.write(f"<!-- {meta} -->\n")
        f.write("Median ms per run (min in parentheses) and median per-round ratio to `cp`:\n\n")
        f.write("| size | rounds | load | " + " | ".join(f"`{n}`" for n in names) + " |\n")
        f.write("|---|---|---|" + "---|" * len(names) + "\n")
        for row in results:
            cells = []
            for n in names:
                c = row["commands"][n]
                cell = f"{c['median_s'] * 1e3:.3g} ({c['min_s'] * 1e3:.3g})"
                if n != "cp":
                    cell += f" {c['ratio_to_cp']:.2f}x"
                cells.append(cell)
            f.write(f"| {human(row['bytes'])} | {row['rounds']} | {row['load'][0]:.1f}-{row['load'][1]:.1f} | "
                    + " | ".join(cells) + " |\n")
        f.write("\nCPU time (user + system, from wait4): median ms per run and median per-round ratio to `cp`'s"
                " (steadier than the wall clock on a loaded machine, blind to waiting):\n\n")
        f.write("| size | " + " | ".join(f"`{n}`" for n in names) + " |\n")
        f.write("|---|" + "---|" * len(names) + "\n")
        for row in results:
            cells = []
            for n in names:
                c = row["commands"][n]
                cells.append(f"{c['cpu_median_s'] * 1e3:.3g}" + ("" if n == "cp" else f" {c['cpu_ratio_to_cp']:.2f}x"))
            f.write(f"| {human(row['bytes'])} | " + " | ".join(cells) + " |\n")
        f.write("\nPeak RSS (MiB, one warm-up run under /usr/bin/time -f %M):\n\n")
        f.write("| size | " + " | ".join(f"`{n}`" for n in names) + " |\n")
        f.write("|---|" + "---|" * len(names) + "\n")
        for row in results:
            f.write(f"| {human(row['bytes'])} | "
                    + " | ".join(f"{row['commands'][n]['peak_rss_kib'] / 1024:.1f}" for n in names) + " |\n")


def plot(results, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(results[0]["commands"])
    sizes = [r["bytes"] for r in results]
    fig, (ax, ax2, ax3) = plt.subplots(3, 1, figsize=(10, 14), sharex=True, gridspec_kw={"height_ratios": [3, 2, 2]})
    colors = {"cp": "black", "and": "tab:blue", "not": "tab:orange", "popcount": "tab:green", "numpy": "tab:purple",
              "floor": "gray"}
    for n in names:
        words = n.split()
        before = words[0] == "before"
        op = words[1] if before else words[0]
        color = colors.get(op, "gray")
        style = "-"
        if n.endswith("t1"):
            style = "--"
        if n.startswith("numpy"):
            style = "-" if n.endswith("and") else ":"
        alpha, width = (0.45, 1.0) if before else (1.0, 1.8 if n == "cp" else 1.3)
        y = [r["commands"][n]["median_s"] for r in results]
        marker = "x" if before else "o"
        ax.plot(sizes, y, style, color=color, marker=marker, markersize=3, alpha=alpha, linewidth=width, label=n)
        if n != "cp" and not n.startswith("numpy"):
            for a, key in ((ax2, "ratio_to_cp"), (ax3, "cpu_ratio_to_cp")):
                a.plot(sizes, [r["commands"][n][key] for r in results], style, color=color, marker=marker,
                       markersize=3, alpha=alpha, linewidth=width, label=n)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_ylabel("seconds per run (median)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=3)
    for a, what in ((ax2, "wall time / cp's"), (ax3, "CPU time / cp's")):
        a.axhline(1.0, color="black", linewidth=1)
        a.axhline(1.1, color="red", linewidth=0.8, linestyle=":")
        a.set_ylabel(what + " (median per-round ratio)")
        a.set_xscale("log", base=2)
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7, ncol=3)
    ax3.set_xlabel("operand size (bytes, uint32)")
    ticks = [r["bytes"] for r in results if r["log2_bytes"] % 2 == 0]
    ax3.set_xticks(ticks)
    ax3.set_xticklabels([human(s).replace(" ", "") for s in ticks], rotation=0, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dmlbits", type=os.path.abspath)
    p.add_argument("workdir")
    p.add_argument("out_prefix")
    p.add_argument("--baseline", type=os.path.abspath)
    p.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=DEFAULT_SIZES)
    p.add_argument("--rounds-scale", type=float, default=1.0)
    p.add_argument("--no-numpy", dest="numpy", action="store_false")
    p.add_argument("--numpy-rounds", type=int, default=3, help="NumPy runs in the first N rounds only (slow)")
    p.add_argument("--inmemory", action="store_true", help="the in-memory paths instead (--repeat, --expect, JSON)")
    p.add_argument("--floor", action="store_true", help="add scripts/bench_floor.c's and/not (the floor) to the rounds")
    args = p.parse_args()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    meta = (f"{cpu}, {os.cpu_count()} CPUs, {platform.release()}; dmlbits {args.dmlbits}"
            + (f", before {args.baseline}" if args.baseline else "") + f"; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(meta, flush=True)
    if args.inmemory:
        results = sweep_inmemory(args)
        with open(args.out_prefix + ".json", "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
        write_inmemory_table(results, args.out_prefix + ".md", meta)
        return
    args.floor_exe = build_floor(args.workdir) if args.floor else None
    results = sweep(args)
    with open(args.out_prefix + ".json", "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    write_table(results, args.out_prefix + ".md", meta)
    try:
        plot(results, args.out_prefix + ".png", meta)
    except ImportError:
        print("bench-process --sweep: no matplotlib (apt-get install python3-matplotlib): no plot", file=sys.stderr)


if __name__ == "__main__":
    main()
