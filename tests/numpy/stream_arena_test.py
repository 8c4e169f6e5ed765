#!/usr/bin/python3
"""Streamed runs' chunk buffers (lib/src/run/stream.cpp, ChunkWriter): every slot's input scratch
and result are cut from one arena, from the heap while it needs less than 128 KiB and otherwise
whole 2 MiB ranges (allocate_buffer); a run on one thread has one slot, a run on two (halves: each thread
reads, computes and writes its own half of the chunks, from 16 MiB of output, when the streamed inputs are
regular files and the output a new file; else the pipeline, a second thread reading and computing, from 64 MiB
with one streamed input; popcount into a narrower type stays on one thread) two.
This runs the built binary at the operand sizes where those rules change (the last element count whose arena
stays on the heap and the first that is mapped; counts whose last buffer ends exactly at the arena's end; one
to four chunks; more chunks than slots; the last count kept on one thread and the first on two, for
`not` uint16, `and` uint32 and a streamed A beside a literal B only: 16 MiB files cost, and the unit tests
cover both splits at small sizes through StreamOptions)
for unary and binary operators, narrowing popcount, an input held in memory beside a streamed one
(big-endian, so converted, and a broadcast literal), standard input, on 1 and 2 threads, and
compares every output bit for bit with NumPy's result.

The arena rule is restated here (ARENA_*), as the differential test restates kStreamChunkBytes: a
change there must be mirrored so that these sizes still sit on its edges.
"""

import os
import subprocess
import sys

import numpy as np

import dmlbits_testlib as testlib

CHUNK_BYTES = 512 << 10       # kStreamChunkBytes
SLOTS = 2                     # kStreamSlots (runs on two threads; one slot otherwise)
HALVES_MIN_OUTPUT_BYTES = 16 << 20  # kHalvesMinOutputBytes: regular files, a smaller output stays on one thread
PIPELINE_MIN_OUTPUT_BYTES = 64 << 20  # kPipelineMinOutputBytes: the same where the run cannot be split
ARENA_MAPPED_FROM = 128 << 10  # kMappedBufferBytes (allocate_buffer maps the arena from here up)
ARENA_ALIGNMENT = 4096         # kArenaAlignment
LARGE = 2 << 20                # kLargeBufferBytes: a mapped arena is whole ranges of this

CHECKS = testlib.stderr_checks()
check = CHECKS.check


def round_up(n, to):
    return (n + to - 1) // to * to


