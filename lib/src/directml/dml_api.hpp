// The part of DirectML's API that dmlbits calls, declared here because no DirectML.h exists for
// mingw-w64 in Debian. Written from Microsoft's documentation and the layout of the public
// DirectML.h (DirectML 1.15, DML_TARGET_VERSION 0x6400): the enum values, the structures'
// fields in order, the interfaces' IIDs, and each interface's methods in vtable order, which
// must match the header exactly (a method out of place calls another one). Only the methods
// dmlbits calls need meaningful signatures; the others keep their slots.
//
// Include after the D3D12 headers (<directx/d3d12.h>): the DML structures hold D3D12 handles.
#pragma once

namespace dmlbits::dml {

// ---- enums ----------------------------------------------------------------------------------

enum DML_TENSOR_DATA_TYPE : int {
  DML_TENSOR_DATA_TYPE_UNKNOWN = 0,
  DML_TENSOR_DATA_TYPE_FLOAT32 = 1,
  DML_TENSOR_DATA_TYPE_FLOAT16 = 2,
  DML_TENSOR_DATA_TYPE_UINT32 = 3,
  DML_TENSOR_DATA_TYPE_UINT16 = 4,
  DML_TENSOR_DATA_TYPE_UINT8 = 5,
  DML_TENSOR_DATA_TYPE_INT32 = 6,
  DML_TENSOR_DATA_TYPE_INT16 = 7,
  DML_TENSOR_DATA_TYPE_INT8 = 8,
  DML_TENSOR_DATA_TYPE_FLOAT64 = 9,
  DML_TENSOR_DATA_TYPE_UINT64 = 10,
  DML_TENSOR_DATA_TYPE_INT64 = 11,
};

enum DML_TENSOR_TYPE : int { DML_TENSOR_TYPE_INVALID = 0, DML_TENSOR_TYPE_BUFFER = 1 };
enum DML_TENSOR_FLAGS : int { DML_TENSOR_FLAG_NONE = 0, DML_TENSOR_FLAG_OWNED_BY_DML = 1 };
// DML_OPERATOR_TYPE: the bitwise operators' values are OpInfo::dml_enum (97, 98, 121..125).
using DML_OPERATOR_TYPE = int;
// DML_FEATURE_LEVEL: FeatureLevel::value (major << 12 | minor << 8).
using DML_FEATURE_LEVEL = int;
enum DML_FEATURE : int { DML_FEATURE_TENSOR_DATA_TYPE_SUPPORT = 0, DML_FEATURE_FEATURE_LEVELS = 1 };
enum DML_EXECUTION_FLAGS : int { DML_EXECUTION_FLAG_NONE = 0 };
enum DML_CREATE_DEVICE_FLAGS : int { DML_CREATE_DEVICE_FLAG_NONE = 0, DML_CREATE_DEVICE_FLAG_DEBUG = 1 };
enum DML_BINDING_TYPE : int {
  DML_BINDING_TYPE_NONE = 0,
  DML_BINDING_TYPE_BUFFER = 1,
  DML_BINDING_TYPE_BUFFER_ARRAY = 2
};

// ---- structures -----------------------------------------------------------------------------

struct DML_BUFFER_TENSOR_DESC {
  DML_TENSOR_DATA_TYPE DataType;
  DML_TENSOR_FLAGS Flags;
  UINT DimensionCount;
  const UINT* Sizes;
  const UINT* Strides;  // optional: nullptr means packed
  UINT64 TotalTensorSizeInBytes;
  UINT GuaranteedBaseOffsetAlignment;
};

struct DML_TENSOR_DESC {
  DML_TENSOR_TYPE Type;
  const void* Desc;
};

struct DML_OPERATOR_DESC {
  DML_OPERATOR_TYPE Type;
  const void* Desc;
};

// DML_ELEMENT_WISE_BIT_{SHIFT_LEFT,SHIFT_RIGHT,AND,OR,XOR}_OPERATOR_DESC share this layout,
// and DML_ELEMENT_WISE_BIT_{NOT,COUNT}_OPERATOR_DESC the unary one.
struct DML_BINARY_BIT_OPERATOR_DESC {
  const DML_TENSOR_DESC* ATensor;
  const DML_TENSOR_DESC* BTensor;
  const DML_TENSOR_DESC* OutputTensor;
};
struct DML_UNARY_BIT_OPERATOR_DESC {
  const DML_TENSOR_DESC* InputTensor;
  const DML_TENSOR_DESC* OutputTensor;
};

struct DML_FEATURE_QUERY_TENSOR_DATA_TYPE_SUPPORT {
  DML_TENSOR_DATA_TYPE DataType;
};
struct DML_FEATURE_DATA_TENSOR_DATA_TYPE_SUPPORT {
  BOOL IsSupported;
};
struct DML_FEATURE_QUERY_FEATURE_LEVELS {
  UINT RequestedFeatureLevelCount;
  const DML_FEATURE_LEVEL* RequestedFeatureLevels;
};
struct DML_FEATURE_DATA_FEATURE_LEVELS {
  DML_FEATURE_LEVEL MaxSupportedFeatureLevel;
};

struct DML_BINDING_PROPERTIES {
  UINT RequiredDescriptorCount;
  UINT64 TemporaryResourceSize;
  UINT64 PersistentResourceSize;
};

struct IDMLDispatchable;

struct DML_BINDING_TABLE_DESC {
  IDMLDispatchable* Dispatchable;
  D3D12_CPU_DESCRIPTOR_HANDLE CPUDescriptorHandle;
  D3D12_GPU_DESCRIPTOR_HANDLE GPUDescriptorHandle;
  UINT SizeInDescriptors;
};

struct DML_BINDING_DESC {
  DML_BINDING_TYPE Type;
  const void* Desc;
};

struct DML_BUFFER_BINDING {
  ID3D12Resource* Buffer;
  UINT64 Offset;
  UINT64 SizeInBytes;
};

// ---- graphs (DML_TARGET_VERSION >= 0x2100: IDMLDevice1, DirectML 1.1 and later) ----------------
// DML_GRAPH_NODE_TYPE_CONSTANT (target 0x6200) is left out: dmlbits passes its literals as graph
// inputs, which every DirectML with IDMLDevice1 takes.

enum DML_GRAPH_EDGE_TYPE : int {
  DML_GRAPH_EDGE_TYPE_INVALID = 0,
  DML_GRAPH_EDGE_TYPE_INPUT = 1,
  DML_GRAPH_EDGE_TYPE_OUTPUT = 2,
  DML_GRAPH_EDGE_TYPE_INTERMEDIATE = 3
};
enum DML_GRAPH_NODE_TYPE : int { DML_GRAPH_NODE_TYPE_INVALID = 0, DML_GRAPH_NODE_TYPE_OPERATOR = 1 };

struct DML_GRAPH_EDGE_DESC {
  DML_GRAPH_EDGE_TYPE Type;
  const void* Desc;
};
struct DML_INPUT_GRAPH_EDGE_DESC {
  UINT GraphInputIndex;
  UINT ToNodeIndex;
  UINT ToNodeInputIndex;
  const char* Name;
};
struct DML_OUTPUT_GRAPH_EDGE_DESC {
  UINT FromNodeIndex;
  UINT FromNodeOutputIndex;
  UINT GraphOutputIndex;
  const char* Name;
};
struct DML_INTERMEDIATE_GRAPH_EDGE_DESC {
  UINT FromNodeIndex;
  UINT FromNodeOutputIndex;
  UINT ToNodeIndex;
  UINT ToNodeInputIndex;
  const char* Name;
};

struct IDMLOperator;
struct DML_GRAPH_NODE_DESC {
  DML_GRAPH_NODE_TYPE Type;
  const void* Desc;
};
struct DML_OPERATOR_GRAPH_NODE_DESC {
  IDMLOperator* Operator;
  const char* Name;
};

struct DML_GRAPH_DESC {
  UINT InputCount;
  UINT OutputCount;
  UINT NodeCount;
  const DML_GRAPH_NODE_DESC* Nodes;
  UINT InputEdgeCount;
  const DML_GRAPH_EDGE_DESC* InputEdges;
  UINT OutputEdgeCount;
  const DML_GRAPH_EDGE_DESC* OutputEdges;
  UINT IntermediateEdgeCount;
  const DML_GRAPH_EDGE_DESC* IntermediateEdges;
};

// ---- interfaces, in DirectML.h's order ------------------------------------------------------
// IIDs from DirectML.h.
inline constexpr GUID IID_IDMLDevice = {0x6dbd6437, 0x96fd, 0x423f, {0xa9, 0x8c, 0xae, 0x5e, 0x7c, 0x2a, 0x57, 0x3f}};
inline constexpr GUID IID_IDMLDevice1 = {0xa0884f9a, 0xd2be, 0x4355, {0xaa, 0x5d, 0x59, 0x01, 0x28, 0x1a, 0xd1, 0xd2}};
inline constexpr GUID IID_IDMLOperator = {0x26caae7a, 0x3081, 0x4633, {0x95, 0x81, 0x22, 0x6f, 0xbe, 0x57, 0x69, 0x5d}};
inline constexpr GUID IID_IDMLCompiledOperator = {
    0x6b15e56a, 0xbf5c, 0x4902, {0x92, 0xd8, 0xda, 0x3a, 0x65, 0x0a, 0xfe, 0xa4}};
inline constexpr GUID IID_IDMLOperatorInitializer = {
    0x427c1113, 0x435c, 0x469c, {0x86, 0x76, 0x4d, 0x5d, 0xd0, 0x72, 0xf8, 0x13}};
inline constexpr GUID IID_IDMLBindingTable = {
    0x29c687dc, 0xde74, 0x4e3b, {0xab, 0x00, 0x11, 0x68, 0xf2, 0xfc, 0x3c, 0xfc}};
inline constexpr GUID IID_IDMLCommandRecorder = {
    0xe6857a76, 0x2e3e, 0x4fdd, {0xbf, 0xf4, 0x5d, 0x2b, 0xa1, 0x0f, 0xb4, 0x53}};

struct IDMLObject : IUnknown {
  virtual HRESULT STDMETHODCALLTYPE GetPrivateData(REFGUID guid, UINT* size, void* data) = 0;
  virtual HRESULT STDMETHODCALLTYPE SetPrivateData(REFGUID guid, UINT size, const void* data) = 0;
  virtual HRESULT STDMETHODCALLTYPE SetPrivateDataInterface(REFGUID guid, IUnknown* data) = 0;
  virtual HRESULT STDMETHODCALLTYPE SetName(PCWSTR name) = 0;
};

struct IDMLOperator;
struct IDMLCompiledOperator;
struct IDMLPageable;

struct IDMLDevice : IDMLObject {
  virtual HRESULT STDMETHODCALLTYPE CheckFeatureSupport(DML_FEATURE feature, UINT query_size, const void* query,
                                                        UINT support_size, void* support) = 0;
  virtual HRESULT STDMETHODCALLTYPE CreateOperator(const DML_OPERATOR_DESC* desc, REFIID riid, void** ppv) = 0;
  virtual HRESULT STDMETHODCALLTYPE CompileOperator(IDMLOperator* op, DML_EXECUTION_FLAGS flags, REFIID riid,
                                                    void** ppv) = 0;
  virtual HRESULT STDMETHODCALLTYPE CreateOperatorInitializer(UINT count, IDMLCompiledOperator* const* operators,
                                                              REFIID riid, void** ppv) = 0;
  virtual HRESULT STDMETHODCALLTYPE CreateCommandRecorder(REFIID riid, void** ppv) = 0;
  virtual HRESULT STDMETHODCALLTYPE CreateBindingTable(const DML_BINDING_TABLE_DESC* desc, REFIID riid, void** ppv) = 0;
  virtual HRESULT STDMETHODCALLTYPE Evict(UINT count, IDMLPageable* const* objects) = 0;
  virtual HRESULT STDMETHODCALLTYPE MakeResident(UINT count, IDMLPageable* const* objects) = 0;
  virtual HRESULT STDMETHODCALLTYPE GetDeviceRemovedReason() = 0;
  virtual HRESULT STDMETHODCALLTYPE GetParentDevice(REFIID riid, void** ppv) = 0;
};

struct IDMLDevice1 : IDMLDevice {
  virtual HRESULT STDMETHODCALLTYPE CompileGraph(const DML_GRAPH_DESC* desc, DML_EXECUTION_FLAGS flags, REFIID riid,
                                                 void** ppv) = 0;
};

struct IDMLDeviceChild : IDMLObject {
  virtual HRESULT STDMETHODCALLTYPE GetDevice(REFIID riid, void** ppv) = 0;
};

struct IDMLPageable : IDMLDeviceChild {};

struct IDMLOperator : IDMLDeviceChild {};

struct IDMLDispatchable : IDMLPageable {
  // DirectML.h declares `DML_BINDING_PROPERTIES GetBindingProperties()`. Microsoft's x64 ABI
  // returns a structure from a method through a hidden pointer passed after `this`, and GCC
  // would pass it before: declared with the pointer explicit, the call is the same on both.
  virtual DML_BINDING_PROPERTIES* STDMETHODCALLTYPE GetBindingProperties(DML_BINDING_PROPERTIES* result) = 0;
};

struct IDMLCompiledOperator : IDMLDispatchable {};

struct IDMLOperatorInitializer : IDMLDispatchable {
  virtual HRESULT STDMETHODCALLTYPE Reset(UINT count, IDMLCompiledOperator* const* operators) = 0;
};

struct IDMLBindingTable : IDMLDeviceChild {
  virtual void STDMETHODCALLTYPE BindInputs(UINT count, const DML_BINDING_DESC* bindings) = 0;
  virtual void STDMETHODCALLTYPE BindOutputs(UINT count, const DML_BINDING_DESC* bindings) = 0;
  virtual void STDMETHODCALLTYPE BindTemporaryResource(const DML_BINDING_DESC* binding) = 0;
  virtual void STDMETHODCALLTYPE BindPersistentResource(const DML_BINDING_DESC* binding) = 0;
  virtual HRESULT STDMETHODCALLTYPE Reset(const DML_BINDING_TABLE_DESC* desc) = 0;
};

struct IDMLCommandRecorder : IDMLDeviceChild {
  virtual void STDMETHODCALLTYPE RecordDispatch(ID3D12CommandList* list, IDMLDispatchable* dispatchable,
                                                IDMLBindingTable* bindings) = 0;
};

// DirectML.dll's exports.
using PFN_DMLCreateDevice1 = HRESULT(WINAPI*)(ID3D12Device* device, DML_CREATE_DEVICE_FLAGS flags,
                                              DML_FEATURE_LEVEL minimum_level, REFIID riid, void** ppv);

}  // namespace dmlbits::dml
