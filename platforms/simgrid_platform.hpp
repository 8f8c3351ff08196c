// Builds the SimGrid platform of a PlatformSpec inside the current Engine: GPUs are hosts, every NVLink port and
// every NIC is a split-duplex link, routes come from Topology (or from the XML file for `file:` platforms).
// Only sim/ and this builder include SimGrid headers.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "platforms/platform_spec.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace cpsim {

class RankSymmetry;

// GPU pairs (sender, receiver) that exchange data: a generated platform gets a route for these only, so a large
// cluster of which a workload uses a few GPUs costs what the workload uses; an XML platform must have them all.
using GpuPairs = std::vector<std::pair<int, int>>;

// Returns the hosts in GPU-id order (PlatformSpec::gpus). An XML platform is loaded by SimGrid's parser (its
// errors become located InputErrors) and its links' values are checked as SimGrid parsed them.
// `fold`: a collapsed run's symmetry (workloads/rank_symmetry.hpp): every route's links are folded onto their
// representatives, so a representative link carries the rotated copies of the flows its orbit would carry.
std::vector<simgrid::s4u::Host*> build_simgrid_platform(simgrid::s4u::Engine& engine, const PlatformSpec& spec,
                                                        const GpuPairs& pairs, const RankSymmetry* fold = nullptr);

// A generated platform (no `file:`) built once per prefix, each copy with its own hosts, links and routes, names
// prefixed: disjoint networks in one engine (staggered contention gives each traffic class its own copy).
std::vector<std::vector<simgrid::s4u::Host*>> build_network_copies(simgrid::s4u::Engine& engine,
                                                                   const PlatformSpec& spec,
                                                                   const std::vector<std::string>& prefixes,
                                                                   const GpuPairs& pairs,
                                                                   const RankSymmetry* fold = nullptr);

// The network model cpsim uses everywhere: CM02 without cross traffic nor TCP window, so a lone flow takes exactly
// route latency + bytes / bottleneck bandwidth and concurrent flows share links max-min fairly. Call once, before
// the platform is created.
void configure_pure_network_model();

// A SimGrid engine with its logs silenced and the pure network model configured (one per process).
std::unique_ptr<simgrid::s4u::Engine> start_engine();

}  // namespace cpsim
