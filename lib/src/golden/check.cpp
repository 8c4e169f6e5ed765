#include "dmlbits/check.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare.hpp"
#include "operand.hpp"
#include "make_backend.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/request.hpp"
#include "io.hpp"
#include "dmlbits/timing.hpp"
#include "files.hpp"
#include "thread_rule.hpp"

namespace dmlbits {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using CaseSpec = CheckCase;

[[noreturn]] void manifest_fail(std::string msg) { throw Error(Errc::invalid_input, std::move(msg)); }

std::string get_string(const json& c, const char* key, const std::string& fallback = {}) {
  if (!c.contains(key)) return fallback;
  if (!c[key].is_string()) manifest_fail(fmt::format("\"{}\" must be a string", key));
  return c[key].get<std::string>();
}

// The manifest face's words for an option's refusal (error.hpp). A case's own keys are
// named as the manifest writes them, quoted ("out_dtype"), with their values in double quotes;
// the options of `check`'s command line (--isa, --adapter) and the run's own (--threads) keep
// the command line's names, as the man page shows them.
bool is_case_key(OptionKey key) {
  return key == OptionKey::backend || key == OptionKey::dtype || key == OptionKey::out_dtype ||
         key == OptionKey::feature_level || key == OptionKey::shift_overflow;
}

std::string quoted_key(OptionKey key) { return fmt::format("\"{}\"", option_keyword(key)); }

std::string flag(OptionKey key) {
  std::string flag = fmt::format("--{}", option_keyword(key));
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

std::string manifest_option_text(const OptionError& e) {
  if (!is_case_key(e.key())) return option_error_text(e, {&flag, &flag, '\''});
  const std::string context = e.context().empty() ? std::string() : e.context() + ": ";
  const std::string key = quoted_key(e.key()), given = fmt::format("\"{}\"", e.value());
  if (e.rule() == OptionRule::unknown_name) {
    if (e.key() == OptionKey::feature_level) return fmt::format("{}{}: unknown feature level {}", context, key, given);
    if (e.key() == OptionKey::dtype || e.key() == OptionKey::out_dtype)
      return fmt::format("{}{}: unknown data type {}", context, key, given);
    if (e.key() == OptionKey::shift_overflow)
      return fmt::format("{}{} must be {}", context, key, shift_overflow_names_help("\""));
  }
  return option_error_text(e, {&quoted_key, &quoted_key, '"'});
}

// An error of a case as the manifest face words it.
std::string case_error_text(const Error& e) {
  const auto* option = dynamic_cast<const OptionError*>(&e);
  return option ? manifest_option_text(*option) : std::string(e.what());
}

// The keys a case may have; defaults may hold all of them but "name".
const std::set<std::string>& case_keys() {
  static const std::set<std::string> keys{
      "name",           "op",      "expression", "inputs",       "feature_level",  "out_dtype", "dtype",
      "shift_overflow", "backend", "expected",   "expect_error", "expect_message", "comment"};
  return keys;
}

CaseSpec parse_case(const json& defaults, const json& c, std::size_t index, const fs::path& root,
                    const CheckOptions& options) {
  CaseSpec cs;
  if (!c.is_object()) manifest_fail(fmt::format("cases[{}] is not an object", index));
  for (auto& [k, v] : c.items())
    if (!case_keys().count(k)) manifest_fail(fmt::format("cases[{}]: unknown key \"{}\"", index, k));
  json merged = defaults;
  for (auto& [k, v] : c.items()) merged[k] = v;
  cs.name = with_context(fmt::format("cases[{}]", index),
                         [&] { return get_string(c, "name", fmt::format("case{}", index)); });
  const auto context = fmt::format("case '{}'", cs.name);
  with_context(context, [&] {
    try {
      // A case is one operator ("op", "inputs": [...]) or an expression of them ("expression",
      // "inputs": {name: operand}); the case's own choice overrides the defaults' other one.
      if (c.contains("op") && !c.contains("expression")) merged.erase("expression");
      if (c.contains("expression") && !c.contains("op")) merged.erase("op");
      if (merged.contains("op") == merged.contains("expression"))
        manifest_fail(
            "give exactly one of \"op\" (an operator, \"inputs\" an array) and \"expression\" (\"inputs\" "
            "an object of its names)");
      const bool expression = merged.contains("expression");
      OperationRequest request;
      if (expression) {
        request.expression = get_string(merged, "expression");
        if (request.expression.empty()) manifest_fail("\"expression\" is empty");
      } else {
        const OpInfo* op = find_op(get_string(merged, "op"));
        if (!op) manifest_fail(fmt::format("\"op\": unknown op \"{}\"", get_string(merged, "op")));
        request.op = op->kind;
        // Options the operator does not take are mistakes in a case (prepare_request refuses
        // them); in defaults they apply to the cases whose operator takes them.
        const auto applies = [&](const char* key) {
          if (std::string_view(key) == "out_dtype") return !op->output_dtype_is_input_dtype();
          return op->shift;  // shift_overflow
        };
        for (const char* key : {"out_dtype", "shift_overflow"})
          if (!c.contains(key) && !applies(key)) merged.erase(key);
      }
      // A string is an operand as on the command line; an array is an array literal. A number
      // (1.5 would become a file name), a boolean, an object or null is a mistake.
      const auto operand = [&](const json& in, const std::string& where) {
        if (!in.is_string() && !in.is_array())
          manifest_fail(
              fmt::format("\"inputs\"{}: {} is not an operand: give a file name or a literal as a string "
                          "(\"5\", \"0xff\") or an array ([1.5])",
                          where, in.dump()));
        std::string text = in.is_string() ? in.get<std::string>() : in.dump();
        if (text == "-") manifest_fail("standard input cannot be an operand in a manifest");
        if (classify_operand(text) == OperandKind::file)
          text = path_to_utf8((root / path_from_utf8(text)).lexically_normal());
        request.operands.emplace_back(std::move(text));
      };
      if (expression) {
        if (!merged.contains("inputs") || !merged["inputs"].is_object())
          manifest_fail(
              "\"inputs\" must be an object of the expression's names and their operands ({\"a\": \"x.npy\"})");
        for (const auto& [name, in] : merged["inputs"].items()) {
          operand(in, fmt::format("[\"{}\"]", name));
          request.names.push_back(name);
        }
      } else {
        if (!merged.contains("inputs") || !merged["inputs"].is_array()) manifest_fail("\"inputs\" must be an array");
        std::size_t i = 0;
        for (const auto& in : merged["inputs"]) operand(in, fmt::format("[{}]", i++));
      }
      if (auto l = get_string(merged, "feature_level"); !l.empty()) request.level = parse_feature_level_option(l);
      for (auto [key, target] :
           {std::pair{OptionKey::out_dtype, &request.out_dtype}, std::pair{OptionKey::dtype, &request.dtype}})
        if (auto d = get_string(merged, option_keyword(key).data()); !d.empty()) *target = parse_dtype_option(d, key);
      if (merged.contains("shift_overflow"))  // else the default mode
        request.shift_overflow = parse_shift_overflow_option(get_string(merged, "shift_overflow"));
      // A manifest's cases run on the cpu backend unless they say otherwise.
      const BackendKind backend = parse_backend_option(get_string(merged, "backend", "cpu"));
      request.backend = options.backend.value_or(backend);
      // --isa and --adapter apply to the cases whose backend takes them, and to no others.
      if (backend_uses_cpu(*request.backend) && *request.backend != BackendKind::cpu_reference)
        request.isa = options.isa;
      if (backend_uses_adapter(*request.backend) && !options.adapter.empty()) request.adapter = options.adapter;
      request.output = OutputKind::none;
      request.keep_result = true;
      cs.request = prepare_request(std::move(request));
    } catch (const OptionError& e) {
      // A case's own key is a mistake in the manifest (status 3); the command line's options stay usage errors.
      throw Error(is_case_key(e.key()) ? Errc::invalid_input : e.code(), manifest_option_text(e));
    } catch (const Error& e) {
      // The request's other refusals (an operator given the wrong count of inputs) are the
      // case's: the manifest is at fault (status 3), not the command line.
      if (e.code() != Errc::usage) throw;
      throw Error(Errc::invalid_input, e.what());
    }
    if (auto g = get_string(merged, "expected"); !g.empty())
      cs.golden = path_to_utf8((root / path_from_utf8(g)).lexically_normal());
    cs.expect_error = get_string(merged, "expect_error");
    cs.expect_message = get_string(merged, "expect_message");
    if (cs.golden.empty() == cs.expect_error.empty())
      manifest_fail("give exactly one of \"expected\" and \"expect_error\"");
    // A message to match with a golden to match would be ignored: refused as misplaced keys are.
    if (merged.contains("expect_message") && cs.expect_error.empty())
      manifest_fail("\"expect_message\" needs \"expect_error\" (a case with \"expected\" reports no error to match)");
    if (!cs.expect_error.empty()) {
      bool known = false;
      for (const auto& e : errc_table()) known = known || e.name == cs.expect_error;
      if (!known) manifest_fail(fmt::format("\"expect_error\": unknown error name \"{}\"", cs.expect_error));
    }
  });
  return cs;
}

// Parses a manifest's text: a syntax error says where (line and column), and a key given twice
// in one object, which JSON parsers silently resolve to one of the values, is refused.
json parse_manifest_json(std::string_view text) {
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;
    std::size_t index = 0;
  };
  std::vector<Frame> stack;
  std::string duplicate;        // the first key given twice
  std::string duplicate_where;  // the path of its object: "cases[2]", "defaults", ""
  std::optional<std::size_t> duplicate_case;
  const auto callback = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        stack.push_back({true, {}, {}, 0});
        break;
      case json::parse_event_t::array_start:
        stack.push_back({false, {}, {}, 0});
        break;
      case json::parse_event_t::key: {
        Frame& f = stack.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second && duplicate.empty()) {
          duplicate = f.key;
          for (std::size_t i = 0; i + 1 < stack.size(); ++i)
            duplicate_where +=
                stack[i].object ? (i == 0 ? "" : ".") + stack[i].key : fmt::format("[{}]", stack[i].index);
          if (stack.size() == 3 && stack[0].key == "cases") duplicate_case = stack[1].index;
        }
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        stack.pop_back();
        if (!stack.empty() && !stack.back().object) ++stack.back().index;
        break;
      case json::parse_event_t::value:
        if (!stack.empty() && !stack.back().object) ++stack.back().index;
        break;
    }
    return true;
  };
  json m;
  try {
    m = json::parse(text, callback, true);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 14: syntax error ..."
    std::string what = e.what();
    const auto at = what.find(" at line ");
    manifest_fail("invalid JSON" + (at != std::string::npos ? what.substr(at) : ": " + what));
  }
  if (!duplicate.empty()) {
    std::string where = duplicate_where.empty() ? std::string("the manifest") : duplicate_where;
    if (duplicate_case && m.contains("cases") && m["cases"].is_array() && *duplicate_case < m["cases"].size()) {
      const json& c = m["cases"][*duplicate_case];
      if (c.is_object() && c.contains("name") && c["name"].is_string())
        where = fmt::format("case '{}'", c["name"].get<std::string>());
    }
    manifest_fail(fmt::format("{}: key \"{}\" is given twice", where, duplicate));
  }
  return m;
}

