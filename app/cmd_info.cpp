// dmlbits info FILE...: what each tensor file holds, without running anything.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/io.hpp"
#include "report.hpp"

namespace dmlbits::app {
namespace {

struct InfoOptions {
  std::vector<std::string> files;
  bool json = false;
  std::string format;
  std::string dtype;
};

FileInfo inspect(const std::string& path, std::optional<DType> dtype) {
  // An .npy file's header only: its data is never read (so its size costs nothing).
  const InputSummary in = inspect_input(path);
  return with_context(fmt::format("reading {}", quote_path(path)), [&] {
    FileInfo f;
    f.path = path;
    f.format = in.format;
    if (f.format == TensorFormat::npy) {
      const NpyHeader& h = *in.npy;
      f.version = fmt::format("{}.{}", h.major, h.minor);
      f.dtype = h.dtype;
      f.descr = h.descr;
      f.is_bool = h.is_bool;
      f.shape = h.shape;
      f.fortran_order = h.fortran_order;
      f.header_bytes = h.data_offset;
      switch (h.byte_order) {
        case '<': f.byte_order = "little"; break;
        case '>': f.byte_order = "big"; break;
        default: f.byte_order = "native"; break;  // '=', or '|' on a multi-byte type, as NumPy reads it
      }
      if (dtype_info(h.dtype).size == 1) f.byte_order = "not applicable";
    } else {
      const std::string_view text(reinterpret_cast<const char*>(in.json->bytes().data()), in.json->bytes().size());
      auto doc = JsonTensorDocument::parse(text);
      f.dtype = doc.declared_dtype();
      if (!f.dtype) f.dtype = dtype;
      if (f.dtype) {
        f.shape = doc.to_tensor(f.dtype).shape();
      } else {
        // Without a dtype the values cannot be checked, but the shape is known.
        f.shape = doc.to_tensor(DType::float64).shape();
      }
      f.byte_order = "not applicable";
    }
    return f;
  });
}

int run_info(const InfoOptions& given) {
  InfoOptions o = given;
  o.json = format_choice(o.json, o.format) == "json";
  std::optional<DType> dtype;
  if (!o.dtype.empty()) {
    dtype = parse_dtype_name(o.dtype);
    if (!dtype) throw Error(Errc::usage, fmt::format("--dtype: unknown data type '{}'", o.dtype));
  }
  // Standard input can be read once: a second '-' would report an empty input.
  if (std::count(o.files.begin(), o.files.end(), "-") > 1)
    throw Error(Errc::usage, "standard input ('-') can be given once");
  int status = 0;
  nlohmann::json all = nlohmann::json::array();
  for (const auto& path : o.files) {
    try {
      const FileInfo f = inspect(path, dtype);
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

}  // namespace

void setup_info(CLI::App& app) {
  auto opt = std::make_shared<InfoOptions>();
  auto* sub = app.add_subcommand("info", "Show the dtype, shape, size, byte order and layout of tensor files");
  sub->add_option("files", opt->files, "Tensor files (.npy or JSON; - for standard input)")->required();
  sub->add_flag("--json", opt->json, "Print a JSON array, one object per file (same as --format json)");
  sub->add_option("--format", opt->format, "Output format: text (default) or json")->check(CLI::IsMember({"text", "json"}));
  sub->add_option("--dtype", opt->dtype, "Data type for JSON files that name none");
  sub->final_callback([opt] {
    const int status = run_info(*opt);
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace dmlbits::app
