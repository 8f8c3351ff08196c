#include "sim/report/json_text.hpp"

#include <nlohmann/json.hpp>

namespace cpsim {

std::string json_quoted(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace cpsim