// A case's new golden, prepared and not yet named, or why it could not be written.
struct GoldenUpdate {
  std::shared_ptr<OutputFile> file;
  std::string failure;  // the Errc::io message
};

CaseResult run_case(const CaseSpec& cs, const CheckOptions& options, GoldenUpdate& update) {
  CaseResult r;
  r.name = cs.name;
  r.golden = cs.golden;
  Stopwatch sw;
  try {
    RunResult result = run(*cs.request);
    if (!cs.expect_error.empty()) {
      r.outcome = CaseResult::Outcome::fail;
      r.detail = fmt::format("expected error '{}', but the run succeeded", cs.expect_error);
    } else {
      GoldenCheck golden;
      std::unique_ptr<OutputFile> pending;
      try {
        golden = check_golden_deferred(result.result->view(), cs.golden, options.max_listed, options.update, pending);
      } catch (const Error& e) {
        // With --update only writing can fail: the whole update is then called off.
        if (options.update && e.code() == Errc::io) update.failure = e.what();
        throw;
      }
      update.file = std::move(pending);
      if (golden.outcome == GoldenCheck::Outcome::updated) {
        r.updated = true;
        r.detail = fmt::format("{} {}", golden.created ? "created" : "updated", cs.golden);
      } else if (golden.outcome == GoldenCheck::Outcome::differed) {
        r.outcome = CaseResult::Outcome::fail;
        r.comparison = std::move(golden.report);
      }
    }
  } catch (const Error& e) {
    const std::string name(errc_info(e.code()).name);
    if (e.code() == Errc::interrupted) {
      // Stopped by the interrupt that stops the whole check: neither a pass nor a failure.
      r.outcome = CaseResult::Outcome::not_run;
      r.detail = "interrupted";
    } else if (cs.expect_error.empty()) {
      r.outcome = CaseResult::Outcome::error;
      r.detail = fmt::format("{} error: {}", name, case_error_text(e));
    } else if (name != cs.expect_error) {
      r.outcome = CaseResult::Outcome::fail;
      r.detail = fmt::format("expected error '{}', got '{}': {}", cs.expect_error, name, case_error_text(e));
    } else if (!cs.expect_message.empty() && case_error_text(e).find(cs.expect_message) == std::string::npos) {
      r.outcome = CaseResult::Outcome::fail;
      r.detail = fmt::format("error message lacks \"{}\": {}", cs.expect_message, case_error_text(e));
    }
  } catch (const std::exception& e) {
    r.outcome = CaseResult::Outcome::error;
    r.detail = fmt::format("internal error: {}", e.what());
  }
  r.seconds = sw.seconds();
  return r;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') out += '?';
        else out += c;
    }
  }
  return out;
}

}  // namespace

