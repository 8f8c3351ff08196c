// The worker pool that runs sweep points: exit codes, signals and stderr of each child, and the cap on how many run
// at once. The children are /bin/sh one-liners whose outcome is known in advance.
#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>

#include "support.hpp"
#include "sim/engine/run_progress.hpp"
#include "sim/sweep/sweep_progress.hpp"
#include "sim/sweep/worker_pool.hpp"

using namespace cpsim;

TEST_CASE("workers: exit code, signal and last stderr line of every child", "[workers]") {
  const std::vector<std::vector<std::string>> jobs = {
      {"/bin/sh", "-c", "echo noise >&2; echo 'x.yaml:3:5: run.seq_len: must be positive' >&2; exit 2"},
      {"/bin/sh", "-c", "echo fine; exit 0"},
      {"/bin/sh", "-c", "kill -SEGV $$"},
      {"/nonexistent/cpsim"},
  };
  std::map<std::size_t, WorkerOutcome> got;
  run_workers(jobs, 2, [&](std::size_t i, const WorkerOutcome& w) { got[i] = w; });
  REQUIRE(got.size() == 4);
  CHECK(got[0].exit_code == 2);
  CHECK(last_line(got[0].stderr_text) == "x.yaml:3:5: run.seq_len: must be positive");
  CHECK(got[1].exit_code == 0);
  CHECK(got[1].stderr_text.empty());  // stdout went to /dev/null, not into the capture
  CHECK(got[2].signal == SIGSEGV);
  CHECK(got[2].exit_code == -1);
  CHECK(got[3].exit_code == 127);
  CHECK(got[3].stderr_text.find("cannot start /nonexistent/cpsim") != std::string::npos);
}

TEST_CASE("workers: never more than N children at once", "[workers]") {
  // Each child appends '+' when it starts and '-' before it ends; the running count never exceeds the limit.
  const std::string log = test::write_temp("", "pool.log");
  std::vector<std::vector<std::string>> jobs(6, {"/bin/sh", "-c", "echo + >> " + log + "; sleep 0.2; echo - >> " + log});
  std::size_t done = 0;
  run_workers(jobs, 2, [&](std::size_t, const WorkerOutcome& w) { done += w.exit_code == 0; });
  CHECK(done == 6);
  std::ifstream in(log);
  int running = 0, peak = 0, starts = 0;
  for (std::string line; std::getline(in, line);) {
    running += line == "+" ? 1 : -1;
    starts += line == "+";
    peak = std::max(peak, running);
  }
  CHECK(starts == 6);
  CHECK(peak <= 2);
  CHECK(peak >= 1);
}

TEST_CASE("workers: a chatty child does not block on a full stderr pipe", "[workers]") {
  // 200 KB on stderr is more than a pipe holds (64 KiB): the pool must keep reading; it keeps the tail.
  const std::vector<std::vector<std::string>> jobs = {
      {"/bin/sh", "-c", "i=0; while [ $i -lt 4000 ]; do echo 'line of fifty bytes..............................' >&2; "
                        "i=$((i+1)); done; echo last >&2; exit 3"}};
  WorkerOutcome out;
  run_workers(jobs, 1, [&](std::size_t, const WorkerOutcome& w) { out = w; });
  CHECK(out.exit_code == 3);
  CHECK(last_line(out.stderr_text) == "last");
  CHECK(out.stderr_text.size() <= 64 * 1024);
}

TEST_CASE("workers: last_line picks the last non-blank line, trimmed", "[workers]") {
  CHECK(last_line("a\nb\n\n  \n") == "b");
  CHECK(last_line("  only  ") == "only");
  CHECK(last_line("\n\n").empty());
  CHECK(last_line("").empty());
}

TEST_CASE("progress: clock, ETA and bar", "[workers]") {
  CHECK(format_clock(7) == "0:07");
  CHECK(format_clock(3723) == "1:02:03");  // 1 h 2 min 3 s
  CHECK(format_eta(0, 12, 5) == "?");
  CHECK(format_eta(3, 12, 6) == "0:18");  // 6 s / 3 points * 9 points left
  CHECK(progress_bar(6, 12, 1, 6, 10) == "[#####.....] 6/12  elapsed 0:06  ETA 0:06  1 failed");
  std::ostringstream plain;
  SweepProgress p(plain, 2, false);
  p.point_done("point 0 ok", false);
  CHECK(plain.str().rfind("sweep: [1/2] point 0 ok  (elapsed 0:00, ETA ", 0) == 0);
}

TEST_CASE("progress: a long run's line and silence when not live", "[workers]") {
  // Oracle: a quarter of 24 cells is 6; ETA = 4 s elapsed / 1000 done * 3000 left = 12 s.
  CHECK(run_progress_line(1000, 4000, 0.0125, 4) ==
        "[######..................] 1000/4000 tasks  simulated 12.500 ms  elapsed 0:04  ETA 0:12");
  std::ostringstream out;
  {
    RunProgress quiet(out, false);  // not a terminal: nothing, however long the run
    quiet.update(10, 20, 1.0);
  }
  CHECK(out.str().empty());
}
