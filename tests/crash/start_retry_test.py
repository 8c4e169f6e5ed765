#!/usr/bin/python3
"""The crash harness's terminate path (tests/crash/kill_test.py under wine, scripts/windows-test)
starts a run again when wine fails to start dmlbits.exe, and only then: driven on Linux through
tests/crash/fake_wine_run.py, which fails chosen starts as wine does.

  * one start in three fails, with terminate_after.exe's error 1359 or with wine ending before
    terminate_after.exe started anything (status 1, nothing said): the harness passes, and its
    last line counts the restarts;
  * every start fails: the harness fails after three tries, naming the seed and the command;
  * a run that started and then ended with no "ran" line (dmlbits.exe may have run): the harness
    fails at once, without trying again.
"""
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
if not os.environ.get("DMLBITS"):
    sys.exit("set DMLBITS to the dmlbits binary")


# The harness also fails when no run was killed (it tested nothing). Kills are drawn from 90 % of
# a --version run's time on (wine's start-up), so on a loaded machine even the multi-chunk
# scenario sees few (3 of 23 runs in one sitting of four at load 4): such a sitting, with nothing
# bad, is run again, up to three times.
def harness(fail_every, how="1359"):
    with tempfile.TemporaryDirectory(prefix="dmlbits-fake-wine-") as prefix:
        env = dict(os.environ, DMLBITS_CRASH_WINE_PREFIX=prefix, DMLBITS_CRASH_KILL="terminate",
                   DMLBITS_CRASH_TERMINATOR="terminate_after.exe", DMLBITS_CRASH_SECONDS="5",
                   DMLBITS_CRASH_WINE_RUN=os.path.join(here, "fake_wine_run.py"),
                   DMLBITS_CRASH_SCENARIOS="big-new", FAKE_WINE_FAIL_EVERY=str(fail_every),
                   FAKE_WINE_FAIL_HOW=how)
        p = subprocess.run([sys.executable, os.path.join(here, "kill_test.py")], env=env,
                           capture_output=True, text=True, timeout=120)
        starts = int(open(os.path.join(prefix, "starts")).read())
        return p, starts


def one_in_three(how):
    for sitting in range(3):
        p, starts = harness(3, how)
        last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
        if not (p.returncode == 1 and last.startswith("total: 0 kill points,") and ", 0 bad " in last):
            break
    m = re.search(r"wine failed to start dmlbits\.exe (\d+) times, each run started again$", last)
    expected = (starts + 2) // 3  # starts 0, 3, 6, ... failed
    if p.returncode != 0 or not m or int(m.group(1)) != expected:
        sys.exit(f"one start in three failing ({how}): status {p.returncode}, {starts} starts ({expected} failed), "
                 f"last line {last!r}\n{p.stdout}{p.stderr}")
    print(f"one start in three failing ({how}): passed, {last}")


one_in_three("1359")
one_in_three("silent")

p, starts = harness(1)
if p.returncode == 0 or starts != 3 or not re.search(r"failed \(status 2, try 3 of 3\)", p.stderr):
    sys.exit(f"every start failing: status {p.returncode}, {starts} starts, stderr {p.stderr!r}")
print(f"every start failing: the harness stopped after {starts} tries: {p.stderr.strip()}")

p, starts = harness(1, "after-start")
if p.returncode == 0 or starts != 1 or not re.search(r"failed \(status 1, try 1 of 3\)", p.stderr):
    sys.exit(f"a run that started, then no 'ran' line: status {p.returncode}, {starts} starts, stderr {p.stderr!r}")
print(f"a run that started, then no 'ran' line: the harness stopped at once: {p.stderr.strip()}")
