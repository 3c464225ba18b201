#!/usr/bin/python3
"""AttnViz's BertTokenizer against an independent one, id for id, on thousands of texts.

The reference below is Hugging Face's BertTokenizer (transformers' tokenization_bert.py:
BasicTokenizer with its NFC step, WordpieceTokenizer, and the split on special tokens written in
the text) written again here from that file's description, with Python's own unicodedata and
str.lower(): it shares nothing with the C++ side, whose character tables are generated data.

    compare.py --tool PATH/TO/attnviz_bert_encode --work DIR

It writes a vocabulary (words and pieces of many scripts, with "##" continuations) into DIR,
generates texts from a fixed seed (words, punctuation, accents composed and decomposed, Greek
capital sigmas, Turkish dotted I, CJK ideographs, Hangul, emoji, controls, unusual spaces,
special tokens, words past 100 characters), and compares the ids for an uncased vocabulary, an
uncased one that keeps accents, and a cased one, every text each (the decomposed ones test the
C++ side's NFC). Prints the first differences; exit status 1 when there is one.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import unicodedata

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


# ----------------------------------------------------------------------------------------------
# The reference, after tokenization_bert.py
# ----------------------------------------------------------------------------------------------

def is_whitespace(char):
    if char in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(char) == "Zs"


def is_control(char):
    if char in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(char).startswith("C")


def is_punctuation(char):
    cp = ord(char)
    if (33 <= cp <= 47) or (58 <= cp <= 64) or (91 <= cp <= 96) or (123 <= cp <= 126):
        return True
    return unicodedata.category(char).startswith("P")


def is_chinese_char(cp):
    return ((0x4E00 <= cp <= 0x9FFF) or (0x3400 <= cp <= 0x4DBF) or (0x20000 <= cp <= 0x2A6DF)
            or (0x2A700 <= cp <= 0x2B73F) or (0x2B740 <= cp <= 0x2B81F)
            or (0x2B820 <= cp <= 0x2CEAF) or (0xF900 <= cp <= 0xFAFF)
            or (0x2F800 <= cp <= 0x2FA1F))


class Reference:
    def __init__(self, vocab, do_lower_case, strip_accents):
        self.vocab = {}
        for index, token in enumerate(vocab):
            self.vocab[token] = index
        self.lower, self.strip = do_lower_case, strip_accents
        self.never_split = [t for t in SPECIALS if t in self.vocab]

    def clean(self, text):
        out = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or is_control(char):
                continue
            out.append(" " if is_whitespace(char) else char)
        return "".join(out)

    def basic(self, text):
        text = self.clean(text)
        text = "".join(f" {c} " if is_chinese_char(ord(c)) else c for c in text)
        text = unicodedata.normalize("NFC", text)
        words = []
        for token in text.strip().split():
            if self.lower:
                token = token.lower()
                if self.strip is not False:
                    token = self.strip_accents(token)
            elif self.strip:
                token = self.strip_accents(token)
            words.extend(self.split_punctuation(token))
        return " ".join(words).strip().split()

    @staticmethod
    def strip_accents(text):
        return "".join(c for c in unicodedata.normalize("NFD", text)
                       if unicodedata.category(c) != "Mn")

    @staticmethod
    def split_punctuation(text):
        out, start_new = [], True
        for char in text:
            if is_punctuation(char):
                out.append([char])
                start_new = True
            else:
                if start_new:
                    out.append([])
                start_new = False
                out[-1].append(char)
        return ["".join(x) for x in out]

    def wordpiece(self, word):
        if len(word) > 100:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end, current = len(word), None
            while start < end:
                piece = word[start:end]
                if start > 0:
                    piece = "##" + piece
                if piece in self.vocab:
                    current = piece
                    break
                end -= 1
            if current is None:
                return ["[UNK]"]
            pieces.append(current)
            start = end
        return pieces

    def encode(self, text):
        # the special tokens written in the text first (longest first at each place), then the
        # rest by the basic tokenizer and WordPiece
        parts, i, segment = [], 0, 0
        while i < len(text):
            match = max((t for t in self.never_split if text.startswith(t, i)), key=len,
                        default=None)
            if match is None:
                i += 1
                continue
            parts.append(("text", text[segment:i]))
            parts.append(("special", match))
            i += len(match)
            segment = i
        parts.append(("text", text[segment:]))
        ids = []
        for kind, part in parts:
            if kind == "special":
                ids.append(self.vocab[part])
                continue
            for word in self.basic(part):
                ids.extend(self.vocab[p] for p in self.wordpiece(word))
        return ids


# ----------------------------------------------------------------------------------------------
# A vocabulary and texts
# ----------------------------------------------------------------------------------------------

WORDS = ("the of and to in a is that for it as was with be by on not he i this are or his from "
         "at which but have an they you were her she there been one all we their has would when "
         "if so no what up out who them my some other time could into only new about after "
         "light god said let world teacher student book open naive cafe resume über fiancée "
         "straße σοφία οδος λόγος мир привет 中国 人 한국어 日本 ıi")
PIECES = ("un ##want ##ed ##ing ##s ##er ##ly run ##ning ##ness re ##ad ##e ##a ##i ##o ##u "
          "##t ##n ##l ##r ##σ ##ς ##ο ##δ ##α ##ι")


def vocabulary(rng):
    vocab = list(SPECIALS)
    seen = set(vocab)

    def add(token):
        if token not in seen:
            seen.add(token)
            vocab.append(token)

    for word in WORDS.split() + PIECES.split():
        add(word)
        add(word.upper())
    for cp in list(range(0x21, 0x7F)) + list(range(0xC0, 0x180)) + list(range(0x391, 0x3CA)):
        add(chr(cp))
        add("##" + chr(cp))
    for _ in range(300):  # random pieces of letters
        piece = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzéü") for _ in range(rng.randint(2, 5)))
        add(piece if rng.random() < 0.5 else "##" + piece)
    add("[mask]")  # a lower-case look-alike: only the exact special token is special
    return vocab


ODD = ["\u00a0", "\u3000", "\u2028", "\u200d", "\u0301", "\u0308", "\u0130", "\u03a3", "\u0345",
       "\ufffd", "\x00", "\x07", "\t", "\n", "\r", "\u00ad", "\U0001F600", "\uac00", "\ud55c",
       "\u4e2d", "\u212b", "\u1e9e", "\u00df", "\ufb01", "[MASK]", "[SEP]", "[CLS]", "[mask]",
       "'", "\u2019", ".", ",", "!", "$", "\u00bf", "\u00a9", "\u2014", "\uff08", "\u0661",
       "e\u0301", "\u03a3\u0301", "\u0391\u03a3", "\u039f\u0394\u039f\u03a3"]


def texts(rng, count):
    words = WORDS.split()
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            roll = rng.random()
            if roll < 0.45:
                word = rng.choice(words)
                parts.append(word.upper() if rng.random() < 0.2 else
                             word.capitalize() if rng.random() < 0.2 else word)
            elif roll < 0.8:
                parts.append(rng.choice(ODD))
            elif roll < 0.97:
                parts.append("".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(rng.randint(1, 4))))
            else:
                parts.append("a" * rng.randint(95, 105))
        glue = rng.choice(["", " ", " ", "  ", "\u00a0"])
        yield glue.join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tool", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--count", type=int, default=4000)
    args = parser.parse_args()
    rng = random.Random(20261129)
    vocab = vocabulary(rng)
    lines = [t for t in texts(rng, args.count) if not any(0xD800 <= ord(c) <= 0xDFFF for c in t)]
    failures = 0
    for name, config, keep in [
            ("uncased", {"do_lower_case": True}, lambda t: True),
            ("uncased, accents kept", {"do_lower_case": True, "strip_accents": False},
             lambda t: True),
            ("cased", {"do_lower_case": False}, lambda t: True)]:
        folder = os.path.join(args.work, name.replace(" ", "_").replace(",", ""))
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("".join(t + "\n" for t in vocab))
        with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f)
        chosen = [t for t in lines if keep(t)]
        texts_path = os.path.join(folder, "texts.jsonl")
        with open(texts_path, "w", encoding="utf-8") as f:
            f.write("".join(json.dumps(t) + "\n" for t in chosen))
        run = subprocess.run([args.tool, folder, texts_path], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{name}: attnviz_bert_encode failed: {run.stderr.strip()}")
            return 1
        ours = [json.loads(line) for line in run.stdout.splitlines()]
        reference = Reference(vocab, config["do_lower_case"], config.get("strip_accents"))
        different = 0
        for text, got in zip(chosen, ours):
            expected = reference.encode(text)
            if got != expected:
                different += 1
                if different <= 5:
                    print(f"{name}: {json.dumps(text)}\n  ours      {got}\n  reference {expected}")
        if len(ours) != len(chosen):
            print(f"{name}: {len(ours)} results for {len(chosen)} texts")
            different += 1
        tokens = sum(len(x) for x in ours)
        print(f"{name}: {len(chosen)} texts, {tokens} tokens, {different} different")
        failures += different
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
