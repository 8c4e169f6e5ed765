// The operation API of dmlbits, in one include: data types and shapes (dtype.hpp), the operator
// table and feature levels (ops.hpp), tensors and tensor files (tensor.hpp), typed errors and
// cooperative interruption (error.hpp), the options' values and their parsers (options.hpp), one
// operation as a face asks for it and its run (request.hpp), the backends and plans a face keeps
// between runs (plan.hpp), one operator's CPU kernel over a caller's run of elements
// (elements.hpp), the devices it runs on (devices.hpp), what a run reports, its timings
// and the words for them (timing.hpp), and golden comparisons and check manifests (check.hpp).
// What a command-line program needs besides (its process's streams and signals, probes of the
// files it names) is dmlbits/front_end.hpp, which this header leaves out.
#pragma once

#include "dmlbits/check.hpp"
#include "dmlbits/devices.hpp"
#include "dmlbits/dtype.hpp"
#include "dmlbits/elements.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/options.hpp"
#include "dmlbits/plan.hpp"
#include "dmlbits/request.hpp"
#include "dmlbits/tensor.hpp"
#include "dmlbits/timing.hpp"
