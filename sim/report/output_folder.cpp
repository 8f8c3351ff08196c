#include "sim/report/output_folder.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <fstream>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/scenario/yaml_reader.hpp"

namespace fs = std::filesystem;

namespace cpsim {
namespace {

constexpr const char* kMarker = ".cpsim-output";

// What the signal handler removes: fixed storage, filled before a folder is written (the handler may only make
// async-signal-safe calls: fork, execv, waitpid, _exit).
struct CleanupSlot {
  char staging[4096];
  char lock[4096];
  volatile std::sig_atomic_t used;
};
CleanupSlot g_slots[4];

int register_cleanup(const fs::path& staging, const fs::path& lock) {
  for (int i = 0; i < 4; ++i)
    if (!g_slots[i].used) {
      std::snprintf(g_slots[i].staging, sizeof g_slots[i].staging, "%s", staging.c_str());
      std::snprintf(g_slots[i].lock, sizeof g_slots[i].lock, "%s", lock.c_str());
      g_slots[i].used = 1;
      return i;
    }
  return -1;  // more than four live folders in one process (cpsim has at most two): no signal cleanup for it
}

extern "C" void on_stop_signal(int sig) {
  for (auto& slot : g_slots) {
    if (!slot.used) continue;
    const pid_t pid = fork();
    if (pid == 0) {
      char rm[] = "/bin/rm", rf[] = "-rf", end[] = "--";
      char* argv[] = {rm, rf, end, slot.staging, slot.lock, nullptr};
      execv(rm, argv);
      _exit(127);
    }
    if (pid > 0) waitpid(pid, nullptr, 0);
  }
  _exit(128 + sig);
}

bool is_replaceable(const fs::path& dir) {
  if (fs::is_empty(dir)) return true;
  for (const char* name : {kMarker, "summary.json", "sweep.json"})
    if (fs::exists(dir / name)) return true;
  return false;
}

// Takes the lock file, or throws naming the live process that holds it.
void take_lock(const fs::path& lock, const fs::path& folder) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd >= 0) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      const bool ok = ::write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size());
      ::close(fd);
      if (!ok) throw std::runtime_error("cannot write " + lock.string());
      return;
    }
    if (errno != EEXIST) throw std::runtime_error(fmt::format("cannot create {}: {}", lock.string(), std::strerror(errno)));
    long holder = 0;
    std::ifstream(lock) >> holder;
    if (holder > 0 && holder != ::getpid() && (::kill(static_cast<pid_t>(holder), 0) == 0 || errno == EPERM))
      throw std::runtime_error(fmt::format("output folder {} is being written by process {} ({})", folder.string(),
                                           holder, lock.string()));
    fs::remove(lock);  // stale: its writer is gone
  }
  throw std::runtime_error("cannot take " + lock.string());
}

}  // namespace

void install_signal_cleanup() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

OutputFolder::OutputFolder(fs::path final_dir) : final_(std::move(final_dir)) {
  if (final_.empty()) throw InputError("-o:1:1: output: empty folder name");
  if (final_.filename().empty()) final_ = final_.parent_path();  // "out/x/" -> "out/x"
  if (fs::exists(final_) && !fs::is_directory(final_))
    throw InputError(fmt::format("-o:1:1: output: '{}' exists and is not a folder", final_.string()));
  if (fs::is_directory(final_) && !is_replaceable(final_))
    throw InputError(fmt::format("-o:1:1: output: '{}' is not empty and is not a cpsim output folder (no {}, "
                                 "summary.json or sweep.json): choose another folder",
                                 final_.string(), kMarker));
  try {
    if (!final_.parent_path().empty()) fs::create_directories(final_.parent_path());
  } catch (const fs::filesystem_error& e) {
    throw std::runtime_error(fmt::format("cannot create output folder {}: {}", final_.string(), e.code().message()));
  }
  lock_ = final_.string() + ".lock";
  take_lock(lock_, final_);
  staging_ = final_.string() + ".staging." + std::to_string(::getpid());
  slot_ = register_cleanup(staging_, lock_);
  try {
    fs::remove_all(staging_);
    fs::create_directory(staging_);
    std::ofstream(staging_ / kMarker) << "written by cpsim; the folder is replaced whole by the next run into it\n";
  } catch (...) {
    fs::remove(lock_);
    if (slot_ >= 0) g_slots[slot_].used = 0;
    throw;
  }
}

OutputFolder::~OutputFolder() {
  std::error_code ignored;
  if (!committed_) fs::remove_all(staging_, ignored);
  fs::remove(lock_, ignored);
  if (slot_ >= 0) g_slots[slot_].used = 0;
}

void OutputFolder::commit() {
  if (fs::exists(final_)) {
    // One atomic swap; the old contents then sit in the staging name and are deleted.
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) != 0) {
      if (errno != EINVAL && errno != ENOSYS)
        throw std::runtime_error(fmt::format("cannot replace {}: {}", final_.string(), std::strerror(errno)));
      const fs::path old = final_.string() + ".old." + std::to_string(::getpid());  // no exchange on this file system
      fs::rename(final_, old);
      fs::rename(staging_, final_);
      fs::rename(old, staging_);
    }
    fs::remove_all(staging_);
  } else {
    fs::rename(staging_, final_);
  }
  committed_ = true;
}

}  // namespace cpsim
