// Uses the installed library through its most stable parts, the operator table and the error
// type: prints each operator's verb and arity, then the exit status of a usage error.
#include <cstdio>
#include <string>

#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"

int main() {
  for (const dmlbits::OpInfo& op : dmlbits::op_table())
    std::printf("%s %d\n", std::string(op.verb).c_str(), op.arity);
  try {
    throw dmlbits::Error(dmlbits::Errc::usage, "from a consumer");
  } catch (const dmlbits::Error& e) {
    std::printf("usage error: exit status %d\n", dmlbits::exit_status(e.code()));
  }
  return 0;
}
