#!/usr/bin/python3
"""Stands in for `scripts/wine-run PREFIX terminate_after.exe DELAY PROGRAM ARGS...` in
tests/crash/start_retry_test.py: runs the Linux dmlbits as terminate_after.exe runs dmlbits.exe
(SIGKILL in place of TerminateProcess after DELAY ms; DELAY < 0 never), with its outputs:
"terminate_after: started" once the program is created and "terminate_after: ran N ms" on
standard error last, status 222 when it killed the program, the program's own status otherwise.

Like wine now and then, it fails on some starts: FAKE_WINE_FAIL_EVERY=N: start number 0, N, 2N,
... fails (counted in PREFIX/starts); 1 fails every start. How (FAKE_WINE_FAIL_HOW):
  * 1359 (the default): as terminate_after.exe reports a program wine could not start: "cannot
    start the program (error 1359)", status 2;
  * silent: as wine ending before terminate_after.exe ran: status 1, nothing said;
  * after-start: "terminate_after: started", then status 1 and no "ran" line, the program not
    run (what the harness cannot tell from a run that happened: it must stop)."""
import os
import signal
import subprocess
import sys
import time

prefix, _terminator, delay, program, *args = sys.argv[1:]
counter = os.path.join(prefix, "starts")
start = int(open(counter).read()) if os.path.exists(counter) else 0
with open(counter, "w") as f:
    f.write(str(start + 1))
if start % int(os.environ["FAKE_WINE_FAIL_EVERY"]) == 0:
    how = os.environ.get("FAKE_WINE_FAIL_HOW", "1359")
    if how == "1359":
        sys.stderr.write("terminate_after: cannot start the program (error 1359)\r\n")
        sys.exit(2)
    if how == "after-start":
        sys.stderr.write("terminate_after: started\r\n")
    sys.exit(1)
# terminate_after.exe is handed a Windows path on wine's drive Z: (the Linux root).
assert program.startswith("Z:"), program
begin = time.monotonic()
p = subprocess.Popen([program[2:].replace("\\", "/")] + args)
sys.stderr.write("terminate_after: started\r\n")
sys.stderr.flush()
killed = False
try:
    p.wait(timeout=None if int(delay) < 0 else int(delay) / 1000)
except subprocess.TimeoutExpired:
    p.send_signal(signal.SIGKILL)
status = p.wait()
killed = status == -signal.SIGKILL
sys.stderr.write(f"terminate_after: ran {(time.monotonic() - begin) * 1000:.1f} ms\r\n")
sys.exit(222 if killed else status & 0xff)
