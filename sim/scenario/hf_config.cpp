#include "sim/scenario/hf_config.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <vector>

#include "platforms/platform_spec.hpp"
#include "sim/scenario/input_limits.hpp"

namespace cpsim {
namespace {

// The architectures whose config.json fields cpsim reads (transformers' names for them).
const std::vector<std::string> kDenseGqa = {"llama", "mistral", "qwen2", "qwen3", "glm4"};
const std::vector<std::string> kMoeGqa = {"mixtral", "qwen2_moe", "qwen3_moe"};
const std::vector<std::string> kMla = {"deepseek_v3", "deepseek_v32", "glm4_moe"};

bool one_of(const std::string& v, const std::vector<std::string>& list) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

std::string supported_list() {
  std::vector<std::string> all = kDenseGqa;
  all.insert(all.end(), kMoeGqa.begin(), kMoeGqa.end());
  all.insert(all.end(), kMla.begin(), kMla.end());
  return fmt::format("{}", fmt::join(all, ", "));
}

// A field that is present and not JSON null (transformers writes `"sliding_window": null` for "none").
bool present(const MapReader& r, const std::string& key) { return r.has(key) && !r.self()[key].IsNull(); }

int positive(MapReader& r, const std::string& key) { return static_cast<int>(r.integer(key, 1)); }
int positive_or(MapReader& r, const std::string& key, int fallback) {
  return present(r, key) ? positive(r, key) : fallback;
}

// Refuses a field whose value would change the architecture in a way cpsim's model cannot express.
void require_value(MapReader& r, const std::string& key, std::int64_t expected, const std::string& why) {
  if (present(r, key) && r.integer(key) != expected)
    r.fail(key, fmt::format("must be {} for cpsim: {}", expected, why));
}

// The model mapping of cpsim's schema (docs/model.md) that the config describes.
YAML::Node translate(MapReader& r) {
  const std::string type = r.text("model_type");
  const bool mla = one_of(type, kMla);
  if (!one_of(type, kDenseGqa) && !one_of(type, kMoeGqa) && !mla)
    r.fail("model_type", fmt::format("'{}' is not an architecture cpsim imports (supported: {})", type,
                                     supported_list()));
  YAML::Node m(YAML::NodeType::Map);
  // The checkpoint's name when transformers recorded it ("meta-llama/Meta-Llama-3-8B" -> Meta-Llama-3-8B).
  const std::string origin = present(r, "_name_or_path") ? r.text("_name_or_path") : "";
  const std::string base = std::filesystem::path(origin).filename().string();
  m["name"] = base.empty() ? type : base;
  YAML::Node attention(YAML::NodeType::Map);
  YAML::Node pattern(YAML::NodeType::Sequence);
  m["layers"] = positive(r, "num_hidden_layers");
  m["d_model"] = positive(r, "hidden_size");
  const int heads = positive(r, "num_attention_heads");
  const int kv_heads = positive_or(r, "num_key_value_heads", heads);
  if (heads % kv_heads != 0)
    r.fail("num_key_value_heads", fmt::format("num_attention_heads ({}) must be a multiple of it ({})", heads, kv_heads));
  m["n_heads"] = heads;
  m["n_kv_heads"] = kv_heads;
  m["ffn_dim"] = positive(r, "intermediate_size");
  m["vocab"] = positive(r, "vocab_size");

  if (mla) {
    // MLA: the cache holds the latent (kv_lora_rank) and the shared rope key; heads are qk_nope_head_dim wide.
    const int nope = positive(r, "qk_nope_head_dim");
    if (present(r, "v_head_dim") && r.integer("v_head_dim") != nope)
      r.fail("v_head_dim", fmt::format("must equal qk_nope_head_dim ({}): cpsim models one head width", nope));
    m["head_dim"] = nope;
    YAML::Node latent(YAML::NodeType::Map);
    latent["d_c"] = positive(r, "kv_lora_rank");
    latent["rope_dim"] = positive(r, "qk_rope_head_dim");
    m["mla"] = latent;
  } else {
    m["head_dim"] = positive_or(r, "head_dim", m["d_model"].as<int>() / heads);
  }

  // Mixture of experts: every layer after the leading dense ones routes to top-k of the experts.
  if (type == "mixtral" || present(r, "n_routed_experts") || present(r, "num_experts")) {
    YAML::Node moe(YAML::NodeType::Map);
    if (type == "mixtral") {
      moe["experts"] = positive(r, "num_local_experts");
      moe["expert_ffn_dim"] = m["ffn_dim"].as<int>();
    } else {
      moe["experts"] = positive(r, mla ? "n_routed_experts" : "num_experts");
      moe["expert_ffn_dim"] = positive(r, "moe_intermediate_size");
    }
    const int top_k = positive(r, "num_experts_per_tok");
    if (top_k > moe["experts"].as<int>()) r.fail("num_experts_per_tok", "cannot exceed the number of experts");
    moe["top_k"] = top_k;
    if (present(r, "n_shared_experts")) moe["shared_experts"] = static_cast<int>(r.integer("n_shared_experts", 0));
    if (present(r, "shared_expert_intermediate_size")) {
      // Qwen-MoE writes its shared expert as one wide FFN: cpsim counts it in experts of expert_ffn_dim.
      const std::int64_t wide = r.integer("shared_expert_intermediate_size", 0);
      const int unit = moe["expert_ffn_dim"].as<int>();
      if (wide % unit != 0)
        r.fail("shared_expert_intermediate_size",
               fmt::format("must be a multiple of moe_intermediate_size ({}) for cpsim's shared_experts", unit));
      moe["shared_experts"] = static_cast<int>(wide / unit);
    }
    if (present(r, "first_k_dense_replace"))
      moe["first_dense_layers"] = static_cast<int>(r.integer("first_k_dense_replace", 0));
    require_value(r, "moe_layer_freq", 1, "cpsim places experts on every layer after the leading dense ones");
    require_value(r, "decoder_sparse_step", 1, "cpsim places experts on every layer after the leading dense ones");
    if (present(r, "mlp_only_layers") && r.self()["mlp_only_layers"].size() > 0)
      r.fail("mlp_only_layers", "must be empty for cpsim: dense layers are the leading first_dense_layers only");
    m["moe"] = moe;
  }

  // Sliding window: Mistral declares it on every layer; Qwen only when use_sliding_window is true.
  const bool qwen = type.rfind("qwen", 0) == 0;
  const bool window = present(r, "sliding_window") && (!qwen || r.flag_or("use_sliding_window", false));
  if (window) {
    if (qwen && present(r, "max_window_layers") && r.integer("max_window_layers") < m["layers"].as<int>())
      r.fail("max_window_layers", "a window on some layers only is not imported: cpsim windows every layer");
    m["sliding_window"] = positive(r, "sliding_window");
    pattern.push_back("swa");
  }

  // DeepSeek-V3.2's DSA: the lightning indexer and its top-k on every layer.
  if (type == "deepseek_v32") {
    pattern.push_back("dsa");
    attention["dsa_top_k"] = positive(r, "index_topk");
    attention["indexer_heads"] = positive(r, "index_n_heads");
    attention["indexer_dim"] = positive(r, "index_head_dim");
  }
  if (pattern.size() > 0) {
    attention["pattern"] = pattern;
    m["attention"] = attention;
  }
  return m;
}

}  // namespace

YAML::Node model_with_hf_config(const YAML::Node& model, const YamlSource& source, const std::string& dir,
                                std::string& config_file) {
  const YAML::Node& spec = model;  // const: reading a missing key must not create it
  const YAML::Node file_node = spec["hf_config"];
  if (!file_node.IsScalar()) fail_at(file_node, source, "model.hf_config", "expected the path of a config.json");
  // Like `model: FILE`, a path given with --set is relative to the working directory.
  const bool from_command_line = source.overridden_paths.count("model.hf_config") > 0;
  const std::string file = resolve_input_path(file_node.Scalar(), from_command_line ? "." : dir);
  if (file.empty())
    fail_at(file_node, source, "model.hf_config", fmt::format("config file '{}' not found", file_node.Scalar()));

  config_file = file;
  const YAML::Node json = load_yaml_file(file);
  const YamlSource json_source{display_path(file), {}};
  if (!json.IsMap()) fail_at(json, json_source, "model.hf_config", "a config.json must be a JSON object");
  // Only the architecture fields are read; the rest of config.json (tokenizer, rope, dtype) does not change
  // what cpsim simulates, so it is not checked as unknown keys would be.
  MapReader r(json, json_source, "model.hf_config");
  YAML::Node imported = translate(r);

  for (const auto& entry : spec) {
    const std::string key = key_name(entry.first, source, "model");
    if (key != "hf_config") imported[key] = entry.second;  // the scenario's own keys keep their positions
  }
  return imported;
}

}  // namespace cpsim
