// What `dmlbits devices` reports (dmlbits/request.hpp): the CPU backends with the instruction
// sets this CPU has, the D3D12 runtime and adapters as d3d12_backend.hpp sees them, and the
// adapter auto would pick for a large output, which must be the one make_backend(test::kind("auto")) takes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cpu_isa.hpp"
#include "d3d12_backend.hpp"
#include "backend.hpp"
#include "make_backend.hpp"
#include "dmlbits/devices.hpp"
#include "dmlbits/request.hpp"

namespace dmlbits {
namespace {

const DeviceList& devices() {
  static const DeviceList d = list_devices();  // creates a D3D12 device per adapter: once
  return d;
}

// The --json document, as the CLI and Python print it.
struct Report {
  nlohmann::json json = nlohmann::json::parse(devices_json(devices()));
};
const Report& report() {
  static const Report r;
  return r;
}

TEST(DevicesTest, ListsBothCpuBackendsWithTheHostsInstructionSets) {
  const nlohmann::json& backends = report().json.at("backends");
  ASSERT_GE(backends.size(), 2u);
  EXPECT_EQ(backends[0].at("name"), "cpu");
  EXPECT_EQ(backends[1].at("name"), "cpu-reference");
  std::vector<std::string> isas;
  for (Isa isa : supported_isas()) isas.emplace_back(isa_name(isa));
  EXPECT_EQ(backends[0].at("isas").get<std::vector<std::string>>(), isas);
  EXPECT_EQ(backends[0].at("isa"), std::string(isa_name(best_isa())));
  ASSERT_EQ(devices().cpu.size(), 2u);
  EXPECT_EQ(devices().cpu[0].backend, BackendKind::cpu);
  EXPECT_EQ(devices().cpu[0].isas, isas);
  EXPECT_EQ(devices().cpu[1].backend, BackendKind::cpu_reference);
}

TEST(DevicesTest, AutoNamesTheThresholdAndTheAdapterMakeBackendPicks) {
  const nlohmann::json& a = report().json.at("auto");
  EXPECT_EQ(a.at("gpu_min_bytes"), kAutoGpuMinBytes);
  const nlohmann::json& d3d12 = report().json.at("d3d12");
  const GpuAdapter* hardware = d3d12.at("available").get<bool>() ? auto_adapter(gpu_adapters().adapters) : nullptr;
  const std::string large = a.at("large_outputs"), reason = a.at("reason");
  if (!hardware) {
    EXPECT_EQ(large, "cpu");  // e.g. only lavapipe, a software adapter
    EXPECT_EQ(reason, "no hardware adapter");
  } else {
    // The cost rule (auto_rule_test.cpp) with its default rates never takes the GPU for one
    // operator from and to host memory: the d3d12 path's copies alone match the CPU's run.
    EXPECT_EQ(large, "cpu") << reason;
    EXPECT_EQ(reason.rfind("an `and` of two 256 MiB inputs: adapter " + std::to_string(hardware->index) + " (", 0), 0u)
        << reason;
  }
}

TEST(DevicesTest, TheD3d12SectionAgreesWithTheAdapterList) {
  const nlohmann::json& d3d12 = report().json.at("d3d12");
  EXPECT_EQ(d3d12.at("built"), d3d12_built());
  const AdapterList& list = gpu_adapters();
  ASSERT_EQ(d3d12.at("adapters").size(), list.adapters.size());
  const GpuAdapter* preferred = default_adapter(list.adapters);
  for (std::size_t i = 0; i < list.adapters.size(); ++i) {
    const nlohmann::json& j = d3d12.at("adapters")[i];
    EXPECT_EQ(j.at("index"), list.adapters[i].index);
    EXPECT_EQ(j.at("name"), list.adapters[i].name);
    EXPECT_EQ(j.at("software"), list.adapters[i].software);
    EXPECT_EQ(j.at("default"), preferred && preferred->index == list.adapters[i].index);
  }
  // Unavailable is said with a reason; available lists d3d12 among the backends.
  bool listed = false;
  for (const auto& b : report().json.at("backends")) listed = listed || b.at("name") == "d3d12";
  EXPECT_EQ(listed, d3d12.at("available").get<bool>());
  if (!d3d12.at("available").get<bool>()) {
    EXPECT_FALSE(d3d12.at("reason").get<std::string>().empty());
  }
}

}  // namespace
}  // namespace dmlbits
