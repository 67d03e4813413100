// Parses Mermaid diagrams with the real mermaid package (mermaid.parse
// under jsdom). Exits non-zero naming the first file the parser rejects,
// with its message. Usage: node mermaid-parse.mjs MODULES_DIR FILE...
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [dir, ...files] = process.argv.slice(2);
const { JSDOM } = await import(pathToFileURL(join(dir, "node_modules/jsdom/lib/api.js")).href);
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const mermaid = (await import(pathToFileURL(join(dir, "node_modules/mermaid/dist/mermaid.core.mjs")).href)).default;
for (const f of files) {
  try {
    const res = await mermaid.parse(readFileSync(f, "utf8"));
    console.log(f + ": " + JSON.stringify(res));
  } catch (e) {
    console.error(f + ": " + String(e && e.message ? e.message : e));
    process.exit(1);
  }
}
