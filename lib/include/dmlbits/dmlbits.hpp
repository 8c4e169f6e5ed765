// The operation API of dmlbits, in one include: data types and shapes (dtype.hpp), the operator
// table and feature levels (ops.hpp), tensors and tensor files (tensor.hpp), typed errors
// (error.hpp), the options' values and their refusals (options.hpp, option_error.hpp), one operation as a face asks for it and its run (request.hpp), timings
// (timing.hpp) and the words for what a run reports (describe.hpp), cooperative interruption (process.hpp), the devices it runs on (devices.hpp),
// and golden comparisons and check manifests (check.hpp). What a command-line program needs
// besides (its process's streams and signals, probes of the files it names) is
// dmlbits/front_end.hpp, which this header leaves out.
#pragma once

#include "dmlbits/check.hpp"
#include "dmlbits/describe.hpp"
#include "dmlbits/devices.hpp"
#include "dmlbits/dtype.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/option_error.hpp"
#include "dmlbits/options.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/process.hpp"
#include "dmlbits/request.hpp"
#include "dmlbits/tensor.hpp"
#include "dmlbits/timing.hpp"