def arena_needed(n, in_width, out_width, streamed_inputs, two_threads):
    """Bytes of one run's slot buffers for n elements, as ChunkWriter computes them."""
    chunk = CHUNK_BYTES // max(in_width, out_width)
    chunks = -(-n // chunk)
    slots = min(SLOTS, chunks) if two_threads else 1
    elements = min(chunk, n)
    per_slot = streamed_inputs * round_up(elements * in_width, ARENA_ALIGNMENT) + round_up(elements * out_width,
                                                                                            ARENA_ALIGNMENT)
    return slots * per_slot


def edge_counts(in_width, out_width, streamed_inputs, threads_edge=False, splittable=True):
    """Element counts on the rule's edges, each with what it tests; the edge of two threads (16 MiB
    of output, 64 MiB where the run cannot be split: standard input) only with threads_edge."""
    chunk = CHUNK_BYTES // max(in_width, out_width)
    first_two = -(-(HALVES_MIN_OUTPUT_BYTES if splittable else PIPELINE_MIN_OUTPUT_BYTES) // out_width)
    two = lambda n: (splittable or streamed_inputs < 2) and out_width >= in_width and n >= first_two
    need = lambda n: arena_needed(n, in_width, out_width, streamed_inputs, two(n))
    lo, hi = 1, chunk  # the last count on the heap: need(lo) < ARENA_MAPPED_FROM <= need(hi)
    assert need(lo) < ARENA_MAPPED_FROM <= need(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if need(mid) < ARENA_MAPPED_FROM else (lo, mid)
    cases = {"last heap arena": lo, "first mapped arena": hi}
    # A count whose last buffer ends on a page, and one more (a partial page past it).
    page = ARENA_ALIGNMENT // out_width
    cases["mapped, result ends on a page"] = round_up(hi, page)
    cases["mapped, a page and one element"] = round_up(hi, page) + 1
    for k in (1, 2, 3, 4):
        cases[f"{k} full chunk(s)"] = k * chunk
    cases["more chunks than slots, last short"] = 6 * chunk + 5
    if threads_edge:
        assert out_width >= in_width and (splittable or streamed_inputs == 1)
        cases["last count on one thread"] = first_two - 1
        cases["first count with a second thread (on --threads 2)"] = first_two
    # A count whose arena is exactly a whole number of 2 MiB ranges, if any below 16 chunks.
    for n in range(chunk, 16 * chunk + 1, chunk):
        if need(n) % LARGE == 0:
            cases[f"arena exactly {need(n) >> 20} MiB"] = n
            break
    return cases


def random_array(rng, dtype, n):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)


def popcount(a):
    bits = np.unpackbits(a.view(np.uint8)).reshape(*a.shape, a.dtype.itemsize * 8)
    return bits.sum(-1, dtype=np.uint8)


def run_case(tmp, what, args, want, stdin=None):
    out = os.path.join(tmp, "out.npy")
    if os.path.exists(out):
        os.remove(out)
    for threads in ("1", "2"):
        label = f"{what}, --threads {threads}: dmlbits {' '.join(os.path.basename(a) for a in args)}"
        with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
            r = subprocess.run([testlib.DMLBITS, *args, "-o", out, "--threads", threads, "--backend", "cpu"],
                               stdin=f, capture_output=True, text=True, timeout=120)
        if not check(r.returncode == 0, f"{label}: exit {r.returncode}: {r.stderr.strip()}"):
            continue
        got = np.load(out)
        check(got.dtype == want.dtype and got.shape == want.shape,
              f"{label}: {got.dtype}{got.shape}, NumPy gives {want.dtype}{want.shape}")
        if got.dtype == want.dtype and got.shape == want.shape:
            bad = np.flatnonzero(got.view(np.uint8).reshape(-1) != want.view(np.uint8).reshape(-1))
            check(bad.size == 0, f"{label}: {bad.size} bytes differ from NumPy's, the first at byte "
                                 f"{bad[0] if bad.size else 0}")


def main():
    missing = testlib.dmlbits_missing("stream_arena_test: set DMLBITS to the binary (ctest does)", need="executable")
    if missing is not None:
        return missing
    rng = np.random.default_rng(29)
    cases = 0
    with testlib.temp_dir() as tmp:
        a_path, b_path = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
        for op, dtype, out_dtype in (("and", np.uint32, None), ("and", np.uint8, None), ("xor", np.uint64, None),
                                     ("not", np.uint16, None), ("popcount", np.uint32, np.uint8),
                                     ("popcount", np.uint64, np.uint8)):
            in_w = np.dtype(dtype).itemsize
            out_w = np.dtype(out_dtype or dtype).itemsize
            binary = op in ("and", "xor")
            edge = (op, dtype) in (("not", np.uint16), ("and", np.uint32))  # the edge of two threads: 16 MiB
            for what, n in edge_counts(in_w, out_w, 2 if binary else 1, threads_edge=edge).items():
                a = random_array(rng, dtype, n)
                np.save(a_path, a)
                if binary:
                    b = random_array(rng, dtype, n)
                    np.save(b_path, b)
                    want = a & b if op == "and" else a ^ b
                    run_case(tmp, f"{op} {np.dtype(dtype).name} n={n} ({what})", [op, a_path, b_path], want)
                else:
                    want = ~a if op == "not" else popcount(a)
                    run_case(tmp, f"{op} {np.dtype(dtype).name} n={n} ({what})", [op, a_path], want)
                cases += 1
        # Inputs held in memory beside a streamed one need no scratch: the arena has a hole in
        # each slot. B big-endian (converted in memory), then B a broadcast literal; and A from
        # standard input (read in order, into its scratch).
        for what, n in edge_counts(4, 4, 1, threads_edge=True).items():
            a = random_array(rng, np.uint32, n)
            np.save(a_path, a)
            if n * 4 < HALVES_MIN_OUTPUT_BYTES // 2:  # the literal alone at the edge of two threads
                b = random_array(rng, np.uint32, n)
                np.save(b_path, b.astype(">u4"))
                run_case(tmp, f"and uint32 n={n}, B big-endian ({what})", ["and", a_path, b_path], a & b)
                cases += 1
            run_case(tmp, f"and uint32 n={n}, B literal ({what})", ["and", a_path, "0x0ff00ff0"],
                     a & np.uint32(0x0FF00FF0))
            cases += 1
        for what, n in edge_counts(4, 4, 2).items():
            a = random_array(rng, np.uint32, n)
            b = random_array(rng, np.uint32, n)
            np.save(a_path, a)
            np.save(b_path, b)
            run_case(tmp, f"or uint32 n={n}, A on standard input ({what})", ["or", "-", b_path], a | b, stdin=a_path)
            cases += 1

    if CHECKS.failures:
        print(f"{len(CHECKS.failures)} of {CHECKS.count} checks failed", file=sys.stderr)
        return 1
    print(f"{CHECKS.count} checks passed over {cases} operand sizes, each on 1 and 2 threads")
    return 0


if __name__ == "__main__":
    sys.exit(main())
