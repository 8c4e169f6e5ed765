// `dmlbits check MANIFEST.json`: many golden cases in one run.
//
// Manifest: {"root": "dir" (optional; relative to the manifest, default its folder),
//            "defaults": {case fields} (optional),
//            "cases": [{"name", "op", "inputs": [path or literal, ...]
//                       (or "expression": text, "inputs": {name: path or literal, ...}),
//                       "feature_level", "out_dtype", "dtype", "shift_overflow", "backend",
//                       and either "expected": golden path  or  "expect_error": error name
//                       ("invalid-input", ...) with optional "expect_message": substring}]}
// File inputs and goldens resolve against root; literals stay literals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dmlbits/request.hpp"
#include "dmlbits/tensor.hpp"

// Bit-exact comparison of a result with an expected (golden) tensor, with a report a person can
// act on: dtype and shape differences first, then the differing elements with their
// multi-dimensional index, both values in decimal and hex, and the differing bits.
namespace dmlbits {

struct ElementMismatch {
  std::uint64_t flat_index = 0;
  std::vector<std::uint64_t> index;  // multi-dimensional, C order
  std::uint64_t expected = 0;        // bits, zero-extended
  std::uint64_t actual = 0;
};

struct CompareReport {
  DType expected_dtype{}, actual_dtype{};
  Shape expected_shape, actual_shape;
  bool dtype_differs = false;
  bool shape_differs = false;
  std::uint64_t elements = 0;           // compared (0 when dtype or shape differ)
  std::uint64_t differing = 0;          // elements whose bits differ
  std::vector<ElementMismatch> listed;  // the first `max_listed` differing elements

  bool equal() const { return !dtype_differs && !shape_differs && differing == 0; }
};

// Compares bit patterns (so NaN == NaN when the payload is the same, and -0.0 != 0.0).
CompareReport compare_tensors(const TensorView& expected, const TensorView& actual, std::size_t max_listed);

// The words for a comparison, for the faces (--expect, `check`'s report, JUnit, Python's
// assert_bits_equal): `label` names the golden file. At most `max_shown` of the listed elements
// are shown (a report listed in full for JSON is shown as --show asks). The library's own runs
// return the CompareReport (CaseResult::comparison), never this text.
std::string compare_text(const CompareReport& r, const std::string& label,
                         std::size_t max_shown = static_cast<std::size_t>(-1));
// The --report-json document (the one writer of it): {"equal", "dtype", "shape", "elements",
// "differing", "mismatches": [...]}, indented, with a final newline.
std::string compare_report_json(const CompareReport& r);

// The outcome of checking a result against a golden file.
struct GoldenCheck {
  enum class Outcome { matched, differed, updated };
  Outcome outcome = Outcome::matched;
  CompareReport report;  // empty when the golden was missing or unreadable and was created
  bool created = false;  // updated, and there was no golden file before
};

// Reads a golden file as check_golden does: .npy, or JSON that names its data type (else
// OptionError(OptionKey::dtype, OptionRule::not_for_golden), Errc::invalid_input: a data type given
// for the inputs is never the golden's). Errors carry the context "reading 'PATH'".
Tensor read_golden_file(const std::string& path);

// Compares `actual` with the tensor in the golden file `path`. With `update`, a golden that
// differs, is missing or cannot be read is (re)written with `actual`, atomically, in the
// golden's own format (or its extension's for a new file; .npy if it has none). Without
// `update`, an unreadable golden throws its read error. Shared by --expect and `dmlbits check`
// (which updates all its goldens or none: run_manifests).
GoldenCheck check_golden(const TensorView& actual, const std::string& path, std::size_t max_listed, bool update);

}  // namespace dmlbits

