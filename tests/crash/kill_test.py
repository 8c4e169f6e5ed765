#!/usr/bin/python3
"""Crash consistency: dmlbits killed with SIGKILL at random moments never leaves a partial output
or a temporary file behind (issue #28).

Each scenario runs one command over and over in a fresh copy of its folder, sending SIGKILL after
a random delay drawn between 0 and 1.2 times the command's own unkilled run time, so that kills
land while it reads, computes, writes and names its outputs (under wine, from 90 % of the time
dmlbits.exe takes to start, which is most of its run time there). After every run:

  * every output file is byte for byte the old file (or absent, if there was none) or the new
    one complete: tensors equal to NumPy's result (np.invert; never dmlbits' own output), JSON
    side outputs parse and are not the old ones' bytes, or are those bytes exactly;
  * `check --update` leaves every golden either old or new;
  * nothing else is in the folder: no partial file, no ".NAME.dmlbits-XXXXXX".

A complete file (old or new) left under a temporary name is counted apart ("window"), not as a
failure: Linux cannot give an unnamed file a name that replaces another (linkat refuses an
existing name), so replacing a file links the finished file under a temporary name and renames
it over the old one, two system calls apart; a kill between them leaves that file. (Windows has
no such window: the file, marked delete-on-close from its creation, is linked over the old one
in one call and keeps the mark; only where the file system has no hard links does it fall back
to a copy whose mark is cleared before the rename.) The count shows how often that window is
hit; any partial file, or a temporary file whose content is not complete, is a failure.

Scenarios: a small output (1 KiB) replacing a file and a new one; a multi-chunk output (12 MiB,
24 chunks of 512 KiB) replacing a file and a new one; two streamed inputs of 16 MiB whose chunks
two threads share in halves, each writing its own at their offsets (stream.cpp: from 16 MiB of
output), replacing a file; the same in four slices on four threads (32 MiB); --in-place on a
multi-chunk file;
standard output redirected to a file (no atomicity promised there: only no temporary file);
side outputs (--time-json, --explain-json, --report-json with --expect, --emit-dxdispatch);
`check --update` over six goldens of 2 MiB.

The Windows build under wine (scripts/windows-test): DMLBITS is dmlbits.exe and
DMLBITS_CRASH_WINE_PREFIX the WINEPREFIX it runs in (through scripts/wine-run). Windows has no
signals; how the process is killed is DMLBITS_CRASH_KILL:
  * terminate (the default under wine): TerminateProcess, from inside wine, by the test tool
    terminate_after.exe (DMLBITS_CRASH_TERMINATOR, built with the Windows tests), which starts
    dmlbits.exe and ends it after the delay; the delay and the run time are measured there, from
    CreateProcessW, so that wine's start-up does not count;
  * sigkill: SIGKILL to the Linux process that runs dmlbits.exe (what the OOM killer or a CI
    timeout does to a wine program); wine's server notices its end and closes its handles;
    what that leaves is checked after the server has had up to DMLBITS_CRASH_SETTLE seconds
    (default 2) to do so, and any wait that was needed is reported.
DMLBITS_CRASH_SCENARIOS (keys, comma-separated; by default all, and all but `stdout` under
wine, where each process costs more) picks the scenarios.

Environment: DMLBITS (the binary), DMLBITS_CRASH_SECONDS (the time budget, default 40; the runs
are shared among the scenarios), DMLBITS_CRASH_SEED. Prints, per scenario and in total, the kill
points tried (runs killed before they ended), the runs that ended first, and the bad outcomes,
each described; exits 1 if any outcome was bad.
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

DMLBITS = os.environ.get("DMLBITS")
if not DMLBITS:
    sys.exit("set DMLBITS to the dmlbits binary")
DMLBITS = os.path.abspath(DMLBITS)  # it runs in each scenario's folder
BUDGET = float(os.environ.get("DMLBITS_CRASH_SECONDS", "40"))
SEED = int(os.environ.get("DMLBITS_CRASH_SEED", str(int(time.time()))))
rng = random.Random(SEED)
WINE_PREFIX = os.environ.get("DMLBITS_CRASH_WINE_PREFIX")
KILL = os.environ.get("DMLBITS_CRASH_KILL", "terminate" if WINE_PREFIX else "sigkill")
if KILL not in ("sigkill", "terminate") or (KILL == "terminate" and not WINE_PREFIX):
    sys.exit(f"DMLBITS_CRASH_KILL={KILL}: sigkill, or terminate under wine (DMLBITS_CRASH_WINE_PREFIX)")
# DMLBITS_CRASH_WINE_RUN: another runner in wine-run's place (tests/crash/fake_wine_run.py, which
# lets the Linux test suite drive the terminate path and its start retries without wine).
WINE_RUN = os.environ.get("DMLBITS_CRASH_WINE_RUN") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "wine-run")
TERMINATOR = os.environ.get("DMLBITS_CRASH_TERMINATOR")
if KILL == "terminate" and not TERMINATOR:
    sys.exit("set DMLBITS_CRASH_TERMINATOR to terminate_after.exe (built with the Windows tests)")
SETTLE = float(os.environ.get("DMLBITS_CRASH_SETTLE", "2"))
TERMINATED = 222  # terminate_after.exe's status for a program it terminated
# Wine now and then fails to start a process at all, before any of dmlbits ran:
#  * CreateProcessW returns ERROR_INTERNAL_ERROR (1359) when the new process dies while wine sets
#    it up (seen once in a CI run of some 300 starts on a loaded 2-core machine);
#  * wine itself ends with a status and no word at all, before terminate_after.exe says
#    "terminate_after: started" (which it says as soon as dmlbits.exe is created): seen once in a
#    CI run (status 1, nothing on standard error; the same seed passed here).
# Either way nothing of dmlbits ran, so the folder is as the scenario set it up: the run is
# started again, up to START_TRIES times, and the retries are counted in the summary. A run that
# started and then gave no "ran" line ends the test (dmlbits.exe may have run: nothing is known).
START_TRIES = 3
NOT_STARTED = re.compile(rb"terminate_after: cannot start the program \(error 1359\)")
STARTED = re.compile(rb"^terminate_after: started\s*$", re.M)


def never_started(status, stderr):
    """Whether wine's run of terminate_after.exe ended before dmlbits.exe was created."""
    return (status == 2 and NOT_STARTED.search(stderr)) or (status != 0 and not STARTED.search(stderr))


