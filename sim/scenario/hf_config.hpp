// `model: {hf_config: path/to/config.json}`: a HuggingFace config.json read into cpsim's model schema.
// yaml-cpp reads the JSON (JSON is YAML's flow subset), so every error keeps its file:line:col in the JSON.
#pragma once
#include <string>

#include "sim/scenario/yaml_reader.hpp"

namespace cpsim {

// The model mapping `model` (read from `source`, whose relative paths resolve against `dir`) with its
// `hf_config` replaced by the fields that config.json implies. Keys written beside `hf_config` (`name`,
// `attention`, `--set model.layers=2`) override the imported ones. Unsupported architectures and fields whose
// values cpsim cannot represent are located errors in the JSON. `config_file` gets the path read (summary inputs).
YAML::Node model_with_hf_config(const YAML::Node& model, const YamlSource& source, const std::string& dir,
                                std::string& config_file);

}  // namespace cpsim
