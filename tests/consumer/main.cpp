// Uses the installed library as its users would, through the umbrella header alone: prints each
// operator's verb and arity, runs one operation on two literals in memory, and prints the exit
// status of a usage error.
#include <cstdio>
#include <string>

#include "dmlbits/dmlbits.hpp"

int main() {
  for (const dmlbits::OpInfo& op : dmlbits::op_table()) std::printf("%s %d\n", std::string(op.verb).c_str(), op.arity);
  dmlbits::OperationRequest request;
  request.op = dmlbits::OpKind::bit_and;
  request.operands = {std::string("12"), std::string("10")};
  request.dtype = dmlbits::DType::uint8;
  request.output = dmlbits::OutputKind::memory;
  const dmlbits::RunResult result = dmlbits::run(dmlbits::prepare_request(std::move(request)));
  std::printf("and 12 10: %llu\n", static_cast<unsigned long long>(result.result->bits_at(0)));
  try {
    throw dmlbits::Error(dmlbits::Errc::usage, "from a consumer");
  } catch (const dmlbits::Error& e) {
    std::printf("usage error: exit status %d\n", dmlbits::exit_status(e.code()));
  }
  return 0;
}
