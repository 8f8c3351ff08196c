#include "sim/engine/executor_raw_ring.hpp"

#include <chrono>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "platforms/simgrid_platform.hpp"

namespace sg4 = simgrid::s4u;

namespace cpsim {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Round r+1 of GPU i starts when its round-r send and its round-r receive (from i-1) are both done. The left
// neighbour may run ahead (a send needs no receiver action), so sends and receives are counted separately.
class RingExchange {
 public:
  RingExchange(std::vector<sg4::Host*> hosts, std::size_t rounds, std::uint64_t bytes)
      : hosts_(std::move(hosts)), rounds_(rounds), bytes_(bytes), started_(hosts_.size(), 0), sent_(hosts_.size(), 0),
        received_(hosts_.size(), 0), live_(hosts_.size()) {}

  void run(sg4::Engine& engine) {
    sg4::Activity::on_completion_cb([this](const sg4::Activity& a) { on_done(a); });
    sg4::Engine::on_time_advance_cb([this](double) { finished_.clear(); });
    for (std::size_t i = 0; i < hosts_.size(); ++i) try_send(i);
    engine.run();
    finished_.clear();
  }

 private:
  std::size_t n() const { return hosts_.size(); }

  void try_send(std::size_t i) {
    if (started_[i] == rounds_ || sent_[i] < started_[i] || received_[i] < started_[i]) return;
    ++started_[i];
    sg4::CommPtr c = sg4::Comm::sendto_init(hosts_[i], hosts_[(i + 1) % n()]);
    c->set_payload_size(bytes_);
    c->set_data(reinterpret_cast<void*>(i + 1));
    live_[i] = c;
    c->start();
  }

  // A flow i -> i+1 completes one step for both of its ends.
  void on_done(const sg4::Activity& a) {
    const std::size_t i = reinterpret_cast<std::uintptr_t>(a.get_data<void>()) - 1;
    finished_.push_back(std::move(live_[i]));
    const std::size_t right = (i + 1) % n();
    ++sent_[i];
    ++received_[right];
    try_send(i);
    try_send(right);
  }

  std::vector<sg4::Host*> hosts_;
  std::size_t rounds_;
  std::uint64_t bytes_;
  std::vector<std::size_t> started_, sent_, received_;  // rounds, per GPU
  std::vector<sg4::ActivityPtr> live_;
  std::vector<sg4::ActivityPtr> finished_;
};

}  // namespace

EngineBenchResult run_engine_bench(const PlatformSpec& platform, std::size_t flows, double bytes) {
  const auto engine = start_engine();
  EngineBenchResult r;
  auto t = std::chrono::steady_clock::now();
  GpuPairs ring;  // each GPU sends to the next
  for (int g = 0; g < platform.gpu_count(); ++g) ring.emplace_back(g, (g + 1) % platform.gpu_count());
  const auto hosts = build_simgrid_platform(*engine, platform, ring);
  r.platform_build_s = seconds_since(t);
  r.gpus = static_cast<int>(hosts.size());
  const std::size_t rounds = (flows + hosts.size() - 1) / hosts.size();
  r.ring_flows = rounds * hosts.size();
  const double t0 = sg4::Engine::get_clock();
  t = std::chrono::steady_clock::now();
  RingExchange(hosts, rounds, static_cast<std::uint64_t>(bytes)).run(*engine);
  r.ring_wall_s = seconds_since(t);
  r.ring_simulated_s = sg4::Engine::get_clock() - t0;
  return r;
}

}  // namespace cpsim
