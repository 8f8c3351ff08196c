// The headline numbers of one sweep point, taken from its summary.json (docs/sweeps.md lists the columns).
#pragma once
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

namespace cpsim {

// Columns every successful point has, in CSV order.
const std::vector<std::string>& fixed_metric_columns();

// From a point's summary.json: the fixed columns (a value missing from the summary is left out) followed by one
// group per layer kind found in `volumes`: cp_algorithm.<kind>, cp_bytes_per_layer.<kind>, formula_match.<kind>.
nlohmann::ordered_json point_metrics(const nlohmann::json& summary);

}  // namespace cpsim
