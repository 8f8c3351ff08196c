// A SimGrid XML platform as cpsim reads it before the engine starts: its GPUs (hosts named n<node>g<gpu>), its links
// and which GPU pairs have a route. Every mistake the engine would die on, or silently mis-simulate, is an InputError
// located in the XML file (`file:line:col: element.attribute: message`): malformed XML, a host of no node, a gap in
// the node or GPU numbering, a zone other than one Full zone or one FLAT <cluster>, a link of zero, negative or non-finite bandwidth or latency, a route through a link that
// does not exist, a pair of GPUs that talk but have no route. SimGrid's own parser still reads the file to run it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "platforms/platform_spec.hpp"

namespace cpsim {

class XmlPlatform {
 public:
  const std::string& file() const { return file_; }  // as errors name it
  const std::vector<GpuSlot>& gpus() const { return gpus_; }  // ordered by (node, local gpu)
  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  // Where a link is declared ("file:line:col"), for errors the engine finds in its values; "" for unknown names.
  std::string link_position(const std::string& link) const;
  // Refuses the first pair (GPU ids, PlatformSpec::gpus order) that has no route, located at the zone.
  void check_routes(const std::vector<std::pair<int, int>>& pairs) const;

  friend XmlPlatform read_xml_platform(const std::string& file, const std::string& display_name);

 private:
  std::string file_;
  std::vector<GpuSlot> gpus_;
  std::vector<int> vertex_of_gpu_;  // GPU id -> routing vertex (hosts and routers)
  int nodes_ = 0, gpus_per_node_ = 0;
  std::map<std::string, std::string> link_positions_;
  std::string zone_position_;       // "file:line:col" of the <zone>
  std::unordered_set<std::uint64_t> routes_;  // (src vertex, dst vertex) of every <route>, both ways if symmetrical
  bool every_pair_routed_ = false;            // a <cluster>: SimGrid routes every pair
};

// Reads and checks `file`; errors name it `display_name`. Throws InputError located in the file.
XmlPlatform read_xml_platform(const std::string& file, const std::string& display_name);

}  // namespace cpsim
