// dmlbits devices: every backend dmlbits can run on, and what it runs on.
#include <iostream>

#include "app.hpp"
#include "dmlbits/devices.hpp"

namespace dmlbits::app {
namespace {

struct DevicesOptions {
  bool json = false;
  std::string format;
};

void run_devices(const DevicesOptions& o) {
  const bool json = format_choice(o.json, o.format) == "json";
  const DevicesReport report = describe_devices();
  if (json) std::cout << report.json.dump(2) << '\n';
  else std::cout << report.text;
}

}  // namespace

void setup_devices(CLI::App& app) {
  auto opt = std::make_shared<DevicesOptions>();
  auto* sub = app.add_subcommand("devices", "List the backends, the D3D12 adapters and the devices they run on");
  sub->add_flag("--json", opt->json, "Print JSON (same as --format json)");
  sub->add_option("--format", opt->format, "Output format: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  sub->final_callback([opt] { run_devices(*opt); });
}

}  // namespace dmlbits::app