class Launcher:
    """Runs dmlbits, killing it after `kill_after` seconds (None: never): SIGKILL to its
    process, on Linux or to wine's process of dmlbits.exe; or TerminateProcess inside wine."""

    def __init__(self, scratch):
        self.stderr_path = os.path.join(scratch, "stderr")
        self.start_retries = 0
        self.start_failures = {}  # (status, what wine said) -> times, reported before the summary

    def terminate_run(self, argv, folder, stdout, delay):
        """One run through terminate_after.exe, started again while wine fails to start it."""
        # CreateProcessW takes a Windows path: wine's drive Z: is the Linux root.
        program = "Z:" + DMLBITS.replace("/", "\\")
        for attempt in range(1, START_TRIES + 1):
            with open(self.stderr_path, "wb") as err:
                status = subprocess.call([WINE_RUN, WINE_PREFIX, TERMINATOR, str(delay), program] + argv,
                                         cwd=folder, stdout=stdout, stderr=err)
            stderr = open(self.stderr_path, "rb").read()
            if not never_started(status, stderr) or attempt == START_TRIES:
                break
            self.start_retries += 1
            key = (status, stderr.decode(errors="replace").strip())
            self.start_failures[key] = self.start_failures.get(key, 0) + 1
        m = re.search(rb"terminate_after: ran ([0-9.]+) ms\s*$", stderr)
        if not m:
            sys.exit(f"seed {SEED}: terminate_after.exe {' '.join(argv)} in {folder} failed "
                     f"(status {status}, try {attempt} of {START_TRIES}): {stderr!r}")
        return status, float(m.group(1)) / 1000

    def run(self, argv, folder, stdout, kill_after):
        """Returns (killed, status, seconds dmlbits ran)."""
        if KILL == "terminate":
            delay = -1 if kill_after is None else int(kill_after * 1000)
            status, seconds = self.terminate_run(argv, folder, stdout, delay)
            return status == TERMINATED, status, seconds
        command = ([WINE_RUN, WINE_PREFIX] if WINE_PREFIX else []) + [DMLBITS] + argv
        start = time.monotonic()
        p = subprocess.Popen(command, cwd=folder, stdout=stdout, stderr=subprocess.DEVNULL)
        killed = False
        if kill_after is not None:
            try:
                p.wait(timeout=kill_after)
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                killed = True
        status = p.wait()
        elapsed = time.monotonic() - start
        if killed and status != -signal.SIGKILL:
            killed = False  # it ended on its own between the timeout and the signal
        return killed, status, elapsed


