// An output folder that a run, sweep or merge owns while it writes it (docs/robustness.md, "Output folders").
//
// Everything is written into a fresh staging sibling (D.staging.PID); commit() swaps it with D in one rename
// (renameat2 RENAME_EXCHANGE, or a plain rename when D does not exist) and then deletes the previous contents, so a
// reader sees either the previous complete output or the new one, never a mix. A lock file beside it (D.lock, holding
// the writer's PID) refuses a second live writer; a stale lock (its process gone) is taken over. An existing D is
// replaced only when it is a cpsim output (it carries the `.cpsim-output` marker, or a summary.json / sweep.json of
// an older cpsim) or is empty: `-o ~` never deletes a home folder.
//
// Not committed (an error, an exception) the staging folder and the lock are removed. SIGINT and SIGTERM do the
// same and exit with 130 / 143 (install_signal_cleanup()).
#pragma once
#include <filesystem>
#include <string>

namespace cpsim {

class OutputFolder {
 public:
  explicit OutputFolder(std::filesystem::path final_dir);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  const std::filesystem::path& staging() const { return staging_; }
  const std::filesystem::path& final_dir() const { return final_; }
  void commit();

 private:
  std::filesystem::path final_, staging_, lock_;
  bool committed_ = false;
  int slot_ = -1;  // in the signal handler's table
};

// SIGINT / SIGTERM: remove every live OutputFolder's staging folder and lock, then exit 128 + signal.
void install_signal_cleanup();

}  // namespace cpsim
