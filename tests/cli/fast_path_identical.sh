#!/usr/bin/env bash
# The fast path (one GPU per TP-rotation orbit, workloads/rank_symmetry.hpp) against the full simulation
# (--no-fast-path): summary.json must be byte-identical. Oracle: the full simulation of the same input. The matrix
# covers every attention kind, prefill / decode / training, every contention mode, TP comm overlap, micro-batches
# and pipeline stages, each with tp > 1 so that the collapse is tried (and 4 layers, so that layer repetition copies
# the last ones where the stack is uniform: --no-fast-path must copy none); engine.json must say it collapsed (or, for
# exclusive admission and asymmetric EP routing, that it did not, and why). Then every shipped scenario's default
# point (scenarios/, bench/ but its 512-GPU cases, validation/) the same way.
# Each point also runs with run.closed_form_flows (lone flows on timers, not bit-identical by design): every number
# of its summary within 1e-7 relative of the full simulation's, or 1 ns (1e-9) absolute; the worst is printed.
set -u
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# compare NAME EXPECT(collapsed|whole) SCENARIO [--set ...]
compare() {
  local name=$1 expect=$2 file=$3; shift 3
  local args=(--set outputs.trace=false "$@")
  grep -q "phase: serve" "$file" && args+=(--set serve.cost_cache=none)
  if ! "$cpsim" -q run "$file" "${args[@]}" -o "$tmp/fast" >/dev/null 2>"$tmp/err"; then
    fail "$name: fast run failed: $(tail -1 "$tmp/err")"; return
  fi
  if ! "$cpsim" -q run "$file" "${args[@]}" --no-fast-path -o "$tmp/full" >/dev/null 2>"$tmp/err"; then
    fail "$name: full run failed: $(tail -1 "$tmp/err")"; return
  fi
  cmp -s "$tmp/fast/summary.json" "$tmp/full/summary.json" || { fail "$name: summaries differ"; return; }
  if ! "$cpsim" -q run "$file" "${args[@]}" --set run.closed_form_flows=true -o "$tmp/closed" >/dev/null 2>"$tmp/err"; then
    fail "$name: closed-form run failed: $(tail -1 "$tmp/err")"; return
  fi
  local agreement
  agreement=$(/usr/bin/python3 - "$tmp/closed/summary.json" "$tmp/full/summary.json" <<'PY'
import json, sys
worst = [0.0, 0.0, ""]  # relative, absolute, where
def walk(x, y, path):
    if isinstance(x, dict):
        assert isinstance(y, dict) and x.keys() == y.keys(), path
        for k in x: walk(x[k], y[k], path + "." + k)
    elif isinstance(x, list):
        assert isinstance(y, list) and len(x) == len(y), path
        for i, (u, v) in enumerate(zip(x, y)): walk(u, v, f"{path}[{i}]")
    elif isinstance(x, float) or isinstance(y, float):
        err = abs(x - y)
        if err > 1e-9 and err / max(abs(x), abs(y)) > worst[0]: worst[:] = [err / max(abs(x), abs(y)), err, path]
    else:
        assert x == y, (path, x, y)
walk(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), "")
print(f"{worst[0]:.2g} {worst[2]}")
sys.exit(0 if worst[0] <= 1e-7 else 1)
PY
) || { fail "$name: closed form off by $agreement"; return; }
  [ -f "$tmp/fast/engine.json" ] || { echo "ok   $name (closed form within ${agreement% *})"; return 0; }  # serving
  local collapsed copied full_copied
  collapsed=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fast_path"]["collapsed"])' \
              "$tmp/fast/engine.json")
  copied=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fast_path"]["tasks_copied"])' \
           "$tmp/fast/engine.json")
  full_copied=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fast_path"]["tasks_copied"])' \
                "$tmp/full/engine.json")
  [ "$full_copied" = 0 ] || { fail "$name: --no-fast-path copied $full_copied tasks"; return; }
  case $expect in
    collapsed) [ "$collapsed" = True ] || { fail "$name: not collapsed: $(cat "$tmp/fast/engine.json")"; return; } ;;
    whole) [ "$collapsed" = False ] || { fail "$name: collapsed, expected the whole graph"; return; } ;;
  esac
  echo "ok   $name ($expect, $copied tasks copied; closed form within ${agreement% *})"
}

