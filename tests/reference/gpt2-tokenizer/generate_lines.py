#!/usr/bin/env python3
"""Texts for comparing AttnViz's GPT-2 tokenizer with GPT-2's reference encoder (compare.py).

Deterministic: a fixed seed and Python's random.Random (whose choice/randrange sequence is the
same on every Python 3), so every run compares the same texts. Each category below is written
to reach one part of the tokenizer: the pre-tokenizer's alternatives (contractions, letters,
numbers, other symbols, runs of white space with and without a following word) and the merges
(long words, long numbers, bytes of characters split across tokens).

Characters come from blocks that have been in Unicode for many versions, so that the
letter/number classes of the C++ side (PCRE2 10.42: Unicode 14) and of the reference (the
JavaScript engine's ICU: Unicode 15 or later) agree on them. U+0085 and U+FEFF are left out on
purpose: JavaScript's \\s differs there from Python's (see core/models/gpt2_tokenizer.hpp).

    generate_lines.py OUT.jsonl [--count N] [--seed S]   one JSON string a line
"""

import argparse
import json
import random

SEED = 20240524
COUNT_PER_CATEGORY = 300

WORDS = """the of and to in is was that for it with as his on be at by had are but from or
have an they which one you were her all she there would their we him been has when who will
more no if out so said what up its about into than them can only other new some could time
these two may then do first any my now such like our over man me even most made after also
did many before must through back years where much your way well down should because each
just those people how too little state good very make world still own see men work long get
here between both life being under never day same another know while last might us great old
year off come since against go came right used take three attention transformer token model
Hello World Python JavaScript GPT Encoder OpenAI London Paris Berlin Monday""".split()

ACCENTED = """café naïve résumé façade déjà vu über Straße Mädchen Österreich Zürich señor
niño año mañana coração ação São João Łódź Kraków żółć čeština příliš žluťoučký Dvořák
Ångström smørrebrød Þórsmörk Ísland Tiếng Việt Hà Nội phở İstanbul ğüşöç Ελλάδα καλημέρα
αλφάβητο Москва привет мир Україна їжак Ђорђе ქართული Հայաստան""".split()

# Decomposed accents: a letter then a combining mark (category Mn, neither L nor N).
COMBINING = ["e\u0301", "a\u0308", "n\u0303", "o\u0302", "c\u0327", "u\u0300\u0301",
             "\u0915\u093f", "\u0928\u092e\u0938\u094d\u0924\u0947"]

CJK_RANGES = [(0x4E00, 0x9FA5), (0x3041, 0x3096), (0x30A1, 0x30FA), (0xAC00, 0xD7A3)]
CJK_PUNCTUATION = ["、", "。", "「", "」", "・", "ー", "！", "？", "（", "）", "\u3000"]
SCRIPTS = ["مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "안녕하세요 세계",
           "こんにちは世界", "你好，世界", "Γειά σου Κόσμε", "Здравствуй, мир", "გამარჯობა",
           "ሰላም ልዑል", "ᓀᐦᐃᔭᐍᐏᐣ", "Ⅻ Ⅳ ⅷ", "①②③", "½ ¾ ⅓", "x² + y³", "१२३ ٣٤٥ ۶۷۸",
           "１２３ＡＢＣ", "ｶﾀｶﾅ", "ǅungla ǈudi", "ﬁne ﬂow", "µs Ω Å"]

EMOJI_SINGLE = [chr(c) for c in range(0x1F600, 0x1F64F)] + [
    "❤", "✓", "★", "☀", "⚡", "♻", "✨", "🌍", "🚀", "🎉", "🐍", "🤗", "🧠", "🦄", "🍕"]
SKIN_TONES = [chr(c) for c in range(0x1F3FB, 0x1F400)]
TONABLE = ["👍", "👋", "✋", "🙌", "👏", "🤝", "💪", "🧑", "👩", "👨"]
ZWJ = "\u200d"
ZWJ_SEQUENCES = ["👨\u200d👩\u200d👧\u200d👦", "👩\u200d💻", "🧑\u200d🚀", "🏳\ufe0f\u200d🌈",
                 "👁\ufe0f\u200d🗨\ufe0f", "❤\ufe0f\u200d🔥", "🐻\u200d❄\ufe0f",
                 "👩🏽\u200d🔬", "🧑🏿\u200d🤝\u200d🧑🏻"]
