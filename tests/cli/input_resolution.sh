#!/usr/bin/env bash
# Paths inside a scenario resolve against the scenario's own folder (then the installed data), never the working
# directory; summary.json records each input's absolute path and content hash. Oracle: the rule in
# docs/robustness.md ("Inputs"): a model file beside the scenario wins over the bundled one of the same name, and
# the result is the same from any working directory. Usage: input_resolution.sh CPSIM SOURCE_DIR
set -eu
cpsim=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/proj/models" "$tmp/elsewhere/models"
sed 's/^layers: .*/layers: 3/' "$src/models/llama3-8b.yaml" > "$tmp/proj/models/llama3-8b.yaml"
sed 's/^layers: .*/layers: 5/' "$src/models/llama3-8b.yaml" > "$tmp/elsewhere/models/llama3-8b.yaml"
cat > "$tmp/proj/s.yaml" <<'YAML'
name: resolution
platform: {preset: hgx-h100, nodes: 1, gpus_per_node: 8}
model: models/llama3-8b.yaml
run: {phase: prefill, seq_len: 32K}
parallel: {cp: 2}
outputs: {trace: false}
YAML
(cd "$tmp/elsewhere" && "$cpsim" run "$tmp/proj/s.yaml" -o "$tmp/a" >/dev/null 2>&1)
(cd / && "$cpsim" run "$tmp/proj/s.yaml" -o "$tmp/b" >/dev/null 2>&1)
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
a, b = (json.load(open(f"{t}/{d}/summary.json")) for d in "ab")
assert a["scenario"]["model"]["layers"] == 3, a["scenario"]["model"]   # the file beside the scenario, not cwd's
assert a == b, "different results from different working directories"
inputs = {i["role"]: i for i in a["scenario"]["inputs"]}
assert inputs["model"]["path"] == f"{t}/proj/models/llama3-8b.yaml", inputs
assert inputs["scenario"]["path"] == f"{t}/proj/s.yaml" and len(inputs["scenario"]["fnv1a64"]) == 16, inputs
print("inputs resolve beside the scenario; same result from any folder")
PY
