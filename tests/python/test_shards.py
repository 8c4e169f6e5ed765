"""dmlbits check --shard K/N through the built CLI, and dmlbits.shards.merge_junit: every case in
exactly one shard by the documented rule (the i-th selected case of a manifest runs in shard
i mod N), per-shard JUnit that lists the other shards' cases, and a merge that equals the
unsharded run and names the cases of a missing shard."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import dmlbits.shards

MANIFEST = Path(__file__).resolve().parents[2] / "testdata" / "golden" / "manifest.json"
NAMES = [c["name"] for c in json.loads(MANIFEST.read_text())["cases"]]


def _cases(junit):
    """{name: outcome} of a JUnit file: pass, failure, error, or 'skipped:<message>'."""
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kind = "pass"
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                kind = tag if tag != "skipped" else "skipped:" + el.get("message")
        out[case.get("name")] = kind
    return out


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory):
    cli = os.environ["DMLBITS"]
    junit = tmp_path_factory.mktemp("whole") / "all.xml"
    p = subprocess.run([cli, "check", MANIFEST, "--junit", junit], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return junit


def _shard(cli, tmp_path, k, n, *extra):
    junit = tmp_path / f"r{k}.xml"
    p = cli("check", MANIFEST, "--shard", f"{k}/{n}", "--junit", junit, *extra)
    assert p.returncode == 0, p.stdout + p.stderr
    return junit


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_every_case_in_exactly_one_shard(cli, tmp_path, unsharded, n):
    whole = _cases(unsharded)
    ran = {}
    for k in range(n):
        cases = _cases(_shard(cli, tmp_path, k, n))
        assert set(cases) == set(NAMES)
        mine = [name for name, kind in cases.items() if not kind.startswith("skipped")]
        assert mine == [name for i, name in enumerate(NAMES) if i % n == k]  # the documented rule
        for name, kind in cases.items():
            if kind.startswith("skipped"):
                assert kind == f"skipped:in shard {NAMES.index(name) % n}/{n}"
        for name in mine:
            assert name not in ran
            ran[name] = cases[name]
    assert ran == whole  # each case, once, with the unsharded result
    merged = dmlbits.shards.merge_junit(sorted(tmp_path.glob("r*.xml")), tmp_path / "merged.xml")
    assert merged and merged.not_run == [] and merged.passed == len(NAMES)
    assert _cases(tmp_path / "merged.xml") == whole


def test_shard_property_and_counts(cli, tmp_path):
    root = ET.parse(_shard(cli, tmp_path, 1, 4)).getroot()
    suite = root.find("testsuite")
    assert [(p.get("name"), p.get("value")) for p in suite.iter("property")] == [("dmlbits.shard", "1/4")]
    skipped = sum(1 for i in range(len(NAMES)) if i % 4 != 1)
    assert suite.get("skipped") == str(skipped) and suite.get("tests") == str(len(NAMES))


def test_filter_then_shard(cli, tmp_path):
    selected = [n for n in NAMES if "shl" in n]
    assert len(selected) >= 2
    cases = _cases(_shard(cli, tmp_path, 0, 2, "--filter", "shl"))
    assert set(cases) == set(selected)
    assert [n for n, k in cases.items() if k == "pass"] == selected[0::2]


def test_more_shards_than_cases_is_an_empty_pass(cli, tmp_path):
    p = cli("check", MANIFEST, "--shard", f"{len(NAMES)}/{len(NAMES) + 5}")
    assert p.returncode == 0 and b"0 passed, 0 failed" in p.stdout


@pytest.mark.parametrize("bad", ["3/3", "0/0", "1", "a/2", "-1/2", "1/2/3", "/2", ""])
def test_bad_shard_is_a_usage_error(cli, bad):
    p = cli("check", MANIFEST, "--shard", bad)
    assert p.returncode == 2, p.stdout + p.stderr
    assert b"--shard" in p.stderr


def test_missing_shard_is_named(cli, tmp_path):
    n = 3
    files = [_shard(cli, tmp_path, k, n) for k in (0, 2)]  # shard 1 never reported
    report = dmlbits.shards.merge_junit(files, tmp_path / "merged.xml")
    lost = [name for i, name in enumerate(NAMES) if i % n == 1]
    assert not report
    assert [c for _, c, _ in report.not_run] == lost and {s for _, _, s in report.not_run} == {"1/3"}
    assert report.passed == len(NAMES) - len(lost) and report.errors == len(lost)
    merged = _cases(tmp_path / "merged.xml")
    assert set(merged) == set(NAMES) and all(merged[c] == "error" for c in lost)
    root = ET.parse(tmp_path / "merged.xml").getroot()
    assert root.get("errors") == str(len(lost)) and root.get("tests") == str(len(NAMES))
    # The command line: summary, status 1, the lost cases by name.
    p = subprocess.run([sys.executable, "-m", "dmlbits.shards", "merge", "-o", tmp_path / "m2.xml", *files],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and f"{len(lost)} did not run" in p.stdout and f"NOT RUN {lost[0]} " in p.stdout


def test_merge_refuses_mixed_shard_counts_and_garbage(cli, tmp_path):
    a, b = _shard(cli, tmp_path, 0, 2), _shard(cli, tmp_path, 1, 3)
    with pytest.raises(ValueError, match="shard"):
        dmlbits.shards.merge_junit([a, b])
    (tmp_path / "junk.xml").write_text("not xml")
    with pytest.raises(ValueError, match="junk.xml"):
        dmlbits.shards.merge_junit([tmp_path / "junk.xml"])
