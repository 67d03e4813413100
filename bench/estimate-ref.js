// estimate-ref.js: the reference side of bench/estimate.sh. It counts the
// same strings ctxfold's estimate counts for every node of a session
// (text, thinking, tool-call names and arguments, tool results) with the
// npm package `tiktoken` (encode_ordinary), and prints one JSON line:
// {nodes, text_bytes, tokens, encode_seconds, wall_seconds}.
//
//	node bench/estimate-ref.js SESSION_DIR [o200k_base|cl100k_base]
//
// tiktoken is loaded from estimate/testdata/refgen/node_modules (npm ci
// there first). tokens must equal ctxfold's total minus its overhead
// category: the check that the two counted the same thing.
"use strict";

const fs = require("fs");
const path = require("path");
const readline = require("readline");
const { get_encoding } = require(path.join(__dirname, "..", "estimate", "testdata", "refgen", "node_modules", "tiktoken"));

const dir = process.argv[2];
const encName = process.argv[3] || "o200k_base";
if (!dir) {
  console.error("usage: node estimate-ref.js SESSION_DIR [encoding]");
  process.exit(2);
}

// Go's encoding/json escapes these in raw arguments; match its bytes.
function goJSON(v) {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function argumentsText(a) {
  if (a === undefined || a === null) return "{}";
  if (typeof a === "string") return a;
  return goJSON(a);
}

function strings(n) {
  const out = [];
  const c = n.content;
  if (typeof c === "string") out.push(c);
  else if (Array.isArray(c)) {
    for (const b of c) {
      if (b.type === "tool_call") out.push(b.name || "", argumentsText(b.arguments));
      else if (b.type !== "image" && b.text) out.push(b.text);
    }
  }
  for (const tc of n.tool_calls || []) out.push(tc.name || "", argumentsText(tc.arguments));
  return out;
}

async function main() {
  const wall0 = process.hrtime.bigint();
  const enc = get_encoding(encName);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, "session.json"), "utf8"));
  const rl = readline.createInterface({ input: fs.createReadStream(path.join(dir, "nodes.jsonl"), { encoding: "utf8" }), crlfDelay: Infinity });
  let nodes = 0, tokens = 0, bytes = 0, encodeNs = 0n;
  for await (const line of rl) {
    if (!line) continue;
    const n = JSON.parse(line);
    nodes++;
    for (const s of strings(n)) {
      if (!s) continue;
      bytes += Buffer.byteLength(s, "utf8");
      const t0 = process.hrtime.bigint();
      tokens += enc.encode_ordinary(s).length;
      encodeNs += process.hrtime.bigint() - t0;
    }
  }
  enc.free();
  const wall = Number(process.hrtime.bigint() - wall0) / 1e9;
  console.log(JSON.stringify({ nodes, head: meta.head, text_bytes: bytes, tokens, encode_seconds: Number(encodeNs) / 1e9, wall_seconds: wall }));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
