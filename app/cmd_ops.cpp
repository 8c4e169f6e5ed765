// dmlbits ops: the support matrix, straight from the operator table.
#include <iostream>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/request.hpp"
#include "report.hpp"

namespace dmlbits::app {
namespace {

struct OpsOptions {
  std::string feature_level;
  bool json = false;
  std::string format;
  bool roff = false;
};

void run_ops(const OpsOptions& o) {
  std::optional<FeatureLevel> level;
  if (!o.feature_level.empty()) level = parse_feature_level_option(o.feature_level);
  const bool json = format_choice(o.json, o.format) == "json";
  if (o.roff) std::cout << ops_roff();
  else if (json) std::cout << ops_json_text(level) << '\n';
  else std::cout << ops_text(level);
}

void setup_ops(CommandSetup* sub) {
  auto opt = std::make_shared<OpsOptions>();
  sub->add_option("--feature-level,-l", opt->feature_level, "Show what is supported at this level only");
  sub->add_flag("--json", opt->json, "Print JSON (same as --format json)");
  sub->add_option("--format", opt->format, "Output format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_flag("--roff", opt->roff, "Print the man page's table rows (for the man page test)")->group("");
  sub->final_callback([opt] { run_ops(*opt); });
}

}  // namespace

Command ops_command() {
  return {"ops", {}, "List the operators and what each accepts at each feature level", setup_ops};
}

}  // namespace dmlbits::app
