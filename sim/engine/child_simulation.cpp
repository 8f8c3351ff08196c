#include "sim/engine/child_simulation.hpp"
#include "sim/engine/symmetry_choice.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "sim/engine/executor.hpp"
#include "sim/scenario/yaml_reader.hpp"
#include "workloads/workload.hpp"

namespace cpsim {
namespace {

enum Outcome : int { OK = 0, FAILED = 1, INPUT = 2, TOO_LARGE = 3 };

struct Child {
  std::size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
};

[[noreturn]] void child_main(const Scenario& s, int fd) {
  // A batch of steps would repeat the same info lines per child: children log warnings (and debug when asked).
  if (spdlog::get_level() == spdlog::level::info) spdlog::set_level(spdlog::level::warn);
  double makespan = -1;
  Outcome outcome = OK;
  std::string message;
  try {
    const auto symmetry = collapse_symmetry(s);
    const WorkloadInputs in{s.model, s.run, s.parallel, s.cp, s.platform.gpu, &s.platform, symmetry ? &*symmetry : nullptr};
    makespan = execute(generate_workload(in, s.platform.gpu_count()), s.platform, s.contention, {}, s.run.closed_form_flows).makespan_s;
  } catch (const WorkloadTooLarge& e) {
    outcome = TOO_LARGE, message = e.what();
  } catch (const InputError& e) {
    outcome = INPUT, message = e.what();
  } catch (const std::exception& e) {
    outcome = FAILED, message = e.what();
  }
  bool sent = ::write(fd, &makespan, sizeof makespan) == sizeof makespan;
  sent = sent && ::write(fd, message.data(), message.size()) == ssize_t(message.size());
  ::_exit(sent ? outcome : FAILED);
}

Child start(const Scenario& s, std::size_t index) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // buffered output would be written twice, once by the child
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    child_main(s, fds[1]);
  }
  ::close(fds[1]);
  return {index, pid, fds[0]};
}

// Reads the child's answer to EOF, reaps it, and returns the makespan or raises its error.
double finish(const Child& c, const char* what) {
  double makespan = -1;
  ssize_t got = 0;
  while ((got = ::read(c.fd, &makespan, sizeof makespan)) < 0 && errno == EINTR) {
  }
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = ::read(c.fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    message.append(buffer, std::size_t(n));
  }
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int outcome = WIFEXITED(status) ? WEXITSTATUS(status) : FAILED;
  if (outcome == INPUT) throw InputError(message);
  if (outcome == TOO_LARGE) throw WorkloadTooLarge(message);
  if (got != sizeof makespan || outcome != OK)
    throw std::runtime_error(std::string("simulating ") + what + " failed" + (message.empty() ? "" : ": " + message));
  return makespan;
}

}  // namespace

std::vector<double> simulate_makespans_in_children(const std::vector<Scenario>& scenarios, int parallel,
                                                   const char* what) {
  std::vector<double> out(scenarios.size(), -1);
  std::vector<Child> running;
  std::size_t next = 0;
  const std::size_t limit = std::size_t(std::max(1, parallel));
  try {
    while (next < scenarios.size() || !running.empty()) {
      while (running.size() < limit && next < scenarios.size()) {
        running.push_back(start(scenarios[next], next));
        ++next;
      }
      // The oldest child first: results land in order and the pool stays full (children take similar times).
      const Child c = running.front();
      running.erase(running.begin());
      out[c.index] = finish(c, what);
    }
  } catch (...) {
    for (const Child& c : running) {  // a failure stops the batch: do not leave children behind
      ::kill(c.pid, SIGKILL);
      ::close(c.fd);
      ::waitpid(c.pid, nullptr, 0);
    }
    throw;
  }
  return out;
}

}  // namespace cpsim
