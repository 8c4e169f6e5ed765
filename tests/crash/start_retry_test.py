#!/usr/bin/python3
"""The crash harness's terminate path (tests/crash/kill_test.py under wine, scripts/windows-test)
starts a run again when wine fails to start dmlbits.exe, and only then: driven on Linux through
tests/crash/fake_wine_run.py, which fails chosen starts as wine does.

  * one start in three fails: the harness passes, and its last line counts the restarts;
  * every start fails: the harness fails after three tries, naming the seed and the command.
"""
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
if not os.environ.get("DMLBITS"):
    sys.exit("set DMLBITS to the dmlbits binary")


def harness(fail_every):
    with tempfile.TemporaryDirectory(prefix="dmlbits-fake-wine-") as prefix:
        env = dict(os.environ, DMLBITS_CRASH_WINE_PREFIX=prefix, DMLBITS_CRASH_KILL="terminate",
                   DMLBITS_CRASH_TERMINATOR="terminate_after.exe", DMLBITS_CRASH_SECONDS="2",
                   DMLBITS_CRASH_WINE_RUN=os.path.join(here, "fake_wine_run.py"),
                   DMLBITS_CRASH_SCENARIOS="small-new,small-replace", FAKE_WINE_FAIL_EVERY=str(fail_every))
        p = subprocess.run([sys.executable, os.path.join(here, "kill_test.py")], env=env,
                           capture_output=True, text=True, timeout=120)
        starts = int(open(os.path.join(prefix, "starts")).read())
        return p, starts


p, starts = harness(3)
last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
m = re.search(r"wine failed to start dmlbits\.exe (\d+) times, each run started again$", last)
expected = (starts + 2) // 3  # starts 0, 3, 6, ... failed
if p.returncode != 0 or not m or int(m.group(1)) != expected:
    sys.exit(f"one start in three failing: status {p.returncode}, {starts} starts ({expected} failed), "
             f"last line {last!r}\n{p.stdout}{p.stderr}")
print(f"one start in three failing: passed, {last}")

p, starts = harness(1)
if p.returncode == 0 or starts != 3 or not re.search(r"failed \(status 2, try 3 of 3\)", p.stderr):
    sys.exit(f"every start failing: status {p.returncode}, {starts} starts, stderr {p.stderr!r}")
print(f"every start failing: the harness stopped after {starts} tries: {p.stderr.strip()}")
