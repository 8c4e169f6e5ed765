// dmlbits/timing.hpp: the words for what a run reports, from described data (the backends'
// own descriptions are checked in backend_test, cpu_backend_test and stream_test; auto's estimate
// in auto_rule_test). Every expected text is written out by hand.
#include <gtest/gtest.h>

#include "dmlbits/timing.hpp"

namespace dmlbits {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

DeviceDescription cpu(unsigned threads, unsigned used, ThreadWhy why) {
  DeviceDescription d;
  d.kind = DeviceKind::cpu;
  d.isa = "AVX2";
  d.threads = threads;
  d.used = used;
  d.why = why;
  return d;
}

TEST(DescribeTest, ACpuRunSaysWhyItUsesFewerThreads) {
  EXPECT_EQ(device_text(cpu(2, 0, {})), "CPU, AVX2 kernels, 2 threads");
  EXPECT_EQ(device_text(cpu(1, 1, {})), "CPU, AVX2 kernels, 1 thread");
  EXPECT_EQ(device_text(cpu(2, 1, {ThreadUse::small_output, 4 * kMiB})),
            "CPU, AVX2 kernels, 1 of 2 threads (outputs under 4 MiB run on one)");
  EXPECT_EQ(device_text(cpu(8, 3, {ThreadUse::per_size, 2 * kMiB})),
            "CPU, AVX2 kernels, 3 of 8 threads (one per 2 MiB of output)");
  EXPECT_EQ(device_text(cpu(2, 2, {ThreadUse::pipeline})),
            "CPU, AVX2 kernels, 2 threads (one reads and computes, one writes)");
  EXPECT_EQ(device_text(cpu(4, 2, {ThreadUse::slices, 0, 2})),
            "CPU, AVX2 kernels, 2 of 4 threads (each reads, computes and writes half)");
  EXPECT_EQ(device_text(cpu(4, 4, {ThreadUse::slices, 0, 4})),
            "CPU, AVX2 kernels, 4 threads (each reads, computes and writes 1/4)");
  EXPECT_EQ(device_text(cpu(2, 1, {ThreadUse::small_stream, 64 * kMiB})),
            "CPU, AVX2 kernels, 1 of 2 threads (streamed outputs under 64 MiB run on one)");
  EXPECT_EQ(device_text(cpu(2, 1, {ThreadUse::two_streams})),
            "CPU, AVX2 kernels, 1 of 2 threads (two streamed inputs through a pipe or device run on one)");
  EXPECT_EQ(device_text(cpu(2, 1, {ThreadUse::narrower})),
            "CPU, AVX2 kernels, 1 of 2 threads (narrower outputs run on one)");
  DeviceDescription narrower = cpu(2, 0, {});
  narrower.narrower_per_operation = true;
  EXPECT_EQ(device_text(narrower), "CPU, AVX2 kernels (some narrower, per operation), 2 threads");
}

TEST(DescribeTest, TheOtherDevices) {
  EXPECT_EQ(device_text({}), "");
  DeviceDescription d;
  d.kind = DeviceKind::cpu_reference;
  EXPECT_EQ(device_text(d), "CPU reference (scalar loops)");
  d.kind = DeviceKind::d3d12;
  d.adapter = "llvmpipe";
  d.adapter_index = 1;
  d.software = true;
  d.feature_level = "11_0";
  d.shader_model = "5.1";
  EXPECT_EQ(device_text(d), "llvmpipe, software adapter 1, D3D feature level 11_0, shader model 5.1");
  DeviceDescription dml;
  dml.kind = DeviceKind::directml;
  dml.version = "1.15.2";
  dml.path = "C:\\DirectML.dll";
  dml.adapter = "WARP";
  EXPECT_EQ(device_text(dml), "DirectML 1.15.2 (C:\\DirectML.dll) on WARP");
  dml.feature_level = "6_4";  // as `devices` lists it
  EXPECT_EQ(device_text(dml), "DirectML 1.15.2 (C:\\DirectML.dll), highest feature level 6_4, on WARP");
  DeviceDescription missing;
  missing.kind = DeviceKind::not_built;
  missing.not_built = "not built";
  EXPECT_EQ(device_text(missing), "not built");
}

TEST(DescribeTest, TheTeamAndWhatHeldIt) {
  EXPECT_EQ(thread_team_text({}), "");
  EXPECT_EQ(thread_team_text({.threads = 3, .limit = ThreadLimit::requested}), "3 threads: as asked");
  EXPECT_EQ(thread_team_text({.threads = 1, .limit = ThreadLimit::cpus, .cpus = 1}),
            "1 thread: 1 CPU this process may run on");
  EXPECT_EQ(thread_team_reason({.threads = 8, .limit = ThreadLimit::knee, .cpus = 64, .quota = 40.0, .isa = "avx2"}),
            "8 of the 64 CPUs this process may run on (quota 40), where more stop paying for avx2 kernels");
}

TEST(DescribeTest, EveryRuleOfAutosChoice) {
  EXPECT_EQ(selection_text({}), "");  // named by the caller
  Selection s;
  s.backend = "cpu";
  s.rule = SelectionRule::small_output;
  s.output_bytes = 3 * kMiB;
  s.min_bytes = 16 * kMiB;
  EXPECT_EQ(selection_text(s),
            "auto chose cpu: the output (3 MiB) is below 16 MiB, where the CPU beats starting a GPU device");
  // Rounding never makes the comparison read as its contradiction ("16.0 MiB is below 16 MiB").
  s.output_bytes = 16 * kMiB - 1;
  EXPECT_EQ(selection_text(s),
            "auto chose cpu: the output (16777215 bytes) is below 16 MiB, where the CPU beats starting a GPU device");
  s.output_bytes = 16 * kMiB - 50000;  // 15.952 MiB: still "16.0 MiB" rounded
  EXPECT_EQ(selection_text(s),
            "auto chose cpu: the output (16727216 bytes) is below 16 MiB, where the CPU beats starting a GPU device");
  s.output_bytes = 16 * kMiB - 60000;  // 15.94 MiB
  EXPECT_EQ(selection_text(s),
            "auto chose cpu: the output (15.9 MiB) is below 16 MiB, where the CPU beats starting a GPU device");
  s.rule = SelectionRule::d3d12_not_built;
  s.detail = "not built into this dmlbits";
  EXPECT_EQ(selection_text(s), "auto chose cpu: the d3d12 backend is not built into this dmlbits");
  s.rule = SelectionRule::no_hardware;
  s.detail = "no GPU device node";
  EXPECT_EQ(selection_text(s), "auto chose cpu: no hardware adapter (no GPU device node)");
  s.rule = SelectionRule::no_runtime;
  s.runtime = "vkd3d";
  s.detail = "libvkd3d.so.1: cannot open";
  EXPECT_EQ(selection_text(s), "auto chose cpu: vkd3d not found: libvkd3d.so.1: cannot open");
  s.rule = SelectionRule::no_adapter;
  s.detail = "vkEnumeratePhysicalDevices found none";
  EXPECT_EQ(selection_text(s), "auto chose cpu: no D3D12 adapter: vkEnumeratePhysicalDevices found none");
  s.rule = SelectionRule::software_only;
  s.adapters = {"llvmpipe"};
  EXPECT_EQ(selection_text(s), "auto chose cpu: no hardware adapter (llvmpipe is software)");
  s.adapters = {"llvmpipe", "WARP"};
  EXPECT_EQ(selection_text(s), "auto chose cpu: no hardware adapter (llvmpipe, WARP are software)");
  s.rule = SelectionRule::device_failed;
  s.detail = "out of memory";
  EXPECT_EQ(selection_text(s), "auto chose cpu: the D3D12 device failed: out of memory");
  s.rule = SelectionRule::estimate;
  s.backend = "d3d12";
  s.estimate = {.adapter_index = 0,
                .adapter_name = "GPU",
                .uma = true,
                .gpu = true,
                .cpu_seconds = 0.2,
                .gpu_seconds = 0.05,
                .cpu_threads = 1};
  EXPECT_EQ(selection_text(s),
            "auto chose d3d12: adapter 0 (GPU) is UMA: estimated 0.05 s on d3d12 (every byte copied into and out of "
            "its heaps by one thread, the device's creation) against 0.2 s on the CPU backend's 1 thread");
}

}  // namespace
}  // namespace dmlbits