std::size_t CheckSummary::passed() const {
  std::size_t n = 0;
  for (const auto& c : cases) n += c.outcome == CaseResult::Outcome::pass;
  return n;
}

std::size_t CheckSummary::failed() const { return cases.size() - passed() - not_run(); }

std::size_t CheckSummary::not_run() const {
  std::size_t n = 0;
  for (const auto& c : cases) n += c.outcome == CaseResult::Outcome::not_run;
  return n;
}

void check_check_options(const CheckOptions& options) {
  // The backend every case would take, or the CPU's for --isa alone (an unknown set is refused
  // whatever the cases' backends); --adapter without --backend is check_adapter_applies's.
  check_backend_choice(options.backend.value_or(BackendKind::cpu), options.isa,
                       options.backend ? options.adapter : std::string(), std::nullopt);
  if (options.shard_count == 0 || options.shard_index >= options.shard_count)
    throw OptionError(OptionKey::shard, OptionRule::out_of_range,
                      fmt::format("{}/{}", options.shard_index, options.shard_count));
}

void check_adapter_applies(std::span<const Manifest> manifests, const CheckOptions& options) {
  if (options.adapter.empty() || options.backend) return;
  for (const auto& m : manifests)
    for (const auto& c : m.cases)
      if (backend_uses_adapter(c.request->backend())) return;
  throw OptionError(OptionKey::adapter, OptionRule::applies_to_none, options.adapter,
                    manifests.size() == 1 ? quote_path(manifests[0].path) : std::string("the manifests"),
                    adapter_backend_names());
}

