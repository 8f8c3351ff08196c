#!/usr/bin/env bash
# A platform loaded from the shipped XML (platforms/hgx-h100-2x8.xml, written by `cpsim platform --emit-xml`)
# simulates exactly like the preset it came from (oracle: the same topology built two ways must give the same
# makespan, bit for bit), and `cpsim platform --emit-xml` reproduces the shipped file.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cpsim" platform scenarios/quickstart.yaml --set platform.nodes=2 --emit-xml "$tmp/gen.xml" 2>/dev/null
cmp "$tmp/gen.xml" platforms/hgx-h100-2x8.xml
common=(--set run.seq_len=64K --set parallel.cp=16 --set model.layers=2 --set outputs.trace=false)
"$cpsim" run scenarios/quickstart.yaml -o "$tmp/preset" --set platform.nodes=2 "${common[@]}" 2>/dev/null
cat > "$tmp/xml.yaml" <<YAML
name: xml
platform: {file: platforms/hgx-h100-2x8.xml, gpu: h100}
model: models/llama3-8b.yaml
run: {phase: prefill, seq_len: 128K}
parallel: {cp: 8}
YAML
"$cpsim" run "$tmp/xml.yaml" -o "$tmp/xml" "${common[@]}" 2>/dev/null
a=$(grep '"makespan_s"' "$tmp/preset/summary.json"); b=$(grep '"makespan_s"' "$tmp/xml/summary.json")
echo "preset $a / xml $b"
[ "$a" = "$b" ]