launcher = None


def npy_bytes(array):
    """What np.save writes for `array`."""
    import io
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def data(n, seed):
    return np.random.default_rng(seed).integers(0, 256, size=n, dtype=np.uint8)


class Scenario:
    """A command run in a folder prepared by `setup`; `outputs` maps each output file to its
    acceptable contents: (old bytes or None for absent, new: bytes or a predicate)."""

    def __init__(self, key, name, setup, argv, outputs, stdout_to=None):
        self.key, self.name, self.setup, self.argv, self.outputs, self.stdout_to = key, name, setup, argv, outputs, stdout_to
        self.tried = self.finished = self.bad = self.window = self.settled = 0
        self.failures = []
        self.notes = []
        self.seconds = None

    def run(self, folder, kill_after):
        self.setup(folder)
        before = set(os.listdir(folder))
        out = open(os.path.join(folder, self.stdout_to), "wb") if self.stdout_to else subprocess.DEVNULL
        killed, status, elapsed = launcher.run(self.argv, folder, out, kill_after)
        if self.stdout_to:
            out.close()
        if killed and WINE_PREFIX and KILL == "sigkill":
            # wine's server closes a killed process's handles once it notices the end: the
            # temporary files it deletes then are given that long to go.
            expected = before | set(self.outputs) | ({self.stdout_to} if self.stdout_to else set())
            give_up = time.monotonic() + SETTLE
            waited = False
            while set(os.listdir(folder)) - expected and time.monotonic() < give_up:
                waited = True
                time.sleep(0.01)
            self.settled += waited
        return killed, status, elapsed, before

    def check(self, folder, killed, status, before):
        """Returns (problems, window): window names a complete file left under a temporary name,
        which only a kill between linking the finished file and renaming it over the old one
        leaves (the one window Linux leaves: linkat cannot replace a name)."""
        problems = []
        window = None
        if not killed and status != 0:
            problems.append(f"exit status {status} without a kill")
        expected_names = before | set(self.outputs) | ({self.stdout_to} if self.stdout_to else set())
        for name in sorted(set(os.listdir(folder)) - expected_names):
            m = re.fullmatch(r"\.(.+)\.dmlbits-[A-Za-z0-9]{6}", name)
            if m and m.group(1) in self.outputs and window is None:
                old, new = self.outputs[m.group(1)]
                content = open(os.path.join(folder, name), "rb").read()
                if content == old or (new(content) if callable(new) else content == new):
                    window = name
                    continue
            size = os.path.getsize(os.path.join(folder, name))
            problems.append(f"left behind: {name} ({size} bytes)")
        for name, (old, new) in self.outputs.items():
            path = os.path.join(folder, name)
            now = open(path, "rb").read() if os.path.exists(path) else None
            if now == old:
                if not killed and old is not None and not callable(new) and new != old:
                    problems.append(f"{name}: still the old file after exit 0")
                continue
            if now is None:
                problems.append(f"{name}: gone")
            elif callable(new):
                if not new(now):
                    problems.append(f"{name}: neither old nor a complete new file ({len(now)} bytes)")
            elif now != new:
                problems.append(f"{name}: neither old nor new ({len(now)} bytes)")
        return problems, window


def json_complete(*keys):
    def ok(b):
        try:
            j = json.loads(b)
        except ValueError:
            return False
        return all(k in j for k in keys)
    return ok


