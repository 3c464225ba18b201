#!/usr/bin/env python3
"""The documentation's links: every relative link and anchor in README.md and docs/*.md works.

Run: /usr/bin/python3 tests/docs/check_links.py [--root REPOSITORY]
Standard library only. Checks, in README.md and every docs/*.md:
  - a relative link or picture points at a file or folder that exists;
  - an anchor (#section, or file.md#section) names a heading of that Markdown file, as GitHub
    makes anchors from headings;
  - every picture docs/make-screenshots.sh writes is shown somewhere, and every link into
    docs/screenshots/ names a picture that script writes (so that regenerating them never leaves
    a link to a picture it no longer makes).
Before the real files it checks a small set of files with known mistakes and fails if any of
them goes unreported, so that a checker that reports nothing cannot pass.
Prints each broken link as FILE:LINE: message, then "N files checked, M broken links"; exits
non-zero when a link is broken.
"""

import argparse
import os
import re
import sys
import tempfile
import unicodedata

# [text](target) and ![alt](target), with an optional "title" after the target.
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
HTML_ANCHOR = re.compile(r'<a\s+(?:name|id)="([^"]+)"')
INLINE_CODE = re.compile(r'(`+)(.+?)\1')
EXTERNAL = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')  # https:, mailto:, ...


def lines_outside_code(text):
    """Yields (line number, line) for the lines outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        if fence is None and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence = stripped[:3]
            continue
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        yield number, line


def slug(heading):
    """The anchor GitHub gives a heading: its text as rendered, lower case, with every character
    but letters, digits, spaces, hyphens and underscores removed and spaces turned to hyphens."""
    text = INLINE_CODE.sub(lambda m: m.group(2), heading)
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)  # a link's text stays
    text = re.sub(r'<[^>]+>', '', text)  # HTML tags go
    text = text.replace('*', '')  # emphasis
    kept = []
    for char in text.lower():
        category = unicodedata.category(char)
        if char in ' -_' or category[0] in 'LN' or category in ('Mn', 'Mc'):
            kept.append(char)
    return ''.join(kept).replace(' ', '-')


def anchors_of(path, cache):
    """The anchors of a Markdown file's headings (a repeated one gets -1, -2, ... as on GitHub),
    and of its <a name="..."> tags."""
    if path not in cache:
        with open(path, encoding='utf-8') as file:
            text = file.read()
        anchors, seen = set(), {}
        for _, line in lines_outside_code(text):
            match = HEADING.match(line)
            if match:
                base = slug(match.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                anchors.add(base if count == 0 else f'{base}-{count}')
            anchors.update(HTML_ANCHOR.findall(line))
        cache[path] = anchors
    return cache[path]


def links_of(text):
    """Yields (line number, target) for every link outside code."""
    for number, line in lines_outside_code(text):
        line = INLINE_CODE.sub('', line)  # a link written in code is not a link
        for match in LINK.finditer(line):
            yield number, match.group(1)


def screenshots_made(root):
    """The pictures docs/make-screenshots.sh writes, as paths from the repository's root."""
    script = os.path.join(root, 'docs', 'make-screenshots.sh')
    if not os.path.exists(script):
        return set()
    with open(script, encoding='utf-8') as file:
        names = re.findall(r'"\$out/([^"]+\.png)"', file.read())
    return {f'docs/screenshots/{name}' for name in names}


def documents(root):
    """README.md and docs/*.md, as paths from the repository's root."""
    found = ['README.md'] if os.path.exists(os.path.join(root, 'README.md')) else []
    docs = os.path.join(root, 'docs')
    if os.path.isdir(docs):
        found += sorted(f'docs/{name}' for name in os.listdir(docs) if name.endswith('.md'))
    return found


def check(root):
    """Returns (number of files checked, the problems found as "FILE:LINE: message")."""
    problems, cache, shown = [], {}, set()
    made = screenshots_made(root)
    files = documents(root)
    for name in files:
        path = os.path.join(root, name)
        with open(path, encoding='utf-8') as file:
            text = file.read()
        for line, target in links_of(text):
            if EXTERNAL.match(target):
                continue
            where = f'{name}:{line}'
            file_part, _, anchor = target.partition('#')
            if file_part:
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if not os.path.exists(resolved):
                    problems.append(f'{where}: "{target}": no file {file_part}')
                    continue
            else:
                resolved = path
            relative = os.path.relpath(resolved, root).replace(os.sep, '/')
            if relative.startswith('docs/screenshots/') and relative.endswith('.png'):
                shown.add(relative)
                if made and relative not in made:
                    problems.append(f'{where}: "{target}": docs/make-screenshots.sh does not '
                                    f'make this picture')
            if anchor:
                if not resolved.endswith('.md') or os.path.isdir(resolved):
                    problems.append(f'{where}: "{target}": an anchor into a file that is not '
                                    f'Markdown')
                elif anchor not in anchors_of(resolved, cache):
                    problems.append(f'{where}: "{target}": no heading with the anchor '
                                    f'#{anchor} in {relative}')
    for picture in sorted(made - shown):
        problems.append(f'docs/make-screenshots.sh: {picture} is made but shown nowhere')
    return len(files), problems


# Files with one mistake of each kind the checker must report, and links it must accept.
SELF_TEST_FILES = {
    'README.md': '# Top\n\n## A `code` heading, with punctuation!\n\n'
                 '[fine](docs/guide.md#second-part) [fine](#a-code-heading-with-punctuation)\n'
                 '[missing file](docs/nothing.md)\n'
                 '[missing anchor](docs/guide.md#no-such-part)\n'
                 '![a picture that exists](docs/screenshots/one.png)\n'
                 '![a picture the script does not make](docs/screenshots/stale.png)\n'
                 '`[in code](nowhere.md)` [external](https://example.org/x.md)\n'
                 '```\n[in a code block](nowhere.md)\n```\n',
    'docs/guide.md': '# Guide\n\n## Second part\n\n## Second part\n\n'
                     '[fine](../README.md#top) [fine](#second-part-1) [missing anchor](#third)\n',
    'docs/make-screenshots.sh': 'run --screenshot "$out/one.png"\nrun --screenshot "$out/two.png"\n',
    'docs/screenshots/one.png': '',
    'docs/screenshots/stale.png': '',
}
SELF_TEST_EXPECTED = [
    'README.md:6: "docs/nothing.md"',
    'README.md:7: "docs/guide.md#no-such-part"',
    'README.md:9: "docs/screenshots/stale.png"',
    'docs/guide.md:7: "#third"',
    'docs/make-screenshots.sh: docs/screenshots/two.png is made but shown nowhere',
]


def self_test():
    """Returns the problems of the checker itself: mistakes it missed, good links it refused."""
    with tempfile.TemporaryDirectory() as root:
        for name, text in SELF_TEST_FILES.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), 'w', encoding='utf-8') as file:
                file.write(text)
        _, found = check(root)
    missed = [f'self-test: not reported: {expected}' for expected in SELF_TEST_EXPECTED
              if not any(problem.startswith(expected) for problem in found)]
    refused = [f'self-test: reported in error: {problem}' for problem in found
               if not any(problem.startswith(expected) for expected in SELF_TEST_EXPECTED)]
    return missed + refused


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..', '..'),
                        help='the repository (default: two folders above this script)')
    args = parser.parse_args()
    checker_problems = self_test()
    for problem in checker_problems:
        print(problem)
    count, problems = check(os.path.abspath(args.root))
    for problem in problems:
        print(problem)
    print(f'{count} files checked, {len(problems)} broken links')
    return 1 if problems or checker_problems else 0


if __name__ == '__main__':
    sys.exit(main())
