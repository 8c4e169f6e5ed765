"""Golden checks split into shards (``dmlbits check --shard K/N``) and their JUnit reports merged.

A sharded run's JUnit report lists its own cases with their results and every other case the
filter selects as ``<skipped message="in shard J/N"/>``, so that :func:`merge_junit` knows every
case of the run and names those whose shard never reported ("did not run").

Fanning a manifest out over a Dask cluster (the manifest and its files must be readable at the
same path on every worker, and ``dmlbits`` on the workers' PATH, or ``cli=`` a path)::

    from distributed import Client
    import dmlbits.shards
    with Client("scheduler:8786") as client:
        report = dmlbits.shards.check_on_cluster(client, "golden/manifest.json", shards=16,
                                                 junit="merged.xml")
    print(report.summary())

Or with GNU parallel over ssh (no Python on the hosts)::

    seq 0 15 | parallel --sshloginfile hosts --basefile manifest.json --return r{}.xml \\
        dmlbits check manifest.json --shard {}/16 --junit r{}.xml
    python3 -m dmlbits.shards merge -o merged.xml r*.xml

Command line: ``python3 -m dmlbits.shards merge -o MERGED.xml SHARD.xml...`` prints the summary
and exits 0 if every case passed, 1 if a case failed or did not run, 2 for unreadable reports.
"""

import dataclasses
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

__all__ = ["merge_junit", "MergedReport", "check_on_cluster", "run_shard", "ShardError"]

_IN_SHARD = re.compile(r"^in shard (\d+)/(\d+)$")


class ShardError(RuntimeError):
    """A shard that produced no report: its command failed to start, died, or was refused."""


@dataclasses.dataclass
class MergedReport:
    """The merge of shards' reports: counts, and the cases that did not run (suite, case,
    the shard that should have run it)."""
    tests: int = 0
    passed: int = 0
    failures: int = 0
    errors: int = 0
    not_run: list = dataclasses.field(default_factory=list)
    shards_reported: dict = dataclasses.field(default_factory=dict)  # suite -> sorted shard indices
    shard_count: int = 1
    problems: list = dataclasses.field(default_factory=list)        # shards that failed (check_on_cluster)

    def __bool__(self):
        return self.failures == 0 and self.errors == 0 and not self.not_run

    def summary(self):
        line = (f"{self.passed} passed, {self.failures} failed, {self.errors} errors, "
                f"{len(self.not_run)} did not run")
        for suite, case, shard in self.not_run:
            line += f"\nNOT RUN {case} ({suite}): no report from shard {shard}"
        for p in self.problems:
            line += f"\nSHARD   {p}"
        return line


def merge_junit(paths, output=None):
    """Merges JUnit reports of ``dmlbits check`` (sharded or not) into one report.

    A case reported with a result by some file takes that result; a case that every file lists
    only as run by another shard did not run, and appears in the merged report as an error
    "did not run: no report from shard J/N". Returns a :class:`MergedReport`; writes the
    merged XML to ``output`` if given (atomically). Raises ValueError for files that are not
    such reports, or that disagree on the shard count.
    """
    suites = {}  # name -> {"cases": {case: element or None}, "owner": {case: "J/N"}, "shards": set}
    shard_count = None
    for path in paths:
        try:
            root = ET.parse(os.fspath(path)).getroot()
        except (ET.ParseError, OSError) as e:
            raise ValueError(f"reading '{os.fspath(path)}': not a JUnit report ({e})") from None
        for suite in ([root] if root.tag == "testsuite" else root.iter("testsuite")):
            s = suites.setdefault(suite.get("name", ""), {"cases": {}, "owner": {}, "shards": set()})
            for prop in suite.iter("property"):
                if prop.get("name") == "dmlbits.shard":
                    k, n = (int(v) for v in prop.get("value").split("/"))
                    if shard_count not in (None, n):
                        raise ValueError(f"reading '{os.fspath(path)}': shard {k}/{n} of a run of "
                                         f"{n} shards, but another report is of {shard_count}")
                    shard_count = n
                    s["shards"].add(k)
            for case in suite.iter("testcase"):
                name = case.get("name")
                skipped = case.find("skipped")
                m = _IN_SHARD.match(skipped.get("message", "")) if skipped is not None else None
                if m:
                    s["cases"].setdefault(name, None)
                    s["owner"][name] = f"{m.group(1)}/{m.group(2)}"
                else:
                    s["cases"][name] = case  # a later report of the same case wins (a rerun)

    report = MergedReport(shard_count=shard_count or 1)
    out = ET.Element("testsuites")
    for suite_name, s in suites.items():
        suite = ET.SubElement(out, "testsuite", name=suite_name)
        counts = {"tests": 0, "failures": 0, "errors": 0}
        for name, case in s["cases"].items():
            counts["tests"] += 1
            if case is None:
                owner = s["owner"][name]
                case = ET.Element("testcase", classname="dmlbits.check", name=name, time="0")
                ET.SubElement(case, "error", message=f"did not run: no report from shard {owner}",
                              type="dmlbits.not-run").text = (
                    f"shard {owner} did not report: its machine failed, or its report was lost")
                report.not_run.append((suite_name, name, owner))
                counts["errors"] += 1
            elif case.find("failure") is not None:
                counts["failures"] += 1
            elif case.find("error") is not None:
                counts["errors"] += 1
            else:
                report.passed += 1
            case.tail = None
            suite.append(case)
        for k, v in counts.items():
            suite.set(k, str(v))
        report.tests += counts["tests"]
        report.failures += counts["failures"]
        report.errors += counts["errors"]
        report.shards_reported[suite_name] = sorted(s["shards"])
    out.set("tests", str(report.tests))
    out.set("failures", str(report.failures))
    out.set("errors", str(report.errors))
    if output is not None:
        ET.indent(out)
        _write_atomically(os.fspath(output), ET.tostring(out, encoding="unicode", xml_declaration=True) + "\n")
    return report