def build_scenarios(base):
    small = data(1024, 1)
    big = data(12 << 20, 2)
    old_small = npy_bytes(data(1024, 3))
    old_big = npy_bytes(data(12 << 20, 4))
    files = {
        "small.npy": npy_bytes(small),
        "big.npy": npy_bytes(big),
    }
    new_small = npy_bytes(np.invert(small))
    new_big = npy_bytes(np.invert(big))
    # At the size from which two streamed inputs are split in halves (kHalvesMinOutputBytes).
    halves_a, halves_b = data(16 << 20, 5), data(16 << 20, 6)
    files["ha.npy"], files["hb.npy"] = npy_bytes(halves_a), npy_bytes(halves_b)
    new_halves = npy_bytes(halves_a & halves_b)
    # Four slices on --threads 4: 32 MiB, each slice of 8 MiB (stream.cpp, thread_choice).
    slices_a, slices_b = data(32 << 20, 7), data(32 << 20, 8)
    files["sa.npy"], files["sb.npy"] = npy_bytes(slices_a), npy_bytes(slices_b)
    new_slices = npy_bytes(slices_a ^ slices_b)
    old_json = b'{"old": true}\n'
    goldens = [data(2 << 20, 10 + i) for i in range(6)]
    for i, g in enumerate(goldens):
        files[f"in{i}.npy"] = npy_bytes(g)
    manifest = {"cases": [{"name": f"c{i}", "op": "not", "inputs": [f"in{i}.npy"], "expected": f"g{i}.npy"}
                          for i in range(6)]}
    files["m.json"] = json.dumps(manifest).encode()
    old_goldens = {f"g{i}.npy": npy_bytes(data(2 << 20, 20 + i)) for i in range(6)}
    new_goldens = {f"g{i}.npy": npy_bytes(np.invert(goldens[i])) for i in range(6)}
    for name, content in files.items():
        with open(os.path.join(base, name), "wb") as f:
            f.write(content)

    def setup_with(extra):
        def setup(folder):
            if os.path.exists(folder):
                shutil.rmtree(folder)
            os.mkdir(folder)
            for name in files:
                os.link(os.path.join(base, name), os.path.join(folder, name))
            for name, content in extra.items():
                with open(os.path.join(folder, name), "wb") as f:
                    f.write(content)
        return setup

    dxd_a = npy_bytes(small)
    return [
        Scenario("small-replace", "small, replacing", setup_with({"out.npy": old_small}), ["not", "small.npy", "-o", "out.npy"],
                 {"out.npy": (old_small, new_small)}),
        Scenario("small-new", "small, new", setup_with({}), ["not", "small.npy", "-o", "out.npy"], {"out.npy": (None, new_small)}),
        Scenario("big-replace", "multi-chunk, replacing", setup_with({"out.npy": old_big}), ["not", "big.npy", "-o", "out.npy"],
                 {"out.npy": (old_big, new_big)}),
        Scenario("big-new", "multi-chunk, new", setup_with({}), ["not", "big.npy", "-o", "out.npy"], {"out.npy": (None, new_big)}),
        Scenario("halves", "two inputs in halves, replacing", setup_with({"out.npy": old_big}),
                 ["and", "ha.npy", "hb.npy", "-o", "out.npy"], {"out.npy": (old_big, new_halves)}),
        Scenario("slices", "two inputs in four slices, replacing", setup_with({"out.npy": old_big}),
                 ["xor", "sa.npy", "sb.npy", "-o", "out.npy", "--threads", "4"], {"out.npy": (old_big, new_slices)}),
        Scenario("in-place", "multi-chunk, --in-place", setup_with({"a.npy": files["big.npy"]}), ["not", "a.npy", "--in-place"],
                 {"a.npy": (files["big.npy"], new_big)}),
        Scenario("stdout", "multi-chunk, standard output", setup_with({}), ["not", "big.npy", "-o", "-"], {},
                 stdout_to="stdout.npy"),
        Scenario("side", "side outputs", setup_with({"t.json": old_json, "e.json": old_json, "r.json": old_json,
                                             "exp.npy": new_small}),
                 ["not", "small.npy", "-o", "out.npy", "--time-json", "t.json", "--explain-json", "e.json",
                  "--expect", "exp.npy", "--report-json", "r.json", "--emit-dxdispatch", "dx"],
                 {"out.npy": (None, new_small), "t.json": (old_json, json_complete("phases")),
                  "e.json": (old_json, json_complete("operator", "tensors")), "r.json": (old_json, json_complete("equal")),
                  "dx.json": (None, json_complete("resources", "commands")), "dx-a.npy": (None, dxd_a)}),
        Scenario("check-update", "check --update, six goldens", setup_with(old_goldens), ["check", "m.json", "--update", "-j", "2"],
                 {name: (old_goldens[name], new_goldens[name]) for name in old_goldens}),
    ]


