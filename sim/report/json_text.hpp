// Text placed inside hand-written JSON (the trace is streamed event by event, too large to build as a document):
// quoted and escaped by nlohmann::json, so a scenario or link named `a"b\c` still yields a valid file. Bytes that
// are not UTF-8 become U+FFFD rather than an invalid document.
#pragma once
#include <string>
#include <string_view>

namespace cpsim {

std::string json_quoted(std::string_view text);  // a"b -> "a\"b"

}  // namespace cpsim