FLAGS = ["🇫🇷", "🇯🇵", "🇺🇸", "🇩🇪", "🇧🇷", "🇮🇳"]
KEYCAPS = ["1\ufe0f\u20e3", "#\ufe0f\u20e3", "*\ufe0f\u20e3"]

CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'VE", "'M",
                "'LL", "'D", "'x", "'", "''", "\u2019s", "\u2019t"]
CONTRACTED = ["it's", "don't", "we're", "I've", "I'm", "you'll", "she'd", "IT'S", "DON'T",
              "WE'RE", "I'VE", "I'M", "YOU'LL", "SHE'D", "y'all", "rock'n'roll", "o'clock",
              "'twas", "Let's", "can't've", "Jones'", "'s's"]

PUNCTUATION = list("!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~") + [
    "...", "!!!", "?!", "--", "---", "—", "–", "…", "```", "::", "->", "=>", "<|endoftext|>",
    "{\"a\":\",\"}", "\",\"", "'\"'", "(\"", "\"),", "},{", "«", "»", "¿", "¡", "§", "©", "®",
    "°", "±", "×", "÷", "€", "£", "¥", "¢", "‰", "†", "•", "·", "¶", "™", "→", "⇒", "∑", "√", "∞"]

WHITE = [" ", "  ", "   ", "    ", "        ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n",
         " \n", "\n ", " \t ", "\t\n", "\u00a0", "\u3000", "\u2009", "\u2003", "\u2028",
         "\u202f", "\x0b", "\x0c"]


def cjk_char(rng):
    low, high = rng.choice(CJK_RANGES)
    return chr(rng.randint(low, high))


