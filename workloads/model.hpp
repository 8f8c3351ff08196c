// The pure data a workload generator reads: the model architecture, the run (phase, lengths, batch, dtype)
// and the parallel plan. Loaded from YAML by sim/scenario.cpp; no parsing here.
#pragma once
#include <cstdint>
#include <string>

namespace cpsim {

struct MlaSpec {
  int d_c = 0;        // KV latent width (DeepSeek MLA); 0 = the model has no MLA
  int rope_dim = 0;   // decoupled RoPE key width
};

// Mixture-of-experts FFN (DeepSeek style). experts == 0: every layer has a dense SwiGLU FFN of ffn_dim.
struct MoeSpec {
  int experts = 0;           // routed experts
  int top_k = 0;             // experts per token
  int expert_ffn_dim = 0;    // width of one expert's SwiGLU FFN
  int shared_experts = 0;    // always-on experts of the same width
  int first_dense_layers = 0;  // leading layers that keep a dense FFN of ffn_dim
};

struct ModelSpec {
  std::string name;
  int layers = 0;
  int d_model = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int ffn_dim = 0;
  int vocab = 0;
  int sliding_window = 0;   // tokens; 0 = full attention. Declared by SWA models, used by SWA workloads.
  MlaSpec mla;
  MoeSpec moe;

  // Per-token width of K (and of V): n_kv_heads * head_dim. The seeds' d_kv.
  std::int64_t d_kv() const { return std::int64_t(n_kv_heads) * head_dim; }
  std::int64_t q_width() const { return std::int64_t(n_heads) * head_dim; }
  // Parameters of one transformer layer (attention projections + SwiGLU FFN; norms are negligible).
  double layer_params() const;
  double embedding_params() const { return 2.0 * vocab * d_model; }  // untied input + output embeddings
};

enum class Dtype { BF16, FP16, FP8, FP32 };
int dtype_bytes(Dtype d);
const char* dtype_name(Dtype d);

struct RunSpec {
  std::string phase = "prefill";
  std::uint64_t seq_len = 0;  // tokens per sequence (S)
  int batch = 1;
  Dtype dtype = Dtype::BF16;
};

struct ParallelSpec {
  int cp = 1;
  int tp = 1;
};

enum class Partition { CONTIGUOUS, ZIGZAG, STRIPED };
const char* partition_name(Partition p);

struct DenseCpPlan {
  std::string algorithm = "ring";
  Partition partition = Partition::ZIGZAG;
};

struct CpPlan {
  DenseCpPlan dense;
};

}  // namespace cpsim
