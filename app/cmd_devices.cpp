// dmlbits devices: every backend dmlbits can run on, and what it runs on.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "dmlbits/backend.hpp"

namespace dmlbits::app {
namespace {

struct DevicesOptions {
  bool json = false;
};

void run_devices(const DevicesOptions& o) {
  nlohmann::json backends = nlohmann::json::array();
  for (auto name : backend_names()) {
    auto b = make_backend(name);
    if (o.json) backends.push_back({{"name", name}, {"device", b->device_description()}});
    else std::cout << fmt::format("{:<15}{}\n", name, b->device_description());
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
