// `model: {hf_config: config.json}`: HuggingFace configs (written here from the public field names of the
// checkpoints' config.json) load to the same model as the bundled YAML, and bad configs are located errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "support.hpp"
#include "sim/scenario/input_files.hpp"
#include "sim/scenario/yaml_reader.hpp"

using namespace cpsim;

namespace {

// The architecture fields of meta-llama/Meta-Llama-3-8B's config.json, with the fields cpsim ignores kept.
const char* kLlama3_8b = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "bos_token_id": 128000,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "max_position_embeddings": 8192,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 500000.0,
  "torch_dtype": "bfloat16",
  "vocab_size": 128256
})";

// deepseek-ai/DeepSeek-V3's config.json (architecture fields and a few of the others).
const char* kDeepSeekV3 = R"({
  "architectures": ["DeepseekV3ForCausalLM"],
  "first_k_dense_replace": 3,
  "hidden_size": 7168,
  "intermediate_size": 18432,
  "kv_lora_rank": 512,
  "model_type": "deepseek_v3",
  "moe_intermediate_size": 2048,
  "moe_layer_freq": 1,
  "n_group": 8,
  "n_routed_experts": 256,
  "n_shared_experts": 1,
  "num_attention_heads": 128,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 61,
  "num_key_value_heads": 128,
  "q_lora_rank": 1536,
  "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64,
  "quantization_config": {"fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]},
  "rope_scaling": {"factor": 40, "type": "yarn"},
  "v_head_dim": 128,
  "vocab_size": 129280
})";

std::string with_v32_indexer(std::string v3) {
  // DeepSeek-V3.2-Exp adds the lightning indexer to the V3 trunk.
  const std::string from = "\"model_type\": \"deepseek_v3\"";
  v3.replace(v3.find(from), from.size(),
             "\"model_type\": \"deepseek_v32\",\n  \"index_topk\": 2048,\n  \"index_n_heads\": 64,\n"
             "  \"index_head_dim\": 128");
  return v3;
}

std::string scenario_with_model(const std::string& model_yaml, const std::string& plan) {
  return "name: hf\nplatform: {preset: hgx-h100, nodes: 1, gpus_per_node: 8, calibration: ideal}\nmodel: " +
         model_yaml + "\nrun: {phase: prefill, seq_len: 32K, batch: 1, dtype: bf16}\n" + plan;
}

// Every field of cpsim's model, the oracle being the bundled YAML loaded the usual way.
void require_same_model(const ModelSpec& a, const ModelSpec& b) {
  CHECK(a.name == b.name);
  CHECK(a.layers == b.layers);
  CHECK(a.d_model == b.d_model);
  CHECK(a.n_heads == b.n_heads);
  CHECK(a.n_kv_heads == b.n_kv_heads);
  CHECK(a.head_dim == b.head_dim);
  CHECK(a.ffn_dim == b.ffn_dim);
  CHECK(a.vocab == b.vocab);
  CHECK(a.sliding_window == b.sliding_window);
  CHECK(a.mla.d_c == b.mla.d_c);
  CHECK(a.mla.rope_dim == b.mla.rope_dim);
  CHECK(a.moe.experts == b.moe.experts);
  CHECK(a.moe.top_k == b.moe.top_k);
  CHECK(a.moe.expert_ffn_dim == b.moe.expert_ffn_dim);
  CHECK(a.moe.shared_experts == b.moe.shared_experts);
  CHECK(a.moe.first_dense_layers == b.moe.first_dense_layers);
  CHECK(a.attention.pattern == b.attention.pattern);
  CHECK(a.attention.dsa_top_k == b.attention.dsa_top_k);
  CHECK(a.attention.indexer_heads == b.attention.indexer_heads);
  CHECK(a.attention.indexer_dim == b.attention.indexer_dim);
  CHECK(a.layer_params() == b.layer_params());
}

}  // namespace

