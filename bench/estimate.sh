#!/usr/bin/env bash
# bench/estimate.sh — end-to-end benchmark of `ctxfold estimate` against the
# reference tokenizer (npm tiktoken), side by side in one run.
#
#   bench/estimate.sh                  # 10k, 100k and 1M nodes
#   bench/estimate.sh 10000 100000     # chosen sizes
#
# For each size it generates a session (bench/estimate-gen, deterministic),
# then measures:
#   cold      ctxfold estimate with no caches (all BPE work), all cores
#   cold/1    the same with GOMAXPROCS=1
#   warm      a second run: the stored result of the unchanged session
#   node-warm a run with only the per-node count cache (what a run after
#             an append costs: index nodes.jsonl, hash every line, no BPE)
#   ref       npm tiktoken encode_ordinary over the same strings (encode
#             time only, one thread: the WASM build has no threads)
# and prints a Markdown table row: nodes.jsonl size, cold/warm throughput
# (MB of nodes.jsonl per second of wall time), peak RSS (max of the runs),
# ref/cold time ratio (how many times faster than the reference), and
# whether the token totals agree exactly (ctxfold total − overhead ==
# reference tokens). Work files go to bench/out/estimate (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
out=bench/out/estimate
mkdir -p "$out"
go build -o "$out/ctxfold" .
if [ ! -d estimate/testdata/refgen/node_modules/tiktoken ]; then
	(cd estimate/testdata/refgen && npm ci --no-audit --no-fund >/dev/null)
fi
timer() { /usr/bin/time -f '%e %M %P' -o "$1" "${@:2}"; }

# The fixed part of every run: the process and the o200k rank table,
# measured on a 16-node fixture with no cache.
timer "$out/fixed.time" "$out/ctxfold" estimate fixtures/tools --no-cache --json >/dev/null
echo "fixed cost (\`ctxfold estimate fixtures/tools --no-cache\`): $(awk '{printf "%.0f MB", $2/1024}' "$out/fixed.time") peak RSS"
echo

echo "| nodes | nodes.jsonl | cold (all cores) | CPU used | cold (1 core) | warm | cold/warm | node-warm | cold/node-warm | peak RSS | reference encode | reference/cold | tokens equal |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:--|"
for n in "${sizes[@]}"; do
	dir="$out/s$n"
	[ -d "$dir" ] || go run ./bench/estimate-gen -n "$n" -o "$dir" >/dev/null
	rm -rf "$dir"/estimate.cache* "$dir"/cache/estimate*
	GOMAXPROCS=1 timer "$out/cold1.time" "$out/ctxfold" estimate "$dir" --json >/dev/null
	rm -rf "$dir"/estimate.cache* "$dir"/cache/estimate*
	timer "$out/cold.time" "$out/ctxfold" estimate "$dir" --json >"$out/cold.json"
	timer "$out/warm.time" "$out/ctxfold" estimate "$dir" --json >"$out/warm.json"
	rm -f "$dir/cache/estimate.view"
	timer "$out/nodewarm.time" "$out/ctxfold" estimate "$dir" --json >"$out/nodewarm.json"
	node bench/estimate-ref.js "$dir" >"$out/ref.json"
	node -e '
const fs = require("fs");
const [dir, out, n] = process.argv.slice(1);
const size = fs.statSync(dir + "/nodes.jsonl").size;
const t = (f) => fs.readFileSync(out + "/" + f, "utf8").trim().split("\n").pop().split(" ").map(parseFloat);
const cpu = t("cold.time")[2];
const [cold, coldKB] = t("cold.time"), [cold1, cold1KB] = t("cold1.time"), [warm, warmKB] = t("warm.time"), [nw, nwKB] = t("nodewarm.time");
const c = JSON.parse(fs.readFileSync(out + "/cold.json", "utf8"));
const w = JSON.parse(fs.readFileSync(out + "/warm.json", "utf8"));
const w2 = JSON.parse(fs.readFileSync(out + "/nodewarm.json", "utf8"));
const peak = Math.max(coldKB, cold1KB, warmKB, nwKB) / 1024;
const ref = JSON.parse(fs.readFileSync(out + "/ref.json", "utf8"));
const mb = size / 1e6, mbps = (s) => (mb / s).toFixed(2) + " MB/s";
const equal = c.total - c.categories.overhead === ref.tokens && c.total === w.total && c.total === w2.total;
const x = (a, b) => (a / Math.max(b, 0.005)).toFixed(1) + "×";
console.log(`| ${Number(n).toLocaleString("en")} | ${mb.toFixed(1)} MB | ${cold.toFixed(2)} s (${mbps(cold)}) | ${cpu}% | ${cold1.toFixed(2)} s (${mbps(cold1)}) | ${warm.toFixed(2)} s | ${x(cold, warm)} | ${nw.toFixed(2)} s | ${x(cold, nw)} | ${Math.round(peak)} MB (${(peak / mb * 100).toFixed(0)}% of file) | ${ref.encode_seconds.toFixed(2)} s | ${(ref.encode_seconds / cold).toFixed(2)}× | ${equal ? "yes" : "NO"} (${ref.tokens.toLocaleString("en")}) |`);
' "$dir" "$out" "$n"
done
