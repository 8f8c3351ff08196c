// An output file that appears whole or not at all: written to a temporary sibling, renamed on commit(), removed if
// never committed (an error or a crash before commit leaves nothing half-written under the final name).
#pragma once
#include <fstream>
#include <memory>
#include <string>

#include "sim/report/gzip_streambuf.hpp"

namespace cpsim {

class AtomicFile {
 public:
  enum class Compression { NONE, GZIP };
  explicit AtomicFile(std::string path, Compression compression = Compression::NONE);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return gzip_ ? gzip_stream_ : static_cast<std::ostream&>(out_); }
  void commit();  // flush, close and rename over the final path

 private:
  std::string path_, temp_path_;
  std::ofstream out_;
  std::unique_ptr<GzipStreamBuf> gzip_;
  std::ostream gzip_stream_{nullptr};
  bool committed_ = false;
};

void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace cpsim
