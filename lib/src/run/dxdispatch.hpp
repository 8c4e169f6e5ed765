// Reproducing a dmlbits operation on real DirectML: a model for Microsoft's DxDispatch tool
// (github.com/microsoft/DirectML, DxDispatch/doc/Guide.md) that creates the same
// DML_OPERATOR_ELEMENT_WISE_BIT_* operator with the same DML_BUFFER_TENSOR_DESCs (strides and
// TotalTensorSizeInBytes included), initialises its input buffers from .npy files holding the
// inputs as dmlbits read them, dispatches it once and writes the output buffer to an .npy file.
//
// The files for a model named FILE (a trailing ".json" is dropped from FILE first):
//   FILE.json       the model (DxDispatch accepts only the lowercase .json extension)
//   FILE-a.npy      input A (InputTensor of not/popcount, ATensor otherwise)
//   FILE-b.npy      input B (BTensor), binary operators only
//   FILE-NAME.npy   an expression's operand NAME (dmlbits eval), one per operand that is no
//                   literal
//   FILE-out.npy    the output, written by DxDispatch (relative to the directory it runs in, or
//                   its --output_path), never by dmlbits
// The model names the .npy files without a directory: DxDispatch resolves input paths relative
// to the model's folder.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dmlbits/request.hpp"
#include "dmlbits/tensor.hpp"
#include "graph.hpp"
#include "validate.hpp"

namespace dmlbits {

// The DxDispatch model of `op`: resources "A"[, "B"] initialised from `input_npy_names` (paths
// as the model should spell them) and "Out" (zero-filled; absent when `op` is in place, the
// output then being bound to "A"), one DirectML operator dispatchable, a dispatch command and
// a writeFile command to `output_npy_name` with the output's dimensions. A root "dmlbits"
// object, which DxDispatch ignores, records the verb, feature level and the DxDispatch
// arguments that select it. Throws Errc::unsupported for an empty result (DirectML sizes
// cannot be 0) or sizes beyond DirectML's 32-bit fields, Errc::internal for a wrong number of
// names.
nlohmann::json dxdispatch_model(const ValidatedOp& op, const std::vector<std::string>& input_npy_names,
                                const std::string& output_npy_name);

// The DxDispatch model of an expression's graph, node by node: DxDispatch on master has no model
// of a hand-written DML_GRAPH_DESC (it parses every other dispatchable type as one operator), so
// the graph is written as what CompileGraph would be given piecewise. Resources: one per input,
// named as the expression names it and initialised from `input_npy_names` (per
// graph.inputs()); "const:I" per constant, initialised inline from `constants` (per
// graph.constants(); a float's bit pattern as the unsigned type of its width, which JSON
// numbers cannot carry exactly: NaN payloads, -0.0); "node:K", zero-filled, per node's output.
// Each buffer holds its data and the TotalTensorSizeInBytes of every tensor bound to it,
// rounded up to 4 bytes. Dispatchables: "node:K" per node, its operator desc as for one
// operator. Commands: a dispatch per node in graph order, then writeFile of the last node's
// resource to `output_npy_name` with the output's dimensions. The "dmlbits" note records the
// expression, each node's text and the feature level. Throws as dxdispatch_model.
nlohmann::json dxdispatch_graph_model(const ValidatedGraph& graph, const std::vector<std::string>& input_npy_names,
                                      const std::vector<TensorView>& constants, const std::string& output_npy_name);

// Writes FILE-a.npy[, FILE-b.npy] (each `inputs[i]` as .npy) and then FILE.json, all prepared
// before any takes its name, and returns their names: prepare_dxdispatch_model (front_end.hpp)
// and the commit, as one call (for tests; a face adds the files to its own pending outputs).
// `inputs` are the tensors `op` was validated for; `reread_a` as for prepare_dxdispatch_model.
DxDispatchFiles write_dxdispatch_model(const std::string& file, const ValidatedOp& op,
                                       const std::vector<TensorView>& inputs, const std::string& reread_a = "");

}  // namespace dmlbits
