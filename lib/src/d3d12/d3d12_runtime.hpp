// The D3D12 runtime behind D3d12Backend: the dlopened library, one device per adapter per process
// with its queue, root signature, pipelines and buffers, and the execution of one dispatch.
// This header is free of D3D12 types so that the backend's chunking logic (d3d12_backend.cpp)
// compiles without the D3D12 headers; only d3d12_runtime.cpp includes d3d12_api.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "d3d12_backend.hpp"
#include "staging.hpp"
#include "gpu_kernel.hpp"
#include "graph_kernel.hpp"

// The D3D12 interfaces, declared as the D3D12 headers declare them, for the accessors below.
struct ID3D12Device;
struct ID3D12CommandQueue;
struct ID3D12CommandList;

namespace dmlbits::d3d12 {

// "0x80070057 (E_INVALIDARG)". hresult.cpp: compiled in every build, for the directml layer too.
std::string hresult_text(std::int32_t hr);
// Throws Errc::backend "CALL failed: 0x80070057 (E_INVALIDARG) WHAT" (WHAT may be empty).
[[noreturn]] void throw_hresult(std::string_view call, std::int32_t hr, std::string_view what = {});
// throw_hresult where `hr` is a failure (negative, as FAILED() tests it): the one check of a
// D3D12 or DirectML call's result, for both layers. HRESULT is 32 bits in every header set.
inline void check_hresult(std::int32_t hr, std::string_view call, std::string_view what = {}) {
  if (hr < 0) throw_hresult(call, hr, what);
}

// nullopt when the D3D12 runtime library loads, else the loader's reason.
std::optional<std::string> runtime_unavailable_reason();
// "vkd3d", "d3d12.dll" (d3d12_runtime_name()).
std::string_view runtime_name();

// The kernel programs come from gpu::build_kernel; tests of the runtime alone may substitute
// a source of their own (nullptr restores build_kernel). Pipelines already created stay.
using KernelSource = std::vector<std::uint8_t> (*)(const gpu::KernelKey& key);
void set_kernel_source(KernelSource source);
std::vector<std::uint8_t> kernel_bytecode(const gpu::KernelKey& key);

// Transfers move through kTransferSlots rotating command lists, each with its own upload and
// readback heap, in pieces of at most kTransferPieceBytes per buffer (Device::dispatch).
inline constexpr unsigned kTransferSlots = 3;
inline constexpr std::uint64_t kTransferPieceBytes = std::uint64_t{8} << 20;
// A streamed run's pieces on a software adapter (lavapipe, WARP): its "device" memory is the
// CPU's and its kernels run on the CPU's cores, so nothing crosses a bus for pieces to overlap
// with; what pays is a piece whose heaps, buffers and kernel stay in the CPU's caches, as the
// stream layer's own chunks (kStreamChunkBytes) do, and one piece in flight: more only set the
// reading thread against the adapter's own for the same cores. 8 MiB pieces were 2-3x slower
// there, three in flight 1.2-1.3x one (testdata/benchmarks.md, "gpu").
inline constexpr std::uint64_t kSoftwareStreamPieceBytes = std::uint64_t{512} << 10;
inline constexpr unsigned kSoftwareStreamInFlight = 1;

// Seconds spent in each phase of execution, added to by Device::dispatch.
struct PhaseSeconds {
  double pipeline = 0;  // CreateComputePipelineState (first use of a kernel)
  // Wall time of the stages of Device::dispatch (d3d12_runtime.cpp), which overlap the CPU's
  // copies with the GPU's: upload until the dispatch is submitted (the CPU's copies into upload
  // heaps, waiting for the GPU's copies of earlier pieces), readback from there to the end less
  // the Dispatch (the GPU's copies out, the CPU's copies from readback heaps), submit the
  // submissions themselves.
  double upload = 0;
  double dispatch = 0;  // the Dispatch, from GPU timestamps
  double readback = 0;
  double submit = 0;
  // Wall time of streamed runs (Device::stream), whose reads, copies, dispatches and writes
  // overlap: upload there is the reading into the heaps, readback the rest but the dispatches
  // and submissions (the writing from the heaps, the waits for the GPU).
  double streamed = 0;
};

// One dispatch: t0 (and t1) read from device buffers filled by `upload` (or left as the previous
// dispatch of the same run filled them), u0 written and its first output.size() bytes read back.
// With `graph` set, the graph kernel of that key instead (graph_kernel.hpp): t0..t(inputs - 1)
// and graph_constants, on a root signature of its own.
struct DispatchJob {
  gpu::KernelKey key;
  gpu::KernelConstants constants;
  const gpu::GraphKernelKey* graph = nullptr;  // outlives the dispatch
  gpu::GraphConstants graph_constants;
  unsigned inputs = 1;  // 1 or 2; a graph kernel's buffers: 0 to gpu::kGraphMaxBuffers
  struct Input {
    std::span<const std::byte> upload;  // bytes to upload, padded by the runtime with zeros to
                                        // a multiple of gpu::kInputPaddingBytes; empty with
                                        // keep: reuse
    bool keep = false;                  // the buffer already holds this input (same run)
  };
  std::array<Input, gpu::kGraphMaxBuffers> input;
  std::uint64_t output_buffer_bytes = 0;  // u0's size: output_units * unit_bytes (gpu_kernel.hpp)
  std::span<std::byte> output;            // where the result goes
  std::uint32_t groups = 0;               // Dispatch(groups, 1, 1)
  // Bytes per transfer piece (rounded down to whole kInputPaddingBytes): kTransferPieceBytes;
  // tests lower it (D3d12BackendOptions::transfer_piece_bytes).
  std::uint64_t piece_bytes = kTransferPieceBytes;
};

// A streamed run (D3d12Backend::run_staged): `count` outputs of a flat operation, in pieces of
// `piece_elements`, each read through a StagedIo into a slot's upload heap, computed by its own
// dispatch and written from the slot's readback heap, kTransferSlots pieces in flight.
struct StreamJob {
  gpu::KernelKey key;
  // Strides set (0 for a broadcast input); count, threads and (strided kernels) the last size
  // are set per piece, base stays 0.
  gpu::KernelConstants constants;
  unsigned inputs = 1;                      // 1 or 2
  std::array<bool, 2> scalar{};             // an input of one element, broadcast
  std::uint64_t in_size = 0, out_size = 0;  // element bytes
  std::uint64_t count = 0;                  // output elements
  std::uint64_t piece_elements = 0;         // a multiple of 64
  unsigned in_flight = kTransferSlots;      // pieces submitted and not yet written, 1 to kTransferSlots
};

class CopyTeam;  // copy_team.hpp

class Device {
 public:
  // The process's device on `adapter`, created on first use. Throws Errc::backend.
  static std::shared_ptr<Device> acquire(const GpuAdapter& adapter, double* created_seconds);
  virtual ~Device() = default;
  virtual const D3d12DeviceInfo& info() const = 0;
  // The device and its one direct queue, owned by this object (see d3d12_device.hpp).
  virtual ID3D12Device* native_device() const = 0;
  virtual ID3D12CommandQueue* native_queue() const = 0;
  // Held for a whole run: buffers are shared by every backend on this device.
  std::mutex& mutex() { return mutex_; }
  // Under mutex(): creates the pipeline for `key` if needed, uploads, dispatches and reads
  // back, and returns when job.output holds the result.
  // `team` (may be null: the calling thread alone) splits the CPU's copies into and out of
  // the heaps.
  virtual void dispatch(const DispatchJob& job, PhaseSeconds& phases, CopyTeam* team = nullptr) = 0;
  // Under mutex(): a streamed run (StreamJob), reading and writing through `io` (reads and
  // writes split over `team` where io allows concurrent ones). Returns when every output
  // element is written; throws what `io` throws, and Errc::backend.
  virtual void stream(const StreamJob& job, StagedIo& io, PhaseSeconds& phases, CopyTeam* team = nullptr) = 0;
  // Under mutex(): executes `list` (closed, recorded by a user of the shared device) on the
  // queue and waits until it is done, with this device's fence. Throws Errc::backend.
  virtual void execute(ID3D12CommandList* list) = 0;
  // Under mutex(): creates a pipeline from `bytecode` with the kernels' root signature and
  // drops it, throwing as dispatch() would (for tests of the bytecode and of error messages).
  virtual void create_pipeline(const std::vector<std::uint8_t>& bytecode, const std::string& what) = 0;

 private:
  std::mutex mutex_;
};

}  // namespace dmlbits::d3d12
