// A std::streambuf that gzip-compresses everything written to it into a file (zlib's gzFile), so a big trace is
// streamed to disk compressed without ever being held whole in memory. Perfetto opens .json.gz directly.
// Why zlib and not Boost.Iostreams' gzip filter: Debian builds that filter into libboost_iostreams, a compiled
// library (and one more -dev package) for a 60-line buffer; gzFile's output is the same gzip format and byte-stable.
#pragma once
#include <array>
#include <streambuf>
#include <string>

namespace cpsim {

class GzipStreamBuf : public std::streambuf {
 public:
  explicit GzipStreamBuf(const std::string& path);  // throws std::runtime_error if the file cannot be opened
  ~GzipStreamBuf() override;
  GzipStreamBuf(const GzipStreamBuf&) = delete;
  GzipStreamBuf& operator=(const GzipStreamBuf&) = delete;
  bool close();  // flushes and finishes the gzip stream; false on a write error

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  bool drain();
  void* file_ = nullptr;  // gzFile, kept opaque so zlib.h stays out of this header
  std::array<char, 1 << 16> buffer_{};
};

}  // namespace cpsim
