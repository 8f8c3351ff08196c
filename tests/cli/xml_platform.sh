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

# A host in an XML comment is no host (oracle: the summary counts the 2 x 2 GPUs of tests/bad_platforms/good.xml),
# and the same file runs cp 4 across its two nodes.
sed 's|    <host id="n1g1" speed="989Tf"/>|&\n    <!-- <host id="n1g2" speed="989Tf"/> -->|' tests/bad_platforms/good.xml > "$tmp/commented.xml"
grep -q '<!-- <host id="n1g2"' "$tmp/commented.xml"
cat > "$tmp/commented.yaml" <<YAML
name: commented
platform: {file: commented.xml, gpu: h100}
model: $src/models/llama3-8b.yaml
run: {phase: prefill, seq_len: 16K}
parallel: {cp: 4}
YAML
"$cpsim" validate "$tmp/commented.yaml" | grep -q "ok (2 x 2 GPUs"
"$cpsim" run "$tmp/commented.yaml" -o "$tmp/commented" --set model.layers=1 --set outputs.trace=false 2>/dev/null
grep -q '"gpus_per_node": 2' "$tmp/commented/summary.json"

# A workload on 8 GPUs of a 65,536-GPU cluster: the engine gets hosts and routes for the GPUs that talk only (oracle:
# a flat route table of all 65,536 hosts would need 32 GiB, which the platform builder refuses, so success shows it
# was not built).
"$cpsim" run scenarios/quickstart.yaml -o "$tmp/huge" --set platform.nodes=8192 --set model.layers=1 \
  --set outputs.trace=false 2>/dev/null
grep -q '"makespan_s"' "$tmp/huge/summary.json"
# An XML file of 4,100 x 8 hosts: SimGrid would allocate a 32,800^2 route table; refused at the first host past
# 32,768 (oracle: that host is on line 3 + 32,769 of the file written here).
{ printf "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
  printf '<platform version="4.1"><zone id="w" routing="Full">\n'
  for n in $(seq 0 4099); do for g in 0 1 2 3 4 5 6 7; do printf '<host id="n%dg%d" speed="1Gf"/>\n' $n $g; done; done
  printf '</zone></platform>\n'; } > "$tmp/many.xml"
sed 's|commented.xml|many.xml|; s|cp: 4|cp: 1|' "$tmp/commented.yaml" > "$tmp/many.yaml"
set +e; msg=$("$cpsim" validate "$tmp/many.yaml" 2>&1 >/dev/null); rc=$?; set -e
[ $rc -eq 2 ] && [ "$msg" = "$tmp/many.xml:32772:1: host: more than 32768 hosts: SimGrid's Full zone would need 8 GiB for its route table; generate large clusters from a preset instead" ] \
  || { echo "FAIL many hosts: rc=$rc $msg"; exit 1; }
echo "xml platform: commented host ignored, large cluster built for the GPUs that talk"

# A FLAT <cluster> as the whole platform (SimGrid's own shorthand: hosts gpu-<i>.example, a private split-duplex
# link each, one backbone; cpsim.gpus_per_node = 4 makes 2 nodes) simulates exactly like the same star written out
# as hosts, links and routes (oracle: SimGrid's cluster route is private link UP, backbone, private link DOWN).
cat > "$tmp/cluster.xml" <<'XML'
<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="gpu-" suffix=".example" radical="0-7" speed="989Tf" bw="50GBps" lat="2us"
           sharing_policy="SPLITDUPLEX" bb_bw="100GBps" bb_lat="1us">
    <prop id="cpsim.gpus_per_node" value="4"/>
  </cluster>
</platform>
XML
{
  printf '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n<platform version="4.1">\n'
  printf '<zone id="world" routing="Full">\n'
  for i in 0 1 2 3 4 5 6 7; do printf '<host id="n%dg%d" speed="989Tf"/>\n' $((i / 4)) $((i % 4)); done
  for i in 0 1 2 3 4 5 6 7; do
    printf '<link id="c_link_%d" bandwidth="50GBps" latency="2us" sharing_policy="SPLITDUPLEX"/>\n' $i
  done
  printf '<link id="c_backbone" bandwidth="100GBps" latency="1us"/>\n'
  for i in 0 1 2 3 4 5 6 7; do for j in 0 1 2 3 4 5 6 7; do
    [ $i = $j ] && continue
    printf '<route src="n%dg%d" dst="n%dg%d" symmetrical="NO"><link_ctn id="c_link_%d" direction="UP"/>' \
      $((i / 4)) $((i % 4)) $((j / 4)) $((j % 4)) $i
    printf '<link_ctn id="c_backbone"/><link_ctn id="c_link_%d" direction="DOWN"/></route>\n' $j
  done; done
  printf '</zone>\n</platform>\n'
} > "$tmp/star.xml"
for p in cluster star; do
  sed "s#platforms/h100-2x4-spine.xml#$tmp/$p.xml#" scenarios/ring-spine-xml.yaml > "$tmp/$p.yaml"
  "$cpsim" run "$tmp/$p.yaml" -o "$tmp/$p" --set model.layers=1 --set outputs.trace=false 2>/dev/null
done
a=$(grep '"makespan_s"' "$tmp/cluster/summary.json"); b=$(grep '"makespan_s"' "$tmp/star/summary.json")
echo "cluster $a / written out $b"
[ "$a" = "$b" ]
# ... and its 8 hosts are 2 nodes of 4 (oracle: cpsim.gpus_per_node = 4, radical order).
/usr/bin/python3 - "$tmp/cluster/summary.json" <<'PY'
import json, sys
ranks = json.load(open(sys.argv[1]))["ranks"]
assert [(r["node"], r["local_gpu"]) for r in ranks] == [(g // 4, g % 4) for g in range(8)], ranks
PY
echo "xml platform: a FLAT cluster equals its written-out star"