namespace dmlbits {

struct CheckOptions {
  std::optional<BackendKind> backend;  // overrides every case's backend when set
  std::string isa;                     // cases on the cpu and auto backends use this instruction set
  std::string adapter;  // cases on the d3d12, directml and auto backends run on this adapter (index or name part)
  std::string filter;   // run only cases whose name contains this
  bool update = false;  // rewrite goldens from the results
  unsigned jobs = 0;    // parallel cases; 0 = the number of CPUs
  std::size_t max_listed = 10;
  // Sharding (--shard K/N): of the cases the filter selects in a manifest, the i-th (0-based,
  // manifest order) runs in shard i % shard_count; this run is shard shard_index (0-based).
  std::size_t shard_index = 0;
  std::size_t shard_count = 1;
};

struct CaseResult {
  std::string name;
  // not_run: an interrupt (request_interrupt: SIGINT, SIGTERM) stopped the check before this
  // case finished, or before it started; the case neither passed nor failed.
  enum class Outcome { pass, fail, error, not_run } outcome = Outcome::pass;
  std::string detail;  // one line: why it failed or what was updated; "" for a mismatch (comparison)
  std::optional<CompareReport> comparison;  // a mismatch with the golden: the comparison, as data
  double seconds = 0;
  bool updated = false;  // the golden file was rewritten
  std::string golden;    // resolved golden path, if any
};

// The words for a case, from CaseResult's data: case_detail is its one line (its detail, or a
// mismatch's first line: "mismatch with 'g.npy': 1 of 2 elements differ (UINT8)"), case_report
// the whole comparison (compare_text, with the golden's path in quotes), "" when there is none.
std::string case_detail(const CaseResult& c);
std::string case_report(const CaseResult& c);

// A case the filter selects that runs in another shard: JUnit lists it as skipped, so that a
// merge of the shards' reports knows every case and can name those whose shard did not report.
struct OtherShardCase {
  std::string name;
  std::size_t shard = 0;
};

struct CheckSummary {
  std::string manifest;
  std::vector<CaseResult> cases;  // in manifest order
  std::vector<OtherShardCase> other_shards;
  std::size_t shard_index = 0, shard_count = 1;
  double seconds = 0;
  // An interrupt stopped the check: the cases it did not finish are not_run, and no golden was
  // updated (run_manifests).
  bool interrupted = false;
  std::size_t passed() const;
  std::size_t failed() const;   // fail + error
  std::size_t not_run() const;  // not_run: only in an interrupted check
};

// Throws Errc::usage (or Errc::unsupported for an instruction set this CPU lacks) for options
// no case could run with: an unknown instruction set, an instruction set or adapter with a
// --backend that has no choice of one, and DMLBITS_ISA or DMLBITS_THREADS values the operator
// commands refuse (prepare_request's rules). These are the command line's mistakes, refused
// before any case runs, not failures of every case.
void check_check_options(const CheckOptions& options);

// One case of a manifest, validated and resolved (file names against the root).
struct CheckCase {
  std::string name;
  std::optional<PreparedRequest> request;  // always set: the case's operation, output none, result kept
  std::string golden;                      // resolved path, or ""
  std::string expect_error;                // error name, or ""
  std::string expect_message;              // substring, or ""
};

struct Manifest {
  std::string path;
  std::size_t total = 0;                     // cases in the manifest
  std::vector<CheckCase> cases;              // those the filter and the shard select, in manifest order
  std::vector<OtherShardCase> other_shards;  // those the filter selects for other shards
};

// Reads and validates a whole manifest without running anything. Throws Errc::invalid_input for
// a malformed one (JSON syntax errors with their line and column, unknown or duplicate keys,
// values of the wrong kind, options the case's operator does not take, no cases at all), naming
// the case and the key; Errc::io if it cannot be read.
Manifest load_manifest(const std::string& manifest_path, const CheckOptions& options);

// Throws Errc::usage when --adapter is given without --backend and no selected case of these
// manifests runs on a backend that takes an adapter (it would apply to none).
void check_adapter_applies(std::span<const Manifest> manifests, const CheckOptions& options);

// check_file_uses() over the manifests, the file inputs and goldens of their selected cases
// (goldens written with options.update) and `also` (the command's own files: --junit): throws
// Errc::usage when a golden to rewrite is a case's input, another case's golden or a manifest,
// or when one of `also` that is written is any of them.
void check_case_files(std::span<const Manifest> manifests, const CheckOptions& options, std::vector<FileUse> also = {});

// Runs the cases of loaded manifests, one summary each; case failures are results. With
// options.update, check_case_files() first (nothing runs if a golden to rewrite is an input),
// then the goldens to rewrite are prepared while the cases run and all take their
// names at the end, after every case: none is written if one cannot be (Errc::io, "... (no
// golden file was updated)"), and a kill at any moment leaves each golden old or new.
// An interrupt (request_interrupt) stops the check: no case starts after it, the cases it cut
// short are not_run, every summary says `interrupted`, and no golden takes its new content (the
// interrupted check is a result, not an error: the face says so and exits as interrupted).
std::vector<CheckSummary> run_manifests(std::span<const Manifest> manifests, const CheckOptions& options);
// run_manifests for one manifest.
CheckSummary run_manifest(const Manifest& manifest, const CheckOptions& options);

// load_manifest and run_manifest.
CheckSummary run_check(const std::string& manifest_path, const CheckOptions& options);

// JUnit XML, as CI systems read it: one document, a testsuite per manifest, a testcase per case.
// A sharded run (shard_count > 1) adds the property dmlbits.shard = "K/N" to each testsuite and
// lists the other shards' cases as <skipped message="in shard J/N"/>.
std::string junit_xml(std::span<const CheckSummary> summaries);

}  // namespace dmlbits
