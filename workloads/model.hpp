// The pure data a workload generator reads: the model architecture, the run (phase, lengths, batch, dtype)
// and the parallel plan. Loaded from YAML by sim/scenario/scenario.cpp; no parsing here.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "platforms/network_calibration.hpp"
#include "workloads/attention/kind.hpp"
#include "workloads/enum_names.hpp"
#include "workloads/traffic.hpp"

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

// Attention per layer (heterogeneous-attention-cp.md). `pattern` repeats over the layers; an entry is one kind or
// '+'-joined kinds computed side by side in the same layer (DeepSeek-V4: "swa+csa", "swa+hca"). Kinds: dense,
// swa, csa (compressed sparse, ratio csa_ratio, indexer top-k), hca (heavily compressed dense, ratio hca_ratio),
// dsa (DeepSeek sparse attention: indexer top-k over all tokens), moba (block-sparse), linear (linear attention).
struct AttentionSpec {
  std::vector<LayerKinds> pattern{{AttentionKind::DENSE}};
  int csa_ratio = 4;         // C4
  int hca_ratio = 128;       // C128 (the seed's m')
  int csa_top_k = 512;       // compressed entries each query attends to
  int dsa_top_k = 2048;      // tokens each query attends to
  int indexer_heads = 64;    // lightning indexer (FP8)
  int indexer_dim = 128;
  int moba_block = 512;      // tokens per MoBA block (the seed's B)
  int moba_top_k_blocks = 8;
  int ssm_state_dim = 128;   // Mamba-2 SSM: state size N per head (the state is [H, N, head_dim])
  int linear_chunk = 64;     // tokens per intra-chunk block of linear attention (Lightning Attention / LASP-2)
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
  AttentionSpec attention;
  const LayerKinds& layer_kind(int layer) const { return attention.pattern[layer % attention.pattern.size()]; }
  bool uses(AttentionKind kind) const;  // whether any layer has this kind

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

// Per-operation dtypes (run.dtypes; each defaults to run.dtype): projections = QKV/O GEMMs and their weights,
// ffn = FFN GEMMs and weights (FP8 FFN as Meta runs Llama3-405B), attention = attention kernels, kv_cache = KV cache
// memory and CP KV transfers, activations = TP/EP collective payloads and activation memory.
struct OpDtypes {
  Dtype projections = Dtype::BF16, ffn = Dtype::BF16, attention = Dtype::BF16, kv_cache = Dtype::BF16,
        activations = Dtype::BF16;
};

// run.recompute (training): which activations the forward pass keeps for the backward pass.
//   none      every layer's working set (below)
//   selective Megatron-Core's selective recomputation of core attention and the MLP: each layer keeps its input,
//             normed input, Q/K/V and attention output; the ring's receive buffers and the FFN's gate/up
//             intermediates are recomputed, so one layer's worth of them is live at a time
//   full      each layer keeps its input only (activation checkpointing) and one layer's working set is live while
//             it is recomputed
enum class Recompute { NONE, SELECTIVE, FULL };

enum class Phase : std::uint8_t { PREFILL, DECODE, TRAIN };
constexpr EnumNames<Phase, 3> kPhaseNames{{{{Phase::PREFILL, "prefill"}, {Phase::DECODE, "decode"}, {Phase::TRAIN, "train"}}}};
inline const char* phase_name(Phase p) { return kPhaseNames.name(p); }

struct RunSpec {
  Phase phase = Phase::PREFILL;
  std::uint64_t seq_len = 0;  // tokens per sequence (S); decode: the context length (KV already cached)
  int new_tokens = 1;         // decode: output tokens generated (one decode step each)
  std::uint64_t cached_tokens = 0;  // prefill: tokens already in the persistent KV cache (sharded over CP ranks)
  int micro_batches = 1;      // independent batches of `batch` sequences, interleaved per layer (decode: HOP-B)
  int batch = 1;
  Dtype dtype = Dtype::BF16;
  bool full_mask = false;  // run.mask: full (non-causal dense attention) instead of causal
  OpDtypes dtypes;
  // Tasks the workload may have (run.max_tasks, `--max-tasks`): ~320 bytes each at the simulation's peak
  // (kPeakBytesPerTask), so the default is ~16 GB.
  std::uint64_t max_tasks = 50000000;
  // run.fast_path (`--no-fast-path` turns it off): simulate one GPU per symmetry orbit when the plan, the platform
  // and the graph allow it (workloads/rank_symmetry.hpp); off = every GPU, the reference the fast path must equal.
  bool fast_path = true;
  // run.closed_form_flows (opt-in, needs the fast path): a flow alone on its route ends on a timer instead of an engine
  // comm (sim/engine/executor.hpp). Not bit-identical to the engine: same-date events run in another order, and a
  // flow that stops being alone rejoins the engine with its bytes left rounded to a byte (docs/performance.md).
  bool closed_form_flows = false;
  // run.on_oom: what a GPU whose memory exceeds its HBM does: warn (simulate, flag `fits: false`) or error (refuse).
  bool oom_is_error = false;
  Recompute recompute = Recompute::NONE;
  // run.memory_reserve: memory a GPU holds before the model's first byte. The CUDA context alone takes ~700-800 MiB
  // (PyTorch forums: 723 MiB after the first CUDA call, discuss.pytorch.org/t/73021; "~700+MB depending on the
  // CUDA version", /t/81330); 768 MiB by default.
  double memory_reserve_bytes = 768.0 * (1 << 20);
};

// A fixed choice for the collectives of one traffic class (scenario `collectives:`); nullopt = NCCL's cost model
// (`auto`).
struct CollectiveOverride {
  std::optional<CollectiveAlgorithm> algorithm;  // ring | tree | nvls | hierarchical
  std::optional<Protocol> protocol;              // LL | LL128 | Simple
  int channels = 0;                              // 0 = the platform's (one per rail, capped by the calibration)
};

// parallel.grad_sync (training): per layer as soon as its backward is done, once after the backward, or not at all.
enum class GradSync : std::uint8_t { NONE, OVERLAP, END };
constexpr EnumNames<GradSync, 3> kGradSyncNames{
    {{{GradSync::OVERLAP, "overlap"}, {GradSync::END, "end"}, {GradSync::NONE, "none"}}}};

// parallel.pp_schedule: the order a pipeline stage runs its micro-batches (workloads/pipeline_schedule.hpp).
enum class PipelineSchedule : std::uint8_t { ONE_F_ONE_B, INTERLEAVED, GPIPE };
constexpr EnumNames<PipelineSchedule, 3> kPipelineScheduleNames{{{{PipelineSchedule::ONE_F_ONE_B, "1f1b"},
                                                                  {PipelineSchedule::INTERLEAVED, "interleaved"},
                                                                  {PipelineSchedule::GPIPE, "gpipe"}}}};

struct ParallelSpec {
  int cp = 1;
  int tp = 1;
  int dp = 1;  // replicas of the CP x TP group (placement only: every replica runs the same schedule)
  int pp = 1;  // pipeline stages, each holding L / pp layers on its own CP x TP group (workloads/pipeline_schedule.hpp)
  PipelineSchedule pp_schedule = PipelineSchedule::ONE_F_ONE_B;
  int pp_virtual_stages = 1;  // model chunks per stage (interleaved schedule)
  int ep = 1;  // expert parallelism for MoE layers: 1, tp (experts over the TP group) or tp * cp (over all GPUs)
  double ep_hot_share = 0;        // share of each GPU's routed tokens sent to EP rank 0's experts; 0 = uniform
  double ep_capacity_factor = 0;  // cap on an EP rank's routed load, times the uniform load; 0 = no cap
  // parallel.zero (training): ZeRO stage of the distributed optimizer, sharded over the dp x cp ranks that hold the
  // same weights (Megatron's distributed optimizer): 1 shards optimizer states, 2 also gradients, 3 also weights.
  int zero = 0;
  bool sequence_parallel = false;  // TP all-gather + reduce-scatter around each half instead of all-reduces
  // Training: gradient all-reduce over the DP x CP group (ranks holding the same weights), per layer as soon as
  // its backward is done (overlap), once after the backward (end), or not simulated (none).
  GradSync grad_sync = GradSync::NONE;
  int simulated_dp = 1;  // DP replicas simulated side by side: dp when gradients are synchronized, else 1
  bool cp_inner = false;  // parallel.order: true = CP ranks are consecutive GPUs, TP strided
  std::vector<std::string> order{"tp", "cp", "pp", "dp"};  // innermost first
  std::map<Traffic, CollectiveOverride> collectives;  // by traffic class
  // Megatron userbuffers-style TP overlap: the TP all-gather / reduce-scatter around each GEMM are chunked and run
  // on a communication stream beside the GEMM's chunks (needs sequence_parallel).
  bool tp_comm_overlap = false;
  // Why a requested overlap is off ("" = as requested): Megatron's rule under `contention.mode: exclusive`.
  std::string tp_comm_overlap_off;
  int gpus_per_node = 0;  // from the platform (GPU ids are ordered node by node); 0 = unknown, one node
};

enum class Partition { CONTIGUOUS, ZIGZAG, STRIPED };
constexpr EnumNames<Partition, 3> kPartitionNames{
    {{{Partition::CONTIGUOUS, "contiguous"}, {Partition::ZIGZAG, "zigzag"}, {Partition::STRIPED, "striped"}}}};
inline const char* partition_name(Partition p) { return kPartitionNames.name(p); }

// DSA AllGather-CP's token split (SGLang --dsa-prefill-cp-mode): round-robin-split (token i on rank i mod N, the
// default; S mod N = 0) or in-seq-split (zigzag: 2N blocks, rank r holds blocks r and 2N-1-r; batch 1).
enum class DsaSplit { ROUND_ROBIN, ZIGZAG };
constexpr EnumNames<DsaSplit, 2> kDsaSplitNames{{{{DsaSplit::ROUND_ROBIN, "round-robin"}, {DsaSplit::ZIGZAG, "zigzag"}}}};

struct DenseCpPlan {
  CpAlgorithm algorithm = CpAlgorithm::RING;
  bool algorithm_given = false;  // cp.dense.algorithm is in the scenario (not the default)
  Partition partition = Partition::ZIGZAG;
  bool partition_given = false;  // cp.dense.partition is in the scenario
  int ulysses_degree = 1;  // usp: Ulysses group size (ring across cp / ulysses_degree groups)
  double auto_miss_rate_threshold = 0.05;  // auto: pass-Q below this KV miss rate T / (T + cached), else pass-KV
  // auto: how the candidate is chosen. false (`auto_rule: simulated`, the default): the one cpsim simulates faster;
  // true (`auto_rule: miss-rate`): Meta's closed-form rule on the threshold above, whatever the simulation says.
  bool auto_by_miss_rate = false;
};

// Where MoBA's selected blocks live (heterogeneous-attention-cp.md, "负载均衡盲点"): spread evenly over the ranks,
// biased towards the query's own and nearest earlier ranks, or concentrated on one hot rank.
enum class BlockSelection { UNIFORM, RECENCY, SKEWED };
constexpr EnumNames<BlockSelection, 3> kBlockSelectionNames{
    {{{BlockSelection::UNIFORM, "uniform"}, {BlockSelection::RECENCY, "recency"}, {BlockSelection::SKEWED, "skewed"}}}};
struct MobaCpPlan {
  BlockSelection selection = BlockSelection::UNIFORM;
  double hot_fraction = 0.5;  // skewed: share of every rank's selected blocks that rank `hot_rank` owns
  int hot_rank = 0;
};

struct CpPlan {
  DenseCpPlan dense;
  // CP algorithm per non-dense attention kind (absent: the kind's registered default).
  std::map<AttentionKind, CpAlgorithm> algorithms;
  MobaCpPlan moba;
  // Kinds whose select-then-gather runs the exact distributed top-k in prefill and training (cp.<kind>.exact);
  // the others score each rank's queries against its local keys only (approximate).
  std::set<AttentionKind> exact_selection;
  DsaSplit dsa_partition = DsaSplit::ROUND_ROBIN;  // cp.dsa.partition
  CpAlgorithm algorithm(AttentionKind kind) const;
};

}  // namespace cpsim