def _write_atomically(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".merge-", suffix=".xml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def run_shard(k, n, manifests, *, cli="dmlbits", args=(), timeout=None):
    """Runs ``cli check MANIFESTS --shard k/n --junit ...`` here (on a worker) and returns
    ``(k, exit_status, output, junit_xml_text)``. A case failure is a result (status 1, with
    its report); a shard that produced no report raises ShardError."""
    if isinstance(manifests, (str, os.PathLike)):
        manifests = [manifests]
    with tempfile.TemporaryDirectory(prefix="dmlbits-shard-") as tmp:
        junit = os.path.join(tmp, "junit.xml")
        cmd = [cli, "check", *map(os.fspath, manifests), "--shard", f"{k}/{n}", "--junit", junit, *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if not os.path.exists(junit):
            raise ShardError(f"shard {k}/{n}: {' '.join(cmd)} exited with status {p.returncode} and "
                             f"wrote no report: {(p.stderr or p.stdout).strip()[-2000:]}")
        with open(junit, encoding="utf-8") as f:
            return k, p.returncode, p.stdout, f.read()


def check_on_cluster(client, manifests, shards, *, junit=None, junit_dir=None, cli="dmlbits", args=(),
                     retries=1, timeout=None):
    """Runs a manifest's cases in ``shards`` shards on a Dask cluster, one task per shard
    (``client.map``, ``pure=False``: each run is a side effect), and merges their reports.

    A shard whose task fails (its command died, its worker was lost after ``retries`` retries)
    does not lose the others' results: its cases are reported as not run, and the failure is in
    ``report.problems``. Each shard's report is kept in ``junit_dir`` (shard-K.xml) if given;
    the merged one is written to ``junit``. Returns the MergedReport.
    """
    from distributed import as_completed

    futures = client.map(run_shard, range(shards), n=shards, manifests=manifests, cli=cli, args=tuple(args),
                         timeout=timeout, pure=False, retries=retries)
    own_dir = None
    if junit_dir is None:
        own_dir = tempfile.TemporaryDirectory(prefix="dmlbits-shards-")
        junit_dir = own_dir.name
    try:
        files, problems = [], []
        for future in as_completed(futures):
            try:
                k, status, _output, text = future.result()
            except Exception as e:  # noqa: BLE001 - any failure of one shard is that shard's
                problems.append(f"{type(e).__name__}: {e}")
                continue
            path = os.path.join(os.fspath(junit_dir), f"shard-{k}.xml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            files.append(path)
        files.sort()
        if not files:
            raise ShardError("no shard reported:\n" + "\n".join(problems))
        report = merge_junit(files, junit)
        report.problems = sorted(problems)
        return report
    finally:
        if own_dir is not None:
            own_dir.cleanup()


def _main(argv):
    import argparse
    parser = argparse.ArgumentParser(prog="python3 -m dmlbits.shards",
                                     description="Merge JUnit reports of dmlbits check --shard K/N")
    sub = parser.add_subparsers(dest="command", required=True)
    merge = sub.add_parser("merge", help="merge shard reports into one; name the cases that did not run")
    merge.add_argument("reports", nargs="+")
    merge.add_argument("-o", "--output", required=True)
    ns = parser.parse_args(argv)
    try:
        report = merge_junit(ns.reports, ns.output)
    except ValueError as e:
        print(f"dmlbits.shards: {e}", file=sys.stderr)
        return 2
    print(report.summary())
    return 0 if report else 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
