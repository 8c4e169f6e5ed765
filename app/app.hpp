// The command-line front end: one options struct plus setup_<cmd>() and run_<cmd>() per
// command (CLI11's example style). Commands parse syntax, call the library and print through
// report.hpp; they throw dmlbits::Error and main() turns it into a message and an exit status.
#pragma once

#include <CLI/CLI.hpp>

#include "dmlbits/ops.hpp"

namespace dmlbits::app {

void setup_info(CLI::App& app);
void setup_ops(CLI::App& app);
void setup_check(CLI::App& app);
void setup_devices(CLI::App& app);
// One subcommand per row of the operator table.
// The operator commands, or only `only`'s when given (the command line names it first).
void setup_op_commands(CLI::App& app, const OpInfo* only = nullptr);

}  // namespace dmlbits::app