Manifest load_manifest(const std::string& manifest_path, const CheckOptions& options) {
  Manifest out;
  out.path = manifest_path;
  with_context(fmt::format("reading manifest {}", quote_path(manifest_path)), [&] {
    InputBytes in = InputBytes::open(manifest_path);
    const std::string_view text(reinterpret_cast<const char*>(in.bytes().data()), in.bytes().size());
    json m = parse_manifest_json(text);
    if (!m.is_object() || !m.contains("cases") || !m["cases"].is_array())
      manifest_fail("a manifest is an object with a \"cases\" array");
    fs::path root = path_from_utf8(manifest_path).parent_path();
    if (m.contains("root")) {
      if (!m["root"].is_string()) manifest_fail("\"root\" must be a string");
      root /= path_from_utf8(m["root"].get<std::string>());
    }
    const json defaults = m.value("defaults", json::object());
    if (!defaults.is_object()) manifest_fail("\"defaults\" must be an object");
    for (auto& [k, v] : defaults.items())
      if (!case_keys().count(k) || k == "name") manifest_fail(fmt::format("defaults: unknown key \"{}\"", k));
    // A manifest that runs nothing passes nothing: an empty "cases" is a mistake, not success.
    if (m["cases"].empty()) manifest_fail("\"cases\" is empty: the manifest has no cases to run");
    std::set<std::string> names;
    std::size_t selected = 0;
    out.total = m["cases"].size();
    for (std::size_t i = 0; i < m["cases"].size(); ++i) {
      CaseSpec cs = parse_case(defaults, m["cases"][i], i, root, options);
      if (!names.insert(cs.name).second) manifest_fail(fmt::format("duplicate case name '{}'", cs.name));
      if (!options.filter.empty() && cs.name.find(options.filter) == std::string::npos) continue;
      const std::size_t shard = options.shard_count > 1 ? selected++ % options.shard_count : 0;
      if (shard == options.shard_index) out.cases.push_back(std::move(cs));
      else out.other_shards.push_back({cs.name, shard});
    }
  });
  return out;
}

