// gen.js writes ../vectors.jsonl.gz: test vectors for estimate's exact
// token counts. Each line is {"name", "text", "o200k_base", "cl100k_base"}
// where the counts come from the reference implementation, the npm package
// `tiktoken` (the Rust core compiled to WASM), with encode_ordinary: text
// is ordinary text, so a literal "<|endoftext|>" is not a special token.
//
// The corpus (> 1 MB) is generated deterministically from a fixed seed:
// prose, code, JSON, CJK, emoji, scripts with combining marks, long
// whitespace runs holding several newlines, numbers, a very long word,
// base64, plus the pinned tiktoken package's own README and typings (real
// text). Regenerate with:
//
//	cd estimate/testdata/refgen && npm ci && node gen.js
"use strict";

const fs = require("fs");
const path = require("path");
const zlib = require("zlib");
const { get_encoding } = require("tiktoken");

let seed = 0x5eed1234;
function rand() {
  // mulberry32
  seed |= 0;
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rand() * a.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const words = (
  "the of and to in is that it for was on are as with his they at be this from have or by one had not but what all were when we there can an your which their said if do will each about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know get through back much go good new write our me man too any day same right look think also around another came come work three word must because does part even place well such here take why things help put years different away again off went old number great tell men say small every found still between name should home big give air line set own under read last never us left end along while might next sound below saw something thought both few those always looked show large often together asked house don't world going want school important until form food keep children feet land side without boy once animals life enough took sometimes four head above kind began almost live page got earth need far hand high year mother light parts country father let night following picture being study second eyes soon times story boys since white days ever paper hard near sentence better best across during today others however sure means knew it's try told young miles sun ways thing whole hear example heard several change answer room sea against top turned learn point city play toward five using himself usually"
).split(" ");
const caps = ["I'm", "DON'T", "We'll", "They've", "she'd", "You're", "IT'S", "o'clock", "rock'n'roll", "Ma'am", "JSON", "HTTPServer", "iPhone", "McDonald's", "NASA", "x86_64", "GPT-4o", "Überprüfung", "naïve", "café", "résumé", "Ångström", "straße"];
const punct = [".", ",", ";", ":", "!", "?", " —", " -", "…", "'", "\"", "(", ")", " [", "]"];

function prose(n) {
  let out = [];
  for (let i = 0; i < n; i++) {
    let len = int(4, 24);
    let s = [];
    for (let j = 0; j < len; j++) {
      let w = rand() < 0.08 ? pick(caps) : pick(words);
      if (j === 0) w = w[0].toUpperCase() + w.slice(1);
      if (rand() < 0.05) w = String(int(0, 99999));
      if (rand() < 0.03) w = int(1, 12) + "." + int(0, 9999);
      s.push(w);
      if (rand() < 0.07) s[s.length - 1] += pick(punct);
    }
    out.push(s.join(" ") + pick([".", ".", ".", "?", "!", "...", ":"]));
    if (rand() < 0.15) out.push(pick(["\n", "\n\n", "\n\n\n", "  \n", "\r\n", "\n \n", "\t\n"]));
  }
  return out.join(" ");
}

function ident() {
  const parts = ["user", "id", "count", "node", "parse", "buf", "err", "ctx", "tx", "value", "key", "max", "len", "item", "result", "HTTP", "JSON", "Read", "Write", "token"];
  let s = pick(parts);
  for (let k = int(0, 2); k > 0; k--) s += pick(parts).replace(/^./, (c) => (rand() < 0.5 ? c.toUpperCase() : c));
  return s;
}

function goCode(n) {
  let out = ["package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n"];
  for (let i = 0; i < n; i++) {
    let f = ident();
    out.push(`// ${f} ${prose(1).toLowerCase()}\nfunc ${f}(${ident()} int, ${ident()} []string) (map[string]int, error) {\n`);
    for (let j = int(2, 9); j > 0; j--) {
      out.push(pick([
        `\tif ${ident()} != nil {\n\t\treturn nil, fmt.Errorf("${ident()}: %w", err)\n\t}\n`,
        `\tfor i := 0; i < len(${ident()}); i++ {\n\t\t${ident()} += i * ${int(2, 4096)}\n\t}\n`,
        `\t${ident()} := strings.TrimSpace(${ident()}[${int(0, 9)}:])  // ${pick(words)} ${pick(words)}\n`,
        `\tswitch x := ${ident()}.(type) {\n\tcase int:\n\t\t_ = x\n\tdefault:\n\t}\n`,
        `\t\n\n\t${ident()} = append(${ident()}, "${pick(caps)}")\n`,
      ]));
    }
    out.push("\treturn nil, nil\n}\n\n");
  }
  return out.join("");
}

function pyCode(n) {
  let out = [];
  for (let i = 0; i < n; i++) {
    out.push(`def ${ident()}(self, ${ident()}=None, *args, **kwargs):\n    """${prose(1)}"""\n`);
    for (let j = int(2, 7); j > 0; j--) {
      out.push(pick([
        `    if ${ident()} is None:\n        raise ValueError(f"bad {${ident()}!r}")\n`,
        `    ${ident()} = [x ** 2 for x in range(${int(1, 300)}) if x % ${int(2, 9)} == 0]\n`,
        `    return {k: v for k, v in ${ident()}.items()}  # ${pick(words)}\n`,
        `        \n    \n    ${ident()} += 0x${int(0, 65535).toString(16)}\n`,
      ]));
    }
    out.push("\n\n");
  }
  return out.join("");
}

function jsonDoc(n) {
  let arr = [];
  for (let i = 0; i < n; i++) {
    arr.push({
      id: `n${int(1, 1e6)}`,
      role: pick(["user", "assistant", "tool", "system"]),
      content: prose(int(1, 3)),
      usage: { input_tokens: int(1, 200000), output_tokens: int(1, 4000) },
      tags: [pick(words), pick(caps), "\u00e9\u00e8\u4e2d\u6587", "\ud83d\ude00"],
      ok: rand() < 0.5,
      score: rand() * 100,
      nested: { a: [1, 2, [3, { b: null }]], path: "/usr/local/" + ident() + ".json" },
    });
  }
  return rand() < 0.5 ? JSON.stringify(arr, null, 2) : JSON.stringify(arr);
}

function range(lo, hi) {
  return () => String.fromCodePoint(int(lo, hi));
}
const cjk = range(0x4e00, 0x9fff);
const hira = range(0x3041, 0x3096);
const kata = range(0x30a1, 0x30fa);
const hangul = range(0xac00, 0xd7a3);
function cjkText(n) {
  let out = "";
  for (let i = 0; i < n; i++) {
    let g = pick([cjk, cjk, cjk, hira, kata, hangul]);
    for (let k = int(1, 12); k > 0; k--) out += g();
    out += pick(["", "", "。", "、", "，", "！", "？", " ", "「", "」", "\n", "（", "）", "123", "abc"]);
  }
  return out;
}

const emojiList = ["😀", "😂", "🥲", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇯🇵", "🇺🇸", "❤️", "🔥", "✨", "🧑🏿‍💻", "🤖", "🎉", "🙏🏻", "👩‍🔬", "1️⃣", "©️", "🫠", "🪿"];
function emojiText(n) {
  let out = [];
  for (let i = 0; i < n; i++) {
    out.push(rand() < 0.5 ? pick(words) : "");
    for (let k = int(1, 5); k > 0; k--) out.push(pick(emojiList));
    if (rand() < 0.3) out.push("\n");
  }
  return out.join(rand() < 0.5 ? " " : "");
}

function scripts(n) {
  const samples = [
    "Привет, как дела? Съешь же ещё этих мягких французских булок.",
    "مرحبا بالعالم، هذا نص عربي مع تشكيل: كَتَبَ الطَّالِبُ",
    "नमस्ते दुनिया, यह हिन्दी पाठ है। क्षत्रिय",
    "Γειά σου Κόσμε, ξεσκεπάζω την ψυχοφθόρα βδελυγμία",
    "e\u0301te\u0301 cafe\u0301 na\u0308ive A\u030angstro\u0308m",
    "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "שלום עולם, זהו טקסט בעברית",
    "Tiếng Việt có nhiều dấu: Đường phố Hà Nội",
    "ᚠᛇᚻ᛫ᛒᛦᚦ ∮ E⋅da = Q, n → ∞, ∑ f(i) = ∏ g(i) ≤ ½",
  ];
  let out = [];
  for (let i = 0; i < n; i++) out.push(pick(samples) + pick([" ", "\n", "  ", "\t", ""]));
  return out.join("");
}

function whitespace(n) {
  const runs = ["  \n  \n", " \n \n \n", "\n\n\n\n", "\t\t\n\t", "    ", "        \n", "\r\n\r\n", " \r\n ", "\u00a0\u00a0", "\u3000", "\n  \n\n   \n    ", "\t \t \n", " ", "\n"];
  let out = "";
  for (let i = 0; i < n; i++) {
    out += pick(runs).repeat(int(1, 6));
    out += rand() < 0.6 ? pick(words) : pick(["(", "{", "}", ".", "//", "#", "- ", "* ", "1.", "'s", "'LL"]);
  }
  return out;
}

function base64(n) {
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  let s = "";
  for (let i = 0; i < n; i++) s += abc[int(0, 63)];
  return s + "==";
}

function numbers(n) {
  let out = [];
  for (let i = 0; i < n; i++) {
    out.push(pick([String(int(0, 1e9)), (rand() * 1e6).toFixed(int(0, 8)), "0x" + int(0, 1e9).toString(16), "2026-11-" + String(int(1, 30)).padStart(2, "0") + "T09:00:00Z", "1,234,567", "-42", "3.14159265358979", "١٢٣٤", "½", "²³"]));
  }
  return out.join(pick([" ", ", ", "\n", "\t", ""]));
}

const vectors = [];
const add = (name, text) => vectors.push({ name, text });

for (let i = 0; i < 40; i++) add(`prose-${i}`, prose(int(40, 140)));
for (let i = 0; i < 20; i++) add(`go-${i}`, goCode(int(5, 25)));
for (let i = 0; i < 12; i++) add(`python-${i}`, pyCode(int(5, 25)));
for (let i = 0; i < 15; i++) add(`json-${i}`, jsonDoc(int(5, 30)));
for (let i = 0; i < 15; i++) add(`cjk-${i}`, cjkText(int(200, 900)));
for (let i = 0; i < 10; i++) add(`emoji-${i}`, emojiText(int(100, 400)));
for (let i = 0; i < 10; i++) add(`scripts-${i}`, scripts(int(30, 120)));
for (let i = 0; i < 15; i++) add(`whitespace-${i}`, whitespace(int(200, 800)));
for (let i = 0; i < 6; i++) add(`numbers-${i}`, numbers(int(300, 900)));
add("long-word", "Supercalifragilisticexpialidocious".repeat(1200));
add("long-letter-run", "a".repeat(40000));
add("long-cjk-run", Array.from({ length: 8000 }, cjk).join(""));
add("base64-blob", base64(60000));
add("long-digits", "1234567890".repeat(3000));
add("long-spaces", " ".repeat(20000) + "x" + "\n".repeat(5000) + " \n".repeat(3000) + "end");
add("special-literals", "Text with <|endoftext|> and <|fim_prefix|><|fim_middle|><|fim_suffix|> and <|endofprompt|> inside, " + prose(20));
add("mixed-all", [prose(30), goCode(3), jsonDoc(3), cjkText(200), emojiText(60), scripts(20), whitespace(100), numbers(100)].join("\n"));
add("empty-lines", "\n".repeat(7) + "  " + "\r\n".repeat(9));
add("single-space", " ");

const mod = path.join(__dirname, "node_modules", "tiktoken");
for (const f of ["README.md", "tiktoken.d.ts", "lite/tiktoken.d.ts", "tiktoken_bg.cjs", "package.json"]) {
  const p = path.join(mod, f);
  if (fs.existsSync(p)) add(`tiktoken-pkg/${f}`, fs.readFileSync(p, "utf8"));
}

const encs = ["o200k_base", "cl100k_base"];
const encoders = Object.fromEntries(encs.map((e) => [e, get_encoding(e)]));
let bytes = 0;
const lines = vectors.map((v) => {
  const o = { name: v.name, text: v.text };
  for (const e of encs) o[e] = encoders[e].encode_ordinary(v.text).length;
  bytes += Buffer.byteLength(v.text, "utf8");
  return JSON.stringify(o);
});
for (const e of encs) encoders[e].free();
const out = path.join(__dirname, "..", "vectors.jsonl.gz");
fs.writeFileSync(out, zlib.gzipSync(Buffer.from(lines.join("\n") + "\n"), { level: 9 }));
const version = JSON.parse(fs.readFileSync(path.join(mod, "package.json"), "utf8")).version;
console.log(`${out}: ${vectors.length} vectors, ${bytes} bytes of text, reference tiktoken ${version}`);
