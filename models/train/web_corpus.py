"""The World English Bible as a training corpus: every verse of Debian's sword-text-web (module
engWEB2015eb, modern English, public domain), read with diatheke, its markup stripped.

The Gospel of Mark and the book of Ruth are held out: no model trained here ever sees them, so
that they stay unseen text for every model's evaluation (issues 38 and 39 use them). Imported by
train_gpt2.py (--corpus web) and the other training scripts; run alone it prints a summary:

    /usr/bin/python3 models/train/web_corpus.py

Text as a class types it: the typographic quotes and apostrophes of the module (’ ‘ “ ”) become
ASCII (' and "), so that "don't" typed on a keyboard is the corpus's word.
"""

import html
import re
import subprocess
import sys

MODULE = "engWEB2015eb"
HELD_OUT_BOOKS = ("Mark", "Ruth")  # never trained on

# A verse's reference, wherever it is in its line (a psalm's title may come first): "Book C:V: ".
# Book names: "Genesis", "I Samuel", "Song of Solomon", "Revelation of John".
REFERENCE = re.compile(r"((?:I{1,3}|IV) )?([A-Z][A-Za-z]*(?: (?:of|and|the|\(Greek\)|[A-Z][a-z]*))*) "
                       r"(\d+):(\d+): ")
TAG = re.compile(r"<[^>]*>")
GLOSSARY = re.compile(r'<div\b[^>]*type="glossary"')  # appended to the last verse: cut there
TITLE = re.compile(r"<title\b[^>]*>.*?</title>", re.S)
QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def clean(markup):
    """A verse's text: tags (and titles) dropped, entities decoded, quotes made ASCII, spaces
    collapsed."""
    glossary = GLOSSARY.search(markup)
    if glossary:
        markup = markup[:glossary.start()]
    # Two tagged words with nothing between them are two words ("God</w><w ...>created").
    markup = markup.replace("</w><w ", "</w> <w ")
    text = TAG.sub("", TITLE.sub("", markup))
    text = html.unescape(text).translate(QUOTES)
    return " ".join(text.split())


def read_verses(module=MODULE, markup=False):
    """[(book, chapter, verse, text)] in canonical order; a line with no reference continues
    the verse before it. With markup, text is the module's markup (for tagged_words())."""
    kept = (lambda text: " ".join(text.split())) if markup else clean
    raw = subprocess.run(["diatheke", "-b", module, "-k", "Genesis 1:1-Revelation 22:21"],
                         capture_output=True, text=True, check=True).stdout
    verses = []
    for line in raw.split("\n"):
        if not line.strip() or line.strip() == f"({module})":  # diatheke's last line
            continue
        match = REFERENCE.search(TAG.sub(lambda m: " " * len(m.group(0)), line))
        if match is None:
            if verses:
                book, chapter, verse, text = verses[-1]
                verses[-1] = (book, chapter, verse, (text + " " + kept(line)).strip())
            continue
        book = (match.group(1) or "") + match.group(2)
        verses.append((book, int(match.group(3)), int(match.group(4)),
                       kept(line[match.end():])))
    return [v for v in verses if v[3] and (not markup or clean(v[3]))]


WORD = re.compile(r'<w\b[^>]*?savlm="([^"]*)"[^>]*>(.*?)</w>', re.S)
STRONG = re.compile(r"strong:([HG])0*(\d+)")


def capitals_as_word(text):
    """"EN el principio" -> "En el principio": a Reina-Valera chapter's first word is set in
    capitals; written as a word, as a class would type it."""
    words = text.split(" ", 1)
    if len(words[0]) > 1 and words[0].isupper() and words[0].isalpha():
        words[0] = words[0][0] + words[0][1:].lower()
    return " ".join(words)


def tagged_words(markup):
    """A verse's words as clean() writes them (split at spaces), each with the set of Strong's
    numbers ("H216", "G2316") of the Hebrew or Greek words it translates: those of the <w>
    elements its letters are in (punctuation beside an element joins its word). Words outside
    every element have none."""
    glossary = GLOSSARY.search(markup)
    if glossary:
        markup = markup[:glossary.start()]
    markup = TITLE.sub("", markup.replace("</w><w ", "</w> <w "))
    text, numbers_of_char, at = [], [], 0

    def add(segment, numbers):
        segment = html.unescape(TAG.sub("", segment)).translate(QUOTES)
        text.append(segment)
        numbers_of_char.extend([numbers] * len(segment))

    for match in WORD.finditer(markup):
        add(markup[at:match.start()], frozenset())
        add(match.group(2), frozenset(kind + number for kind, number in
                                      STRONG.findall(match.group(1))))
        at = match.end()
    add(markup[at:], frozenset())
    words = []
    for match in re.finditer(r"\S+", "".join(text)):
        words.append((match.group(0),
                      frozenset().union(*numbers_of_char[match.start():match.end()])))
    return words


def chapters_of(verses, books_left_out=HELD_OUT_BOOKS):
    """[(book, chapter, text)]: each chapter's verses one a line, the held-out books left out."""
    chapters = []
    for book, chapter, _, text in verses:
        if book in books_left_out:
            continue
        if not chapters or chapters[-1][:2] != (book, chapter):
            chapters.append((book, chapter, []))
        chapters[-1][2].append(text)
    return [(book, chapter, "\n".join(lines)) for book, chapter, lines in chapters]


def held_out_text(verses, books=HELD_OUT_BOOKS):
    """The held-out books' verses, one a line (for evaluation only)."""
    return "\n".join(text for book, _, _, text in verses if book in books)


def main():
    verses = read_verses()
    books = list(dict.fromkeys(book for book, _, _, _ in verses))
    chapters = chapters_of(verses)
    words = sum(len(text.split()) for _, _, text in chapters)
    print(f"{len(verses)} verses in {len(books)} books; {len(chapters)} chapters "
          f"({words} words) without {', '.join(HELD_OUT_BOOKS)}")
    for book in HELD_OUT_BOOKS:
        count = sum(1 for v in verses if v[0] == book)
        print(f"held out: {book}, {count} verses")
    print("first:", verses[0][3])
    print("last:", verses[-1][3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