def main():
    base = tempfile.mkdtemp(prefix="dmlbits-crash-")
    try:
        global launcher
        launcher = Launcher(base)
        scenarios = build_scenarios(base)
        keys = os.environ.get("DMLBITS_CRASH_SCENARIOS")
        # Under wine each run costs 0.1-3 s (starting dmlbits.exe), so fewer scenarios share the
        # budget: not standard output, where no atomicity is promised.
        chosen = keys.split(",") if keys else [s.key for s in scenarios if not (WINE_PREFIX and s.key == "stdout")]
        unknown = set(chosen) - {s.key for s in scenarios}
        if unknown:
            sys.exit(f"DMLBITS_CRASH_SCENARIOS: unknown {sorted(unknown)}; known: {[s.key for s in scenarios]}")
        scenarios = [s for s in scenarios if s.key in chosen]
        work = os.path.join(base, "run")
        # Each scenario's unkilled run time, which bounds its kill delays (and checks it whole):
        # the least of two runs, one under wine, where a run costs seconds.
        for s in scenarios:
            times = []
            for _ in range(1 if WINE_PREFIX else 2):
                killed, status, elapsed, before = s.run(work, None)
                problems, window = s.check(work, killed, status, before)
                if problems or window:
                    s.bad += 1
                    s.failures.append(f"unkilled run: {'; '.join(problems + [str(window)])}")
                times.append(elapsed)
            s.seconds = min(times)
        # Under wine dmlbits.exe takes most of its run time to start (loading it: 0.2-1.5 s
        # here, with the machine's load), during which a kill tests nothing: kills are drawn
        # from 90 % of that start-up time (a --version run's) on.
        startup = 0.0
        if WINE_PREFIX:
            startup = min(launcher.run(["--version"], base, subprocess.DEVNULL, None)[2] for _ in range(2))
        deadline = time.monotonic() + BUDGET
        while time.monotonic() < deadline:
            for s in scenarios:
                if time.monotonic() >= deadline:
                    break
                kill_after = rng.uniform(0.9 * min(startup, s.seconds), 1.2 * s.seconds)
                killed, status, elapsed, before = s.run(work, kill_after)
                if killed:
                    s.tried += 1
                else:
                    s.finished += 1
                problems, window = s.check(work, killed, status, before)
                if window and not problems:
                    s.window += 1
                    s.notes.append(f"killed after {kill_after * 1000:.1f} ms: complete file left as {window}")
                if problems:
                    s.bad += 1
                    if len(s.failures) < 3:
                        s.failures.append(f"killed after {kill_after * 1000:.1f} ms: {'; '.join(problems)}"
                                          if killed else f"not killed: {'; '.join(problems)}")
        how = {"sigkill": "SIGKILL" + (" to wine's process of it" if WINE_PREFIX else ""),
               "terminate": "TerminateProcess (terminate_after.exe, under wine)"}[KILL]
        print(f"seed {SEED}, budget {BUDGET:.0f} s, binary {DMLBITS}, killed by {how}"
              + (f", start-up {startup * 1000:.0f} ms" if WINE_PREFIX else ""))
        print(f"{'scenario':<32} {'run ms':>7} {'killed':>7} {'ended':>6} {'bad':>5} {'window':>7}")
        for s in scenarios:
            print(f"{s.name:<32} {s.seconds * 1000:7.1f} {s.tried:7d} {s.finished:6d} {s.bad:5d} {s.window:7d}")
            for f in s.failures + s.notes[:2]:
                print(f"    {f}")
            if s.settled:
                print(f"    {s.settled} kills left files that wine's server removed within {SETTLE:.0f} s after")
        tried = sum(s.tried for s in scenarios)
        bad = sum(s.bad for s in scenarios)
        window = sum(s.window for s in scenarios)
        for (status, said), times in sorted(launcher.start_failures.items()):
            print(f"not started {times} times: status {status}, standard error {said!r}")
        print(f"total: {tried} kill points, {sum(s.finished for s in scenarios)} runs that ended first, {bad} bad "
              f"(partial or unexpected files), {window} complete files left under a temporary name "
              f"(a kill in the rename window)"
              + (f"; wine failed to start dmlbits.exe {launcher.start_retries} times, each run started again"
                 if launcher.start_retries else ""))
        return 1 if bad or tried == 0 else 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
