// dmlbits devices: every backend dmlbits can run on, and what it runs on.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "dmlbits/backend.hpp"
#include "dmlbits/cpu_isa.hpp"

namespace dmlbits::app {
namespace {

struct DevicesOptions {
  bool json = false;
};

void run_devices(const DevicesOptions& o) {
  nlohmann::json backends = nlohmann::json::array();
  for (auto name : backend_names()) {
    auto b = make_backend(name);
    // The CPU SIMD backend can be held to any instruction set this CPU has (--isa).
    std::vector<std::string> isas;
    if (name == "cpu")
      for (Isa isa : supported_isas()) isas.emplace_back(isa_name(isa));
    if (o.json) {
      nlohmann::json j = {{"name", name}, {"device", b->device_description()}};
      if (!isas.empty()) j["isas"] = isas;
      backends.push_back(j);
    } else {
      std::cout << fmt::format("{:<15}{}", name, b->device_description());
      if (!isas.empty()) std::cout << fmt::format(" (--isa {})", fmt::join(isas, ", "));
      std::cout << '\n';
    }
  }
  if (o.json) std::cout << nlohmann::json{{"backends", backends}}.dump(2) << '\n';
}

}  // namespace

void setup_devices(CLI::App& app) {
  auto opt = std::make_shared<DevicesOptions>();
  auto* sub = app.add_subcommand("devices", "List the backends and the devices they run on");
  sub->add_flag("--json", opt->json, "Print JSON");
  sub->final_callback([opt] { run_devices(*opt); });
}

}  // namespace dmlbits::app
