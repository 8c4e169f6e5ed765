// dmlbits: DirectML's element-wise bitwise operators on tensors, from the command line.
#include <csignal>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/interrupt.hpp"
#include "dmlbits/ops.hpp"
#include "report.hpp"

namespace {

// SIGINT/SIGTERM: ask the library to stop at its next chunk, which unwinds and removes any
// temporary output; a second signal ends the process at once.
void on_interrupt(int sig) {
  dmlbits::request_interrupt();
  std::signal(sig, SIG_DFL);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dmlbits;
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  // A closed pipe is a write error (EPIPE) reported like any other, not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"dmlbits: run DirectML's element-wise bitwise operators (DML_ELEMENT_WISE_BIT_*) on tensors", "dmlbits"};
  app.set_version_flag("--version", "dmlbits " DMLBITS_VERSION);
  app.require_subcommand(1);
  app.footer(app::exit_status_summary() + "\nSee dmlbits(1) for details.");
  // Building CLI11's option tables is most of a small run's instructions (3 of 4 million with
  // all seven operator commands, about 170 options). When the first argument names an
  // operator, which is then the command, only that command is built: the others could not
  // match anyway (one subcommand is required and it comes first), and help and errors for the
  // operator read the same.
  const OpInfo* named = argc >= 2 ? find_op(argv[1]) : nullptr;
  if (named == nullptr) {
    app::setup_info(app);
    app::setup_ops(app);
    app::setup_check(app);
    app::setup_devices(app);
  }
  app::setup_op_commands(app, named);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command that already reported its failures
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "dmlbits: " << e.what() << "\nRun 'dmlbits --help' for usage.\n";
    return exit_status(Errc::usage);
  } catch (const Error& e) {
    std::cerr << "dmlbits: " << e.what() << '\n';
    return exit_status(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "dmlbits: out of memory\n";
    return exit_status(Errc::io);
  } catch (const std::exception& e) {
    std::cerr << "dmlbits: internal error: " << e.what() << '\n';
    return exit_status(Errc::internal);
  }
  // Output may be buffered in std::cout; a failed flush (a full disk, a closed pipe) is an
  // I/O error, not a success.
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0) {
    std::cerr << "dmlbits: writing standard output: failed\n";
    return exit_status(Errc::io);
  }
  return 0;
}
