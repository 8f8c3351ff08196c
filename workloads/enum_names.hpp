// One to/from-string table per enum. Input strings become values once, at the loader (yaml choices list the
// table's names); outputs print the names. Nothing else compares phase, algorithm or kind as strings.
#pragma once
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cpsim {

template <class E, std::size_t N>
class EnumNames {
 public:
  constexpr explicit EnumNames(std::array<std::pair<E, std::string_view>, N> entries) : entries_(entries) {}

  const char* name(E value) const {
    for (const auto& [v, n] : entries_)
      if (v == value) return n.data();  // the literals are NUL-terminated
    throw std::logic_error("enum value without a name");
  }
  std::optional<E> parse(std::string_view text) const {
    for (const auto& [v, n] : entries_)
      if (n == text) return v;
    return std::nullopt;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : entries_) out.emplace_back(entry.second);
    return out;
  }

 private:
  std::array<std::pair<E, std::string_view>, N> entries_;
};

}  // namespace cpsim