void check_case_files(std::span<const Manifest> manifests, const CheckOptions& options, std::vector<FileUse> also) {
  std::vector<FileUse> uses = std::move(also);
  for (const auto& m : manifests) uses.push_back({m.path, "manifest", false});
  for (const auto& m : manifests)
    for (const auto& c : m.cases) {
      for (const Operand& in : c.request->request().operands) {
        const auto* text = std::get_if<std::string>(&in);
        if (text != nullptr && classify_operand(*text) == OperandKind::file)
          uses.push_back({*text, fmt::format("case '{}' input", c.name), false});
      }
      if (!c.golden.empty()) uses.push_back({c.golden, fmt::format("case '{}' golden", c.name), options.update});
    }
  check_file_uses(uses);
}

std::vector<CheckSummary> run_manifests(std::span<const Manifest> manifests, const CheckOptions& options) {
  // A golden rewritten over an input would change what the cases read, and the run would say
  // "updated": refused before any case runs, as `--expect FILE --update` over an input is.
  if (options.update) check_case_files(manifests, options);
  struct Slot {
    const CaseSpec* spec;
    CaseResult* result;
    GoldenUpdate update;
  };
  std::vector<CheckSummary> summaries(manifests.size());
  std::vector<Slot> slots;
  for (std::size_t m = 0; m < manifests.size(); ++m) {
    summaries[m].manifest = manifests[m].path;
    summaries[m].other_shards = manifests[m].other_shards;
    summaries[m].shard_index = options.shard_index;
    summaries[m].shard_count = options.shard_count;
    summaries[m].cases.resize(manifests[m].cases.size());
  }
  for (std::size_t m = 0; m < manifests.size(); ++m)
    for (std::size_t i = 0; i < manifests[m].cases.size(); ++i) {
      slots.push_back({&manifests[m].cases[i], &summaries[m].cases[i], {}});
      // What a case that never starts (an interrupt came first) reports.
      summaries[m].cases[i].name = manifests[m].cases[i].name;
      summaries[m].cases[i].golden = manifests[m].cases[i].golden;
      summaries[m].cases[i].outcome = CaseResult::Outcome::not_run;
      summaries[m].cases[i].detail = "interrupted";
    }
  // The CPUs this process may run on (its affinity mask and cgroup quota). The cases' CPU runs
  // share those with the workers: runs on the default thread count lease from one budget
  // (ThreadLease), so J workers leave each about cores / J threads, not a full team apiece.
  unsigned jobs = options.jobs ? options.jobs : available_cpus(this_machine());
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(std::max<std::size_t>(slots.size(), 1)));
  std::vector<Stopwatch> clocks(manifests.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    // No case starts once an interrupt was requested.
    for (std::size_t i; !interrupt_requested() && (i = next.fetch_add(1)) < slots.size();)
      *slots[i].result = run_case(*slots[i].spec, options, slots[i].update);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  for (std::size_t m = 0; m < manifests.size(); ++m) summaries[m].seconds = clocks[m].seconds();
  // An interrupted check updates no golden: the prepared ones are dropped, unnamed. (The
  // renames below do not look at the flag: an interrupt that comes during them finds the
  // check complete.)
  if (interrupt_requested()) {
    for (auto& s : summaries) s.interrupted = true;
    for (auto& s : slots)
      if (s.result->updated) {
        s.result->updated = false;
        s.result->detail = fmt::format("{} was not updated (interrupted)", quote_path(s.result->golden));
      }
    return summaries;
  }
  // The new goldens were prepared complete and unnamed: they take their names only now, all of
  // them, or none if any could not be written. Each golden is then the old file or the new.
  for (const Slot& s : slots)
    if (!s.update.failure.empty())
      throw Error(Errc::io, fmt::format("{} (no golden file was updated)", s.update.failure));
  for (const Slot& s : slots)
    if (s.update.file) s.update.file->commit();
  return summaries;
}

