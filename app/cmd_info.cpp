// dmlbits info FILE...: what each tensor file holds, without running anything.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/request.hpp"
#include "dmlbits/tensor.hpp"
#include "report.hpp"

namespace dmlbits::app {
namespace {

struct InfoOptions {
  std::vector<std::string> files;
  bool json = false;
  std::string format;
  std::string dtype;
};

int run_info(const InfoOptions& given) {
  InfoOptions o = given;
  o.json = format_choice(o.json, o.format) == "json";
  std::optional<DType> dtype;
  if (!o.dtype.empty()) dtype = parse_dtype_option(o.dtype);
  // Standard input can be read once: a second '-' would report an empty input.
  if (std::count(o.files.begin(), o.files.end(), "-") > 1)
    throw Error(Errc::usage, "standard input ('-') can be given once");
  int status = 0;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& path : o.files) {
    try {
      const FileInfo f = inspect_tensor_file(path, dtype);
      if (o.json) all.push_back(info_json(f));
      else std::cout << info_text(f);
    } catch (const Error& e) {
      // Report every file, like ls(1); the status is the first failure's.
      std::cerr << "dmlbits: " << e.what() << '\n';
      if (o.json)
        all.push_back({{"path", path}, {"error", {{"code", errc_info(e.code()).name}, {"message", e.what()}}}});
      if (status == 0) status = exit_status(e.code());
    }
  }
  if (o.json) std::cout << all.dump(2) << '\n';
  return status;
}

void setup_info(CommandSetup* sub) {
  auto opt = std::make_shared<InfoOptions>();
  sub->add_option("files", opt->files, "Tensor files (.npy or JSON; - for standard input)")->required();
  sub->add_flag("--json", opt->json, "Print a JSON array, one object per file (same as --format json)");
  sub->add_option("--format", opt->format, "Output format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_option("--dtype", opt->dtype, "Data type for JSON files that name none");
  sub->final_callback([opt] {
    const int status = run_info(*opt);
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace

Command info_command() {
  return {"info", {}, "Show the dtype, shape, size, byte order and layout of tensor files", setup_info};
}

}  // namespace dmlbits::app
