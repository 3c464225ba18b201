#!/usr/bin/python3
"""Writes mark-alignments.json beside this script: the first verses of the Gospel of Mark in the
World English Bible and the Reina-Valera 1909, word by word, each word with the Strong's
numbers of the Greek words it translates, as the two modules' markup tags them. Mark is never
trained on (models/train/web_corpus.py): the tests measure how well a translation model's
cross-attention aligns the two sides against these links (issue 39), without diatheke.

Run by hand from the repository's root (third_party/install-deps.sh train installs diatheke,
sword-text-web and sword-text-sparv):

    /usr/bin/python3 tests/reference/alignments/make_mark_alignments.py [--verses 200]

A Spanish verse that opens a chapter starts with a word in capitals ("EN el principio"): written
as a word ("En"), as train_marian.py feeds the model. Both texts are public domain.
"""

import argparse
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "models/train"))
import web_corpus  # noqa: E402

SPANISH_MODULE = "spaRV1909eb"


def main():
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--verses", type=int, default=200)
    args = options.parse_args()
    english = {(b, c, v): t for b, c, v, t in web_corpus.read_verses(markup=True) if b == "Mark"}
    verses = []
    for book, chapter, verse, markup in web_corpus.read_verses(SPANISH_MODULE, markup=True):
        if book != "Mark" or (book, chapter, verse) not in english:
            continue
        spanish = web_corpus.tagged_words(markup)
        if spanish:  # the chapter's first word in capitals, written as a word
            spanish[0] = (web_corpus.capitals_as_word(spanish[0][0]), spanish[0][1])
        verses.append({
            "reference": f"Mark {chapter}:{verse}",
            "english": [[w, sorted(n)] for w, n in web_corpus.tagged_words(english[(book, chapter,
                                                                                    verse)])],
            "spanish": [[w, sorted(n)] for w, n in spanish],
        })
        if len(verses) == args.verses:
            break
    out = {
        "what": "Mark's first verses, English (World English Bible, engWEB2015eb) and Spanish "
                "(Reina-Valera 1909, spaRV1909eb), each word with the Strong's numbers its <w> "
                "markup gives it; words as the texts are split at spaces, punctuation attached",
        "made_by": "tests/reference/alignments/make_mark_alignments.py",
        "licence": "both texts public domain (Debian's sword-text-web and sword-text-sparv)",
        "verses": verses,
    }
    path = pathlib.Path(__file__).resolve().parent / "mark-alignments.json"
    # One verse a line: a diff of the file reads verse by verse.
    head = json.dumps({k: v for k, v in out.items() if k != "verses"}, ensure_ascii=False,
                      indent=1)[:-2]
    lines = [json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in verses]
    path.write_text(head + ',\n "verses": [\n' + ",\n".join(lines) + "\n ]\n}\n",
                    encoding="utf-8")
    print(f"{path}: {len(verses)} verse pairs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