def number(rng):
    kind = rng.randrange(7)
    if kind == 0:
        return str(rng.randint(0, 9))
    if kind == 1:
        return str(rng.randint(10, 10 ** rng.randint(2, 30)))
    if kind == 2:
        return f"{rng.random() * 10 ** rng.randint(0, 6):.{rng.randint(1, 8)}f}"
    if kind == 3:
        return f"{rng.randint(1, 10 ** 9):,}"
    if kind == 4:
        return "0" * rng.randint(2, 12) + str(rng.randint(0, 999))
    if kind == 5:
        return f"{rng.randint(1900, 2099)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return f"+{rng.randint(1, 99)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"


def sentence(rng, pick, joiners=(" ",), length=(3, 14)):
    parts = []
    for i in range(rng.randint(*length)):
        if i:
            parts.append(rng.choice(joiners))
        parts.append(pick())
    return "".join(parts)


def prose(rng):
    def word():
        w = rng.choice(WORDS)
        r = rng.random()
        if r < 0.1:
            w = w.capitalize()
        elif r < 0.13:
            w = w.upper()
        if rng.random() < 0.12:
            w += rng.choice([",", ".", ";", ":", "!", "?", "\"", ")"])
        return w
    return sentence(rng, word)


def accents(rng):
    return sentence(rng, lambda: rng.choice(ACCENTED + WORDS + COMBINING))


def cjk(rng):
    def chunk():
        r = rng.random()
        if r < 0.7:
            return "".join(cjk_char(rng) for _ in range(rng.randint(1, 8)))
        if r < 0.9:
            return rng.choice(CJK_PUNCTUATION)
        return rng.choice(WORDS)
    return sentence(rng, chunk, joiners=("", "", " "))


def emoji(rng):
    def one():
        r = rng.random()
        if r < 0.35:
            return rng.choice(EMOJI_SINGLE)
        if r < 0.55:
            return rng.choice(TONABLE) + rng.choice(SKIN_TONES)
        if r < 0.75:
            return rng.choice(ZWJ_SEQUENCES)
        if r < 0.85:
            return rng.choice(FLAGS)
        if r < 0.9:
            return rng.choice(KEYCAPS)
        return rng.choice(WORDS)
    return sentence(rng, one, joiners=("", " ", "  ", "\n"))


def digits(rng):
    return sentence(rng, lambda: number(rng) if rng.random() < 0.7 else rng.choice(WORDS),
                    joiners=(" ", "", ", ", "x", "."))


def contractions(rng):
    def one():
        r = rng.random()
        if r < 0.4:
            return rng.choice(CONTRACTED)
        if r < 0.7:
            return rng.choice(WORDS) + rng.choice(CONTRACTIONS)
        return rng.choice(WORDS)
    return sentence(rng, one, joiners=(" ", " ", "", "  ", "\n"))


def white_space(rng):
    def one():
        return rng.choice(WORDS + PUNCTUATION[:10] + ["123", "é", "日本"])
    text = sentence(rng, one, joiners=WHITE)
    # Leading and trailing white space too: the (?!\S) alternative at the end of the text.
    return rng.choice(["", rng.choice(WHITE)]) + text + rng.choice(["", rng.choice(WHITE)])


def punctuation(rng):
    def one():
        r = rng.random()
        if r < 0.5:
            return "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(1, 5)))
        return rng.choice(WORDS)
    return sentence(rng, one, joiners=(" ", "", "  "))


def mixed(rng):
    def one():
        r = rng.random()
        if r < 0.25:
            return rng.choice(SCRIPTS)
        if r < 0.4:
            return rng.choice(ACCENTED)
        if r < 0.5:
            return cjk_char(rng) * rng.randint(1, 3)
        if r < 0.6:
            return rng.choice(EMOJI_SINGLE + ZWJ_SEQUENCES)
        if r < 0.7:
            return number(rng)
        if r < 0.8:
            return rng.choice(PUNCTUATION)
        return rng.choice(WORDS) + (rng.choice(CONTRACTIONS) if rng.random() < 0.2 else "")
    return sentence(rng, one, joiners=(" ", "", "\n", "\t", "  "))


def characters(rng):
    # Random characters of every kind, back to back: pieces break at every change of class.
    pool = (list("abcXYZ019 '\t\n.,!-_") + ["é", "ß", "ñ", "Ω", "ж", "ש", "ع", "क", "\u0301",
            "ก", "\u0e31", "日", "の", "한", "😀", "🏽", ZWJ, "\ufe0f", "\u00a0", "\u3000",
            "²", "½", "Ⅻ", "٣", "１", "€", "—", "…", "\u200b", "\u00ad", "\ue000", "\U0001d400"])
    return "".join(rng.choice(pool) for _ in range(rng.randint(1, 40)))


def long_runs(rng):
    # Long words, numbers and runs: many merges in one piece.
    kind = rng.randrange(6)
    n = rng.randint(10, 200)
    if kind == 0:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n))
    if kind == 1:
        return "".join(rng.choice("0123456789") for _ in range(n))
    if kind == 2:
        return rng.choice([" ", "\n", "\t", "-", "=", "*", "#", "_", ".", "a", "ab"]) * n
    if kind == 3:
        return " " * rng.randint(1, 20) + rng.choice(WORDS) + " " * rng.randint(1, 20)
    if kind == 4:
        return "".join(cjk_char(rng) for _ in range(n))
    return "".join(rng.choice(EMOJI_SINGLE) for _ in range(n // 4 + 1))


CATEGORIES = [prose, accents, cjk, emoji, digits, contractions, white_space, punctuation,
              mixed, characters, long_runs]

# Published vectors and hand-picked texts, first.
FIXED = ["hello world", "Hello world", " hello world", "", " ", "\n", "a", "don't stop",
         "I'm here", "<|endoftext|>", "The quick brown fox jumps over the lazy dog.",
         "  leading", "trailing  ", "tab\there", "line\nbreak", "12345678901234567890"]


def generate(seed=SEED, count_per_category=COUNT_PER_CATEGORY):
    rng = random.Random(seed)
    texts = list(FIXED)
    for category in CATEGORIES:
        for _ in range(count_per_category):
            texts.append(category(rng))
    return texts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=COUNT_PER_CATEGORY,
                        help="texts per category")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    with open(args.out, "w", encoding="utf-8") as out:
        for text in generate(args.seed, args.count):
            out.write(json.dumps(text) + "\n")


if __name__ == "__main__":
    main()
