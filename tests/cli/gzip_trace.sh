#!/usr/bin/env bash
# `outputs.trace: gzip` writes trace.json.gz whose content is byte-identical to the plain trace.json of the same run
# (oracle: the uncompressed writer), names it in summary.json, and leaves no plain trace or temporary file behind.
set -eu
cpsim=$1; src=$2
cd "$src"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$cpsim" run scenarios/quickstart.yaml -o "$tmp/plain" --set model.layers=2 2>/dev/null
"$cpsim" run scenarios/quickstart.yaml -o "$tmp/gz" --set model.layers=2 --set outputs.trace=gzip 2>/dev/null
test "$(ls "$tmp/gz")" = "$(printf 'engine.json\nsummary.json\ntrace.json.gz')"
gzip -dc "$tmp/gz/trace.json.gz" | cmp - "$tmp/plain/trace.json"
/usr/bin/python3 - "$tmp/gz/summary.json" <<'PY'
import json, sys
assert json.load(open(sys.argv[1]))["trace"]["file"] == "trace.json.gz"
PY
"$cpsim" run scenarios/quickstart.yaml -o "$tmp/bad" --set outputs.trace=zip 2>"$tmp/err" && exit 1
grep -q "outputs.trace: 'zip' is not one of: true, false, gzip" "$tmp/err"
echo "gzip trace: ok"
