// Files written now and named later, all at once: how a face keeps a run's side outputs
// (--explain-json, --time-json, a DxDispatch model: prepare_dxdispatch_model in request.hpp)
// unseen until the run's result is written, so that a run that fails (a full disk, an
// interrupt, an input found short while it is read) leaves none of them (issue #37).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/tensor.hpp"

namespace dmlbits {

class OutputFile;

// Each file is written complete when added, under no name (an unnamed file where the system
// has them, else a temporary name, as every output: write_tensor_file), and commit() names them
// in the order added. Destroyed uncommitted, they leave nothing. A target written in place
// (standard output, a device, a FIFO: writes_in_place) cannot wait unseen: it is written when
// added, so that its failure, too, comes before anything is named.
class PendingOutputs {
 public:
  PendingOutputs();
  PendingOutputs(PendingOutputs&&) noexcept;
  PendingOutputs& operator=(PendingOutputs&&) noexcept;
  ~PendingOutputs();  // discards what was not committed

  // Errc::io "writing 'PATH': ..." if the file cannot be created or written.
  void add_text(const std::string& path, std::string_view text);
  void add_tensor(const TensorView& t, const std::string& path, TensorFormat format);
  // Names every file, in the order added, and empties the set. If one fails (Errc::io), those
  // before it keep their names and the rest are discarded.
  void commit();

 private:
  std::vector<std::unique_ptr<OutputFile>> files_;
};

}  // namespace dmlbits
