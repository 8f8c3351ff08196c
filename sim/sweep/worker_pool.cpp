#include "sim/sweep/worker_pool.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace cpsim {
namespace {

constexpr std::size_t kKeepStderrBytes = 64 * 1024;

struct Child {
  std::size_t job = 0;
  pid_t pid = -1;
  int fd = -1;  // read end of the child's stderr pipe
  std::string err;
};

void append_capped(std::string& buf, const char* data, std::size_t n) {
  buf.append(data, n);
  if (buf.size() > 2 * kKeepStderrBytes) buf.erase(0, buf.size() - kKeepStderrBytes);
}

// Starts one child; on failure to start, returns a Child with pid -1 and the reason in `err`.
Child spawn(std::size_t job, const std::vector<std::string>& argv) {
  Child c;
  c.job = job;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);  // dup2 clears close-on-exec on fd 2 only
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawn(&c.pid, argv.at(0).c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);  // only the child holds the write end now, so EOF on fds[0] means it closed stderr
  if (rc != 0) {
    ::close(fds[0]);
    c.pid = -1;
    c.err = "cannot start " + argv[0] + ": " + std::strerror(rc) + "\n";
    return c;
  }
  c.fd = fds[0];
  return c;
}

WorkerOutcome reap(Child& c) {
  char buf[4096];
  for (ssize_t n; (n = ::read(c.fd, buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    append_capped(c.err, buf, static_cast<std::size_t>(n));
  }
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  WorkerOutcome out;
  if (WIFSIGNALED(status)) {
    out.signal = WTERMSIG(status);
  } else {
    out.exit_code = WEXITSTATUS(status);
  }
  if (c.err.size() > kKeepStderrBytes) c.err.erase(0, c.err.size() - kKeepStderrBytes);
  out.stderr_text = std::move(c.err);
  return out;
}

}  // namespace

void run_workers(const std::vector<std::vector<std::string>>& commands, int max_parallel,
                 const std::function<void(std::size_t, const WorkerOutcome&)>& on_done,
                 const std::function<void()>& on_tick, double tick_s) {
  const std::size_t limit = static_cast<std::size_t>(std::max(1, max_parallel));
  std::vector<Child> running;
  std::size_t next = 0;
  while (next < commands.size() || !running.empty()) {
    while (running.size() < limit && next < commands.size()) {
      Child c = spawn(next, commands[next]);
      ++next;
      if (c.pid < 0) {
        on_done(c.job, WorkerOutcome{127, 0, c.err});
        continue;
      }
      running.push_back(std::move(c));
    }
    if (running.empty()) continue;
    std::vector<pollfd> fds;
    for (const auto& c : running) fds.push_back({c.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(tick_s * 1000));
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (on_tick) on_tick();
    if (ready <= 0) continue;
    // Read what each child wrote; a child whose stderr reached EOF has exited (or is exiting): reap it.
    for (std::size_t i = fds.size(); i-- > 0;) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(running[i].fd, buf, sizeof buf);
      if (n > 0) {
        append_capped(running[i].err, buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      Child done = std::move(running[i]);
      running.erase(running.begin() + static_cast<long>(i));
      const WorkerOutcome outcome = reap(done);
      on_done(done.job, outcome);
    }
  }
}

std::string last_line(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t start = text.rfind('\n', end - 1);
    const std::size_t from = start == std::string::npos ? 0 : start + 1;
    std::string line = text.substr(from, end - from);
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos) {
      const auto last = line.find_last_not_of(" \t\r");
      return line.substr(first, last - first + 1);
    }
    if (start == std::string::npos) break;
    end = start;
  }
  return "";
}

}  // namespace cpsim
