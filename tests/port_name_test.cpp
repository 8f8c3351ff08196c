// Port names (platforms/topology.hpp): the one format the platform builder writes and the trace writer reads back
// to group a node's links and to rotate a collapsed run's counters. Oracle: the format "n<node>_<nvl|nic><local>".
#include <catch2/catch.hpp>

#include "platforms/topology.hpp"

using namespace cpsim;

TEST_CASE("port names: written and read back, and nothing else read as one", "[platform]") {
  CHECK(PortName{PortKind::NIC, 12, 3}.str() == "n12_nic3");
  CHECK(PortName{PortKind::NVLINK, 0, 7}.str() == "n0_nvl7");
  const auto nic = PortName::parse("n12_nic3");
  REQUIRE(nic);
  CHECK((nic->kind == PortKind::NIC && nic->node == 12 && nic->local_gpu == 3));
  const auto nvl = PortName::parse("n0_nvl7");
  REQUIRE(nvl);
  CHECK((nvl->kind == PortKind::NVLINK && nvl->node == 0 && nvl->local_gpu == 7));
  for (const char* other : {"n1_nvl", "n1_nvl2x", "x1_nvl2", "n_nvl2", "n1_pci2", "n1_nvl2_UP", "spine0", ""})
    CHECK_FALSE(PortName::parse(other));  // a switch, spine or XML-named link is not a GPU's port
}