q=scenarios/quickstart.yaml  # Llama-3-8B, 8 x H100, S = 128K
base=(--set parallel.cp=4 --set parallel.tp=2 --set run.seq_len=32K --set model.layers=4)
compare "prefill ring zigzag" collapsed $q "${base[@]}"
compare "prefill ring, full mask" collapsed $q "${base[@]}" --set run.mask=full
compare "prefill allgather" collapsed $q "${base[@]}" --set cp.dense.algorithm=allgather
compare "prefill ulysses" collapsed $q "${base[@]}" --set cp.dense.algorithm=ulysses
compare "prefill pass-q, cached KV" collapsed $q "${base[@]}" --set cp.dense.algorithm=pass-q --set run.cached_tokens=96K
compare "prefill 2 nodes (PXN routes)" collapsed $q "${base[@]}" --set platform.nodes=2 --set parallel.cp=8 --set parallel.tp=2
compare "prefill tp 8, 2 nodes" collapsed $q "${base[@]}" --set platform.nodes=2 --set parallel.tp=8 --set parallel.cp=2
compare "prefill micro-batches" collapsed $q "${base[@]}" --set run.micro_batches=2
compare "prefill pipeline pp 2" collapsed $q "${base[@]}" --set parallel.cp=2 --set parallel.pp=2
compare "prefill tp comm overlap" collapsed $q "${base[@]}" --set parallel.tp_comm_overlap=true --set parallel.sequence_parallel=true
compare "prefill ideal machine" collapsed $q "${base[@]}" --set platform.calibration=ideal
for mode in fair staggered subtractive; do
  compare "prefill contention $mode" collapsed $q "${base[@]}" --set contention.mode=$mode
done
compare "prefill contention exclusive" whole $q "${base[@]}" --set contention.mode=exclusive
compare "decode tree" collapsed $q "${base[@]}" --set run.phase=decode --set cp.dense.algorithm=tree --set run.new_tokens=2
compare "decode pass-q" collapsed $q "${base[@]}" --set run.phase=decode --set cp.dense.algorithm=pass-q
compare "decode micro-batches" collapsed $q "${base[@]}" --set run.phase=decode --set cp.dense.algorithm=tree --set run.micro_batches=2 --set run.new_tokens=2
compare "train ring" collapsed $q "${base[@]}" --set run.phase=train
compare "train ulysses" collapsed $q "${base[@]}" --set run.phase=train --set cp.dense.algorithm=ulysses
compare "train micro-batches, full recompute" collapsed $q "${base[@]}" --set run.phase=train --set run.micro_batches=2 --set run.recompute=full
compare "train swa (mistral-7b)" collapsed $q "${base[@]}" --set run.phase=train --set model=models/mistral-7b.yaml
compare "swa boundary (mistral-7b)" collapsed $q "${base[@]}" --set model=models/mistral-7b.yaml
compare "swa+csa, swa+hca (deepseek-v4)" collapsed $q "${base[@]}" --set model=models/deepseek-v4.yaml
compare "dsa (glm-5)" collapsed $q "${base[@]}" --set model=models/glm-5.yaml
compare "moba skewed" collapsed scenarios/moba-skew.yaml "${base[@]}"
compare "linear lasp2" collapsed $q "${base[@]}" --set model=models/linear-8b.yaml
compare "linear lasp1" collapsed $q "${base[@]}" --set model=models/linear-8b.yaml --set cp.linear.algorithm=lasp1
compare "linear hybrid" collapsed $q "${base[@]}" --set model=models/linear-hybrid-8b.yaml
compare "decode swa (mistral-7b)" collapsed $q "${base[@]}" --set model=models/mistral-7b.yaml --set run.phase=decode --set cp.dense.algorithm=tree
# DeepSeek-V3.2's 4th layer is MoE: a hot expert on EP rank 0 gives GPU 0 more tokens than GPU 1 (refused while
# the graph is built), whereas its 3 dense layers alone are symmetric.
compare "asymmetric EP routing" whole scenarios/contention-modes.yaml --set parallel.ep_hot_share=0.2 --set model.layers=4
compare "dense layers of the same model" collapsed scenarios/contention-modes.yaml --set parallel.ep_hot_share=0.2 --set model.layers=2

for f in scenarios/*.yaml bench/*.yaml validation/scenarios/*.yaml; do
  case $f in bench/ring-70b-1m.yaml|bench/v4-mixed-1m.yaml) continue ;; esac  # 512 GPUs: the benchmark's
  compare "$f" any "$f"
done
[ $failures = 0 ] || { echo "$failures failures"; exit 1; }
