#!/usr/bin/python3
"""bert-web's training data (models/train/train_bert.py), checked without training: what each
masking option chooses, and the clauses its recall measure asks about.

1. Default masking: about 15% of the ordinary tokens chosen, never [CLS], [SEP] or padding.
2. --mask-rate 0.3: about 30%.
3. --mask-repeats: a chosen word's other occurrences in its example are chosen too, so none of
   them is left showing, except for the tokens exempted (the most frequent), which may still
   show; it draws no random number of its own, so the first batch's examples are the default
   recipe's (later ones differ: more chosen tokens take more random replacements).
4. recall_clauses(): a verse's opening clauses with the last word masked, grouped by how often
   the text has the 4-gram that word ends ("let there be light": once).

Usage: /usr/bin/python3 tests/models/test_bert_masking.py ROOT   (ROOT: the repository)
"""

import pathlib
import sys

import numpy as np

FAILURES = []


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message)
    if not condition:
        FAILURES.append(message)


def verses_with_repeats(rng, count, vocab_size):
    """Verses of 8 to 20 ids drawn from a small range, so that ids repeat within an example."""
    return [list(rng.integers(5, vocab_size, size=int(rng.integers(8, 21)))) for _ in range(count)]


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    sys.path.insert(0, str(root / "models" / "train"))
    import train_bert as tb  # noqa: E402  (imports torch)

    vocab_size = 40
    verses = verses_with_repeats(np.random.default_rng(3), 200, vocab_size)

    # 1 and 2: how many are chosen.
    for rate in (0.15, 0.3):
        data = tb.MaskedWindows(verses, 64, vocab_size, np.random.default_rng(1), mask_rate=rate)
        inputs, _, _, labels, _ = data.batch(256)
        ids = np.where(labels.numpy() != -100, labels.numpy(), inputs.numpy())
        ordinary = ids >= len(tb.SPECIAL_TOKENS)
        chosen = labels.numpy() != -100
        fraction = chosen.sum() / ordinary.sum()
        check(abs(fraction - rate) < 0.02, f"mask rate {rate}: {fraction:.3f} of the ordinary "
              "tokens chosen")
        check(not (chosen & ~ordinary).any(), f"mask rate {rate}: no special token or padding "
              "chosen")

    # 3: repeats.
    exempt = {5, 6}  # as the most frequent tokens are
    plain = tb.MaskedWindows(verses, 64, vocab_size, np.random.default_rng(7))
    repeats = tb.MaskedWindows(verses, 64, vocab_size, np.random.default_rng(7),
                               repeats_masked=set(range(5, vocab_size)) - exempt)
    for batch_index in range(1):
        p_inputs, _, _, p_labels, _ = plain.batch(64)
        r_inputs, _, _, r_labels, _ = repeats.batch(64)
        p_ids = np.where(p_labels.numpy() != -100, p_labels.numpy(), p_inputs.numpy())
        r_ids = np.where(r_labels.numpy() != -100, r_labels.numpy(), r_inputs.numpy())
        check((p_ids == r_ids).all(), f"batch {batch_index + 1}: --mask-repeats keeps the "
              "recipe's examples")
        p_chosen, r_chosen = p_labels.numpy() != -100, r_labels.numpy() != -100
        check((r_chosen | ~p_chosen).all(), f"batch {batch_index + 1}: every token the recipe "
              "chose is still chosen")
        shown_repeat, exempt_shown = 0, 0
        for row in range(r_ids.shape[0]):
            chosen_ids = set(r_ids[row][r_chosen[row]].tolist())
            left = r_ids[row][~r_chosen[row]].tolist()
            shown_repeat += sum(1 for t in left if t in chosen_ids - exempt)
            exempt_shown += sum(1 for t in left if t in chosen_ids & exempt)
        check(shown_repeat == 0, f"batch {batch_index + 1}: no chosen word left showing "
              f"elsewhere in its example ({shown_repeat} found)")
        check(exempt_shown > 0, f"batch {batch_index + 1}: an exempted token chosen in one "
              f"place may show in another ({exempt_shown} found)")
        check(r_chosen.sum() > p_chosen.sum(), f"batch {batch_index + 1}: repeats add chosen "
              f"tokens ({p_chosen.sum()} -> {r_chosen.sum()})")

    # 4: the recall measure's clauses.
    vocab = tb.SPECIAL_TOKENS + ["god", "said", "let", "there", "be", "light", "and", "was",
                                 "they", "went", "up", "to", "jerusalem", "the", "people"]
    lines = ['God said, "Let there be light," and there was light.'] + \
        ["They went up to Jerusalem."] * 25 + ["Let there be people."]
    buckets = tb.recall_clauses(lines, vocab, np.random.default_rng(5), per_bucket=10)
    check(buckets["once"] == [("God said, Let there be [MASK].", "light")],
          f"the verse's opening clauses, quotes dropped, 'light' seen once: {buckets['once']}")
    check(buckets["20 times or more"] == [("They went up to [MASK].", "jerusalem")] * 10,
          "a clause the text has 25 times, up to the bucket's size: "
          f"{buckets['20 times or more'][:1]} x {len(buckets['20 times or more'])}")
    check(buckets["2-4 times"] == [] and buckets["5-19 times"] == [],
          "clauses of fewer than five words are left out ('Let there be people.')")

    print(f"{len(FAILURES)} failed" if FAILURES else "all passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
