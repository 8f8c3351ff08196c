// An output file that appears whole or not at all: written to a temporary sibling, renamed on commit(), removed if
// never committed (an error or a crash before commit leaves nothing half-written under the final name).
#pragma once
#include <fstream>
#include <string>

namespace cpsim {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  void commit();  // flush, close and rename over the final path

 private:
  std::string path_, temp_path_;
  std::ofstream out_;
  bool committed_ = false;
};

void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace cpsim