CheckSummary run_manifest(const Manifest& manifest, const CheckOptions& options) {
  return std::move(run_manifests(std::span(&manifest, 1), options).front());
}

CheckSummary run_check(const std::string& manifest_path, const CheckOptions& options) {
  return run_manifest(load_manifest(manifest_path, options), options);
}

std::string junit_xml(std::span<const CheckSummary> summaries) {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  std::string suites;
  for (const auto& s : summaries) {
    const bool sharded = s.shard_count > 1;
    std::size_t f = 0, e = 0;
    for (const auto& c : s.cases) {
      f += c.outcome == CaseResult::Outcome::fail;
      e += c.outcome == CaseResult::Outcome::error;
    }
    tests += s.cases.size() + s.other_shards.size();
    failures += f;
    errors += e;
    skipped += s.other_shards.size();
    seconds += s.seconds;
    suites += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\"{} time=\"{:.6f}\">\n",
                          xml_escape(s.manifest), s.cases.size() + s.other_shards.size(), f, e,
                          sharded ? fmt::format(" skipped=\"{}\"", s.other_shards.size()) : "", s.seconds);
    if (sharded)
      suites += fmt::format(
          "    <properties>\n      <property name=\"dmlbits.shard\" value=\"{}/{}\"/>\n"
          "    </properties>\n",
          s.shard_index, s.shard_count);
    for (const auto& c : s.cases) {
      suites += fmt::format("    <testcase classname=\"dmlbits.check\" name=\"{}\" time=\"{:.6f}\"", xml_escape(c.name),
                            c.seconds);
      if (c.outcome == CaseResult::Outcome::pass) {
        suites += "/>\n";
        continue;
      }
      const char* tag = c.outcome == CaseResult::Outcome::fail ? "failure" : "error";
      const std::string report = case_report(c);
      suites += fmt::format(">\n      <{} message=\"{}\">{}</{}>\n    </testcase>\n", tag, xml_escape(case_detail(c)),
                            xml_escape(report.empty() ? case_detail(c) : report), tag);
    }
    for (const auto& c : s.other_shards)
      suites += fmt::format(
          "    <testcase classname=\"dmlbits.check\" name=\"{}\" time=\"0\">\n"
          "      <skipped message=\"in shard {}/{}\"/>\n    </testcase>\n",
          xml_escape(c.name), c.shard, s.shard_count);
    suites += "  </testsuite>\n";
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites tests=\"{}\" failures=\"{}\" errors=\"{}\"{} time=\"{:.6f}\">\n{}</testsuites>\n",
      tests, failures, errors, skipped ? fmt::format(" skipped=\"{}\"", skipped) : "", seconds, suites);
}

}  // namespace dmlbits
