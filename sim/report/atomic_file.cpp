#include "sim/report/atomic_file.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <unistd.h>

namespace cpsim {

AtomicFile::AtomicFile(std::string path, Compression compression)
    : path_(std::move(path)), temp_path_(path_ + ".tmp." + std::to_string(::getpid())) {
  const auto dir = std::filesystem::path(path_).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir);
  if (compression == Compression::GZIP) {
    gzip_ = std::make_unique<GzipStreamBuf>(temp_path_);
    gzip_stream_.rdbuf(gzip_.get());
    return;
  }
  out_.open(temp_path_, std::ios::binary | std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write " + temp_path_);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    if (gzip_) gzip_->close();
    out_.close();
    std::remove(temp_path_.c_str());
  }
}

void AtomicFile::commit() {
  std::ostream& s = stream();
  s.flush();
  if (!s || (gzip_ && !gzip_->close())) throw std::runtime_error("error while writing " + temp_path_);
  out_.close();
  std::filesystem::rename(temp_path_, path_);
  committed_ = true;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  AtomicFile f(path);
  f.stream() << content;
  f.commit();
}

}  // namespace cpsim
