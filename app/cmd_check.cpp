// dmlbits check MANIFEST.json: run many golden cases, print a line each and a summary.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/check.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "dmlbits/request.hpp"
#include "dmlbits/tensor.hpp"

namespace dmlbits::app {
namespace {

struct CheckCmdOptions {
  std::vector<std::string> manifests;
  std::string junit;
  std::string shard;
  CheckOptions check;
  bool verbose = false;
  bool sync = false;
  CLI::Option* shard_option = nullptr;
};

// "K/N", syntax only: the rule (0 <= K < N) is check_check_options's.
void parse_shard(const std::string& text, CheckOptions& check) {
  const auto slash = text.find('/');
  auto number = [&](std::string_view part) {
    std::size_t v = 0;
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string_view::npos)
      throw Error(Errc::usage, fmt::format("--shard '{}': expected K/N, two whole numbers (0/4 ... 3/4)", text));
    for (char c : part) v = v * 10 + static_cast<std::size_t>(c - '0');
    return v;
  };
  if (slash == std::string::npos)
    throw Error(Errc::usage, fmt::format("--shard '{}': expected K/N, two whole numbers (0/4 ... 3/4)", text));
  check.shard_index = number(std::string_view(text).substr(0, slash));
  check.shard_count = number(std::string_view(text).substr(slash + 1));
}

void run_check_cmd(CheckCmdOptions& o) {
  if (o.shard_option->count() > 0) parse_shard(o.shard, o.check);
  // The command line first, as for the operator commands: its mistakes are usage errors
  // before any case runs, not a failure of every case.
  const CheckOptions& options = o.check;
  check_check_options(options);
  if (std::count(o.manifests.begin(), o.manifests.end(), "-") > 1)
    throw Error(Errc::usage, "standard input ('-') can be given as one manifest only");
  // --junit must not name a manifest (checked before any is read), nor any case's input or
  // golden (checked once the manifests are read, before any case runs).
  std::vector<FileUse> uses;
  if (!o.junit.empty()) uses.push_back({o.junit, "--junit", true});
  std::vector<FileUse> manifest_uses = uses;
  for (const auto& m : o.manifests) manifest_uses.push_back({m, "manifest", false});
  check_file_uses(manifest_uses);
  set_sync_outputs(o.sync);
  if (!o.junit.empty()) check_output_path(o.junit);
  // Every manifest is read and validated before any case runs.
  std::vector<Manifest> manifests;
  std::size_t selected = 0;
  for (const auto& m : o.manifests) {
    manifests.push_back(load_manifest(m, options));
    // A shard may hold no case (more shards than cases); a filter that selects none is a typo.
    selected += manifests.back().cases.size() + manifests.back().other_shards.size();
  }
  // (run_manifests checks the goldens of --update again, for its other callers.)
  if (!o.junit.empty() || options.update) check_case_files(manifests, options, uses);
  // The case lines go to standard error when standard output carries the JUnit XML.
  std::ostream& out = o.junit == "-" ? std::cerr : std::cout;
  // A filter that selects nothing would pass "0 passed": most likely a typo, which CI must see.
  if (selected == 0)
    throw Error(Errc::usage, fmt::format("--filter '{}' matches no case in {}", options.filter,
                                         o.manifests.size() == 1 ? quote_path(o.manifests[0]) : "the manifests"));
  check_adapter_applies(manifests, options);
  // --update: every golden must be writable before any case runs (status 5, nothing written).
  if (options.update)
    for (const auto& m : manifests)
      for (const auto& c : m.cases)
        if (!c.golden.empty()) check_output_path(c.golden);
  std::size_t failed = 0, total = 0, updated = 0, not_run = 0;
  std::vector<CheckSummary> summaries = run_manifests(manifests, options);
  const bool interrupted = !summaries.empty() && summaries.front().interrupted;
  for (const auto& s : summaries) {
    for (const auto& c : s.cases) {
      // An interrupted check lists the cases it finished; the summary counts the others.
      if (c.outcome == CaseResult::Outcome::not_run) continue;
      const char* tag = c.outcome == CaseResult::Outcome::pass   ? (c.updated ? "UPDATED" : "ok")
                        : c.outcome == CaseResult::Outcome::fail ? "FAIL"
                                                                 : "ERROR";
      out << fmt::format("{:<8}{}", tag, c.name);
      const std::string detail = case_detail(c), report = case_report(c);
      if (!detail.empty() && (c.outcome != CaseResult::Outcome::pass || c.updated || interrupted))
        out << ": " << detail;
      out << '\n';
      if (!report.empty() && (o.verbose || c.outcome != CaseResult::Outcome::pass)) {
        // The full report, indented under its case, skipping the line already shown.
        const auto body = report.substr(report.find('\n') + 1);
        out << body;
      }
      updated += c.updated;
    }
    failed += s.failed();
    not_run += s.not_run();
    total += s.cases.size();
  }
  if (interrupted) {
    // Not a mismatch: the check did not finish. No golden changed and no --junit file is
    // written (an interrupted command leaves no output file); the status is 130.
    out << fmt::format("interrupted: {} passed, {} failed, {} not run{}\n", total - failed - not_run, failed, not_run,
                       options.update ? "; no golden file was updated" : "");
    out.flush();
    throw Error(Errc::interrupted, fmt::format("interrupted after {} of {} cases", total - not_run, total));
  }
  out << fmt::format("{} passed, {} failed", total - failed, failed);
  if (updated) out << fmt::format(", {} golden file{} updated", updated, updated == 1 ? "" : "s");
  out << '\n';
  if (!o.junit.empty()) write_text_file(o.junit, junit_xml(summaries));
  if (failed) throw Error(Errc::mismatch, fmt::format("{} of {} cases failed", failed, total));
}

void setup_check(CommandSetup* sub) {
  auto opt = std::make_shared<CheckCmdOptions>();
  sub->add_option("manifests", opt->manifests, "Manifest files (JSON)")->required();
  sub->add_option("--junit", opt->junit, "Write the results as JUnit XML to FILE")->check(file_name_validator());
  sub->add_flag("--update", opt->check.update,
                "Rewrite golden files from the results (atomically) and say which changed");
  sub->add_option("-j,--jobs", opt->check.jobs, "Cases to run in parallel (default: the number of CPUs)")
      ->type_name("N")
      ->check(count_validator());
  sub->add_option("--filter", opt->check.filter, "Run only cases whose name contains TEXT");
  opt->shard_option =
      sub->add_option("--shard", opt->shard,
                      "Run shard K of N (0-based): the i-th selected case of each manifest runs in shard i mod N")
          ->type_name("K/N");
  sub->add_parsed_option(
      "--backend", [opt](const std::string& s) { opt->check.backend = parse_backend_option(s); },
      "Run every case on this backend");
  sub->add_parsed_option(
      "--isa", [opt](const std::string& s) { opt->check.isa = parse_isa_option(s); },
      "CPU backend: use this instruction set");
  sub->add_parsed_option(
      "--adapter",
      [opt](const std::string& s) {
        check_adapter_option(s);
        opt->check.adapter = s;
      },
      [] { return adapter_backends_text() + ": run on this adapter, an index or part of its name"; });
  sub->add_option("--show", opt->check.max_listed, "List at most N differing elements per case")
      ->type_name("N")
      ->check(count_validator())
      ->capture_default_str();
  sub->add_flag("--sync", opt->sync, "Flush the updated goldens and --junit's file to the disk before exiting (fsync)");
  sub->add_flag("-v,--verbose", opt->verbose, "Print every report");
  sub->final_callback([opt] { run_check_cmd(*opt); });
}

}  // namespace

Command check_command() {
  return {"check", {}, "Run the golden cases of one or more manifests (see dmlbits(1), CHECK MANIFESTS)", setup_check};
}

}  // namespace dmlbits::app