TEST_CASE("hf_config: Llama-3-8B's config.json is the bundled llama3-8b model", "[hf_config]") {
  const std::string json = test::write_temp(kLlama3_8b, "llama3-8b-config.json");
  const std::string plan = "parallel: {cp: 4, tp: 1}\n";
  const Scenario bundled = test::scenario_from(scenario_with_model("models/llama3-8b.yaml", plan));
  const Scenario imported =
      test::scenario_from(scenario_with_model("{hf_config: " + json + ", name: llama3-8b}", plan));
  require_same_model(imported.model, bundled.model);
  // Keys beside hf_config and --set model.* override the imported fields, as for a YAML model.
  const Scenario two_layers =
      test::scenario_from(scenario_with_model("{hf_config: " + json + "}", plan), {"model.layers=2"});
  CHECK(two_layers.model.layers == 2);
  CHECK(two_layers.model.name == "llama");  // no _name_or_path: the architecture names it
  // summary.json's inputs record the config.json that was read (oracle: the file written above, its size).
  const auto inputs = input_files_json(imported);
  const auto it = std::find_if(inputs.begin(), inputs.end(), [](const auto& i) { return i["role"] == "hf_config"; });
  REQUIRE(it != inputs.end());
  CHECK((*it)["path"] == std::filesystem::absolute(json).lexically_normal().string());
  CHECK((*it)["bytes"] == std::filesystem::file_size(json));
}

TEST_CASE("hf_config: DeepSeek-V3 and V3.2 configs are the bundled deepseek-v3.2 trunk", "[hf_config]") {
  const std::string plan = "parallel: {cp: 4, tp: 2}\ncp: {dsa: {algorithm: allgather}}\n";
  const Scenario bundled = test::scenario_from(scenario_with_model("models/deepseek-v3.2.yaml", plan));
  // V3.2: MLA (d_c = kv_lora_rank, rope_dim = qk_rope_head_dim), 256 experts top-8, DSA indexer: all of it.
  const std::string v32 = test::write_temp(with_v32_indexer(kDeepSeekV3), "deepseek-v32-config.json");
  const Scenario imported_v32 =
      test::scenario_from(scenario_with_model("{hf_config: " + v32 + ", name: deepseek-v3.2}", plan));
  require_same_model(imported_v32.model, bundled.model);
  // V3: the same trunk with dense MLA attention (no indexer in its config).
  const std::string v3 = test::write_temp(kDeepSeekV3, "deepseek-v3-config.json");
  const Scenario imported_v3 = test::scenario_from(
      scenario_with_model("{hf_config: " + v3 + ", name: deepseek-v3.2}", "parallel: {cp: 4, tp: 2}\n"),
      {"model.attention.pattern=[dsa]", "model.attention.dsa_top_k=2048", "cp.dsa.algorithm=allgather"});
  require_same_model(imported_v3.model, bundled.model);
  const Scenario dense_v3 =
      test::scenario_from(scenario_with_model("{hf_config: " + v3 + "}", "parallel: {cp: 4, tp: 2}\n"));
  CHECK(dense_v3.model.attention.pattern == AttentionSpec{}.pattern);
  CHECK(dense_v3.model.mla.d_c == 512);
}

TEST_CASE("hf_config: unsupported architectures and values are located in the JSON", "[hf_config][errors]") {
  const std::string plan = "parallel: {cp: 4, tp: 1}\n";
  auto error_of = [&](const std::string& json_text) {
    const std::string json = test::write_temp(json_text, "bad-config.json");
    try {
      test::scenario_from(scenario_with_model("{hf_config: " + json + "}", plan));
    } catch (const InputError& e) {
      return std::string(e.what()).substr(json.size());  // the message after the file name
    }
    return std::string("no error");
  };
  std::string bert = kLlama3_8b;
  bert.replace(bert.find("\"llama\""), 7, "\"bert\"");
  // Oracle: line 9, column 17 is the value of "model_type" in kLlama3_8b.
  CHECK(error_of(bert).rfind(":9:17: model.hf_config.model_type: 'bert' is not an architecture cpsim imports", 0) == 0);
  std::string text_layers = kLlama3_8b;
  text_layers.replace(text_layers.find("\"num_hidden_layers\": 32"), 23, "\"num_hidden_layers\": \"x\"");
  CHECK(error_of(text_layers) == ":11:24: model.hf_config.num_hidden_layers: expected an integer, got 'x'");
  std::string no_vocab = kLlama3_8b;
  no_vocab.replace(no_vocab.find(",\n  \"vocab_size\": 128256"), 24, "");
  CHECK(error_of(no_vocab).rfind(":1:1: model.hf_config", 0) == 0);
  std::string every_other = kDeepSeekV3;
  every_other.replace(every_other.find("\"moe_layer_freq\": 1"), 19, "\"moe_layer_freq\": 2");
  CHECK(error_of(every_other) ==
        ":9:21: model.hf_config.moe_layer_freq: must be 1 for cpsim: cpsim places experts on every layer after the "
        "leading dense ones");
  CHECK_THROWS_WITH(test::scenario_from(scenario_with_model("{hf_config: no-such-config.json}", plan)),
                    Catch::Contains("model.hf_config: config file 'no-such-config.json' not found"));
}
