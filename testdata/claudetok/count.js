// Counts each string of a JSON array (argv[2]) with the vocabulary of the
// npm package @anthropic-ai/tokenizer, resolved from NODE_PATH; prints the
// counts as a JSON array. Used by TestClaudeProxyTracking (proxy_test.go);
// the package is never vendored into this repository.
const fs = require('fs');
const { getTokenizer } = require('@anthropic-ai/tokenizer');
const texts = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const tok = getTokenizer();
const out = texts.map((t) => tok.encode(t.normalize('NFKC'), 'all').length);
tok.free();
process.stdout.write(JSON.stringify(out));
