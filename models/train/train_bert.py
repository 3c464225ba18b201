#!/usr/bin/python3
"""Trains bert-web, AttnViz's BERT-architecture masked-language encoder (issue 38), from scratch
on the World English Bible, so that a class can see attention that looks both ways.

Run by hand (not by CI), from the repository's root, with Debian's python3-torch 1.13
(third_party/install-deps.sh train):

    nice /usr/bin/python3 models/train/train_bert.py --out assets/models/bert-web --threads 2

What it does, in order (every step logged to OUT/train.log):
  1. Corpus: the World English Bible read by models/train/web_corpus.py (Mark and Ruth never
     trained on); every 20th chapter held out for validation.
  2. Tokenizer: BERT's basic tokenizer (control characters dropped, CJK characters split, lower
     case and accents stripped, punctuation split) and a WordPiece vocabulary learned here: each
     word's characters, the first as it is and the rest with "##", merged pair by pair, the most
     frequent pair first (ties by the pair's strings), until the vocabulary is full. Encoding is
     BERT's greedy longest match. Written as vocab.txt ([PAD] [UNK] [CLS] [SEP] [MASK], then the
     pieces) and tokenizer_config.json.
  3. Model: BERT written plainly in torch (post-LayerNorm blocks, eps 1e-12, GELU (erf), learned
     positions, two token types) with BertForMaskedLM's head (a dense layer, GELU, LayerNorm, the
     decoder tied to the word embeddings plus a bias). Weights start as BERT's (N(0, 0.02²)),
     but for the position embeddings, which start as sinusoids of root mean square 0.3 (see
     sinusoids(): an encoder learns to use positions only after a plateau, which they shorten).
     Context 64 tokens (a class's sentence, or a pair of them): with 128, a full run still
     attended to no position after 750 steps; a small version (d 128, 4 layers, vocabulary
     2,048) at 64 reached a previous-token score of 0.51 and next-token 0.44 by step 1,300.
  4. Data: windows of consecutive verses as [CLS] A [SEP], or as a pair [CLS] A [SEP] B [SEP]
     (token type 1 on B) half the time; 15% of the ordinary tokens chosen for the loss, of which
     80% become [MASK], 10% a random token and 10% stay. BERT's next-sentence task can run
     beside it (--next-sentence 1: half the pairs' B is a random verse, and [CLS]'s pooled state
     says whether B follows A); bert-web was made without it (the runs with it, with 6 layers
     or 8 heads, learned slower and never beat chance at the task: models/train/experiments/).
     --single-verses and --clauses make some examples as short as a class's sentence (one verse
     alone; a verse's opening clauses ended with a full stop, without quotation marks): tried
     for "God said, let there be [MASK]." (models/train/experiments/), not used for bert-web.
     --mask-repeats chooses a chosen word's other occurrences in its example too, so that no
     answer is a copy of a word the example still shows (Genesis 1:3 says "light" twice: with
     one masked, the model copies the other and never learns the verse); --mask-rate chooses
     more than BERT's 15%. Tried (models/train/experiments/), not used for bert-web.
  5. Head scores on unseen text (the Gospel of Mark): each head's mean attention on [SEP] and on
     [CLS], on the previous token and on the next token, and its entropy (broad attention).
  6. Fill-mask on short sentences ("God said, let there be [MASK]." and others), and recall:
     how often the first guess at a training clause's masked last word is right, by how often
     the training text has that 4-gram (once, as "let there be light", to 20 times or more).
     With --init FOLDER --steps 0 the script measures a saved model without training it.
  7. Saved in Hugging Face's BertForMaskedLM layout (BertForPreTraining's, with the pooler and
     the next-sentence head, under --next-sentence 1): config.json, model.safetensors (F32, bert.*
     and cls.* names; the decoder's weight is the word embeddings', not stored twice), vocab.txt,
     tokenizer_config.json, train.log, SHA256SUMS (LICENSE and PROVENANCE.md by hand).

Speed: the training steps' matrix products run in bfloat16 under torch.autocast (--matmuls), and
so do the operations that read their results (LayerNorm, softmax, GELU); the weights, their
gradients, AdamW's state and the loss stay float32. On this machine's CPU, which has AMX,
a step of 32 × 64 tokens takes 130 ms instead of 570 ms in float32, so that 24,000 steps fit in
the hour that 4,000 took: the first bert-web (4,000 steps, float32) still filled "God said, let
there be [MASK]." with "done". Evaluation and the saved weights are float32.

Reproducibility: a fixed seed and a fixed step count; --threads threads for torch and OpenBLAS,
and the OpenBLAS kernel logged (pass it as --openblas-coretype to repeat a run bit for bit). A CPU
without AMX computes the bfloat16 products another way (slower, other last bits).
"""

import collections
import json
import math
import os
import re
import sys
import time
import unicodedata

import blas_setup  # models/train/blas_setup.py, beside this script
import training_run  # models/train/training_run.py

if __name__ == "__main__":
    blas_setup.prepare()

import numpy as np  # noqa: E402
import torch  # noqa: E402

import train_gpt2  # noqa: E402  (the safetensors writer, the machine's load)
import web_corpus  # noqa: E402

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PAD, UNK, CLS, SEP, MASK = range(len(SPECIAL_TOKENS))
MAX_WORD_CHARS = 100  # BERT's: a longer word is [UNK]

# ----------------------------------------------------------------------------------------------
# BERT's tokenizer (as tokenization_bert.py describes it), with do_lower_case
# ----------------------------------------------------------------------------------------------


def is_punctuation(char):
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_cjk(code):
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
            or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F
            or 0x2B820 <= code <= 0x2CEAF or 0xF900 <= code <= 0xFAFF
            or 0x2F800 <= code <= 0x2FA1F)


def basic_tokenize(text):
    """Words and punctuation marks, lower-cased, accents stripped."""
    cleaned = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD or (unicodedata.category(char).startswith("C")
                                           and char not in "\t\n\r"):
            continue
        if char in " \t\n\r" or unicodedata.category(char) == "Zs":
            cleaned.append(" ")
        elif is_cjk(code):
            cleaned.append(f" {char} ")
        else:
            cleaned.append(char)
    words = []
    for word in "".join(cleaned).split():
        word = "".join(c for c in unicodedata.normalize("NFD", word.lower())
                       if unicodedata.category(c) != "Mn")
        piece = []
        for char in word:
            if is_punctuation(char):
                if piece:
                    words.append("".join(piece))
                    piece = []
                words.append(char)
            else:
                piece.append(char)
        if piece:
            words.append("".join(piece))
    return words


def learn_wordpiece(word_counts, vocab_size, log):
    """The vocabulary: the special tokens, every character (as it is and with "##"), then merged
    pieces, the most frequent adjacent pair first (ties by the pair's strings)."""
    words = [([w[0]] + ["##" + c for c in w[1:]], n) for w, n in word_counts.items()]
    vocab = list(SPECIAL_TOKENS)
    alphabet = sorted({symbol for symbols, _ in words for symbol in symbols})
    vocab += alphabet
    merges = 0
    known = set(vocab)
    for _, merged in train_gpt2.pair_merges(words, lambda pair: pair[0] + pair[1][2:]):
        if len(vocab) >= vocab_size:  # "##" of the right part dropped in the merged piece
            break
        merges += 1
        if merged not in known:
            vocab.append(merged)
            known.add(merged)
    log(f"wordpiece: {len(word_counts)} distinct words, {len(alphabet)} characters (with their "
        f"## forms), {merges} merges: a vocabulary of {len(vocab)}")
    return vocab


class WordPiece:
    """BERT's WordpieceTokenizer: in each word, the longest piece in the vocabulary from the
    left, then the longest "##" piece, ...; a word that cannot be cut so is [UNK]."""

    def __init__(self, vocab):
        self.ids = {piece: i for i, piece in enumerate(vocab)}
        self.cache = {}

    def word(self, word):
        if word in self.cache:
            return self.cache[word]
        if len(word) > MAX_WORD_CHARS:
            return [UNK]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    found = self.ids[piece]
                    break
                end -= 1
            if found is None:
                pieces = [UNK]
                break
            pieces.append(found)
            start = end
        self.cache[word] = pieces
        return pieces

    def encode(self, text):
        return [i for word in basic_tokenize(text) for i in self.word(word)]


# ----------------------------------------------------------------------------------------------
# BERT in plain torch
# ----------------------------------------------------------------------------------------------


def sinusoids(n_positions, d_model, rms=0.3):
    """The position embeddings' starting values: the sinusoids of "Attention Is All You Need"
    (sin and cos of position · 10000^(−2i/d)), of root mean square `rms`, then learned like any
    weight. An encoder sees word order only through them (a decoder's causal mask gives it
    some), and after the embeddings' LayerNorm a small position signal is drowned by the words:
    it learns to use positions only after a long plateau near the unigram loss. Measured here on
    a small version (d 64, 2 layers, context 32, 2000 steps; the previous-token score on Mark):
    random N(0, 0.02²) starting values 0.05 (0.09 at 3000 steps), sinusoids of rms 0.02 0.05,
    0.1 0.18, 0.3 0.25, 1.0 0.14. A full run with rms 0.02 still attended to no position after
    750 of 4000 steps."""
    position = torch.arange(n_positions, dtype=torch.float64)[:, None]
    frequency = torch.pow(10000.0, -torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.zeros(n_positions, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)
    return (table * (rms * math.sqrt(2.0))).float()


class Bert(torch.nn.Module):
    """BERT as Hugging Face's BertForMaskedLM computes it. Weights are stored as torch's Linear
    stores them, (out, in): y = x @ W.T + b. Parameter names are Hugging Face's."""

    def __init__(self, vocab_size, n_positions, d_model, n_layer, n_head, next_sentence=True):
        super().__init__()
        self.n_layer, self.n_head, self.d_model = n_layer, n_head, d_model
        self.next_sentence = next_sentence
        P = torch.nn.Parameter
        p = self.params = torch.nn.ParameterDict()  # '/' for '.' in memory

        def linear(name, n_out, n_in):
            training_run.linear_parameters(torch, p, name, n_out, n_in)

        def norm(name):
            training_run.norm_parameters(torch, p, name, d_model)

        p["bert/embeddings/word_embeddings/weight"] = P(torch.randn(vocab_size, d_model) * 0.02)
        p["bert/embeddings/position_embeddings/weight"] = P(sinusoids(n_positions, d_model))
        p["bert/embeddings/token_type_embeddings/weight"] = P(torch.randn(2, d_model) * 0.02)
        norm("bert/embeddings/LayerNorm")
        for i in range(n_layer):
            layer = f"bert/encoder/layer/{i}"
            for part in ("query", "key", "value"):
                linear(f"{layer}/attention/self/{part}", d_model, d_model)
            linear(f"{layer}/attention/output/dense", d_model, d_model)
            norm(f"{layer}/attention/output/LayerNorm")
            linear(f"{layer}/intermediate/dense", 4 * d_model, d_model)
            linear(f"{layer}/output/dense", d_model, 4 * d_model)
            norm(f"{layer}/output/LayerNorm")
        linear("cls/predictions/transform/dense", d_model, d_model)
        norm("cls/predictions/transform/LayerNorm")
        p["cls/predictions/bias"] = P(torch.zeros(vocab_size))
        if next_sentence:  # BertForPreTraining's pooler and next-sentence head
            linear("bert/pooler/dense", d_model, d_model)
            linear("cls/seq_relationship", 2, d_model)

    def named_bert_tensors(self):
        return [(name.replace("/", "."), tensor) for name, tensor in self.params.items()]

    def encode(self, ids, types, attention_mask, keep_alpha=False, head_mask=None):
        """ids, types (b, n); attention_mask (b, n) 1 for a token, 0 for padding -> the last hidden
        states (b, n, d), and per layer alpha (b, head, n, n) when keep_alpha."""
        p, d, h = self.params, self.d_model, self.n_head
        batch, n = ids.shape
        d_head = d // h

        def dense(x, name):
            return x @ p[f"{name}/weight"].t() + p[f"{name}/bias"]

        def norm(x, name):
            return torch.nn.functional.layer_norm(x, (d,), p[f"{name}/weight"], p[f"{name}/bias"],
                                                  1e-12)

        x = (p["bert/embeddings/word_embeddings/weight"][ids]
             + p["bert/embeddings/position_embeddings/weight"][:n]
             + p["bert/embeddings/token_type_embeddings/weight"][types])
        x = norm(x, "bert/embeddings/LayerNorm")  # (b, n, d)
        # padding keys take no attention (Hugging Face adds the float minimum; -inf is the same
        # weight of 0 as long as a row has a key, which it always has: [CLS])
        key_bias = (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(x.dtype).min
        alphas = []
        for i in range(self.n_layer):
            layer = f"bert/encoder/layer/{i}"
            q = dense(x, f"{layer}/attention/self/query").view(batch, n, h, d_head).transpose(1, 2)
            k = dense(x, f"{layer}/attention/self/key").view(batch, n, h, d_head).transpose(1, 2)
            v = dense(x, f"{layer}/attention/self/value").view(batch, n, h, d_head).transpose(1, 2)
            scores = q @ k.transpose(2, 3) / math.sqrt(d_head) + key_bias  # (b, h, n_q, n_k)
            alpha = torch.softmax(scores, dim=-1)
            if keep_alpha:
                alphas.append(alpha)
            heads = alpha @ v  # (b, h, n, d_head)
            if head_mask is not None:
                heads = heads * head_mask[i].view(1, h, 1, 1)
            heads = heads.transpose(1, 2).reshape(batch, n, d)
            x = norm(x + dense(heads, f"{layer}/attention/output/dense"),
                     f"{layer}/attention/output/LayerNorm")
            m = torch.nn.functional.gelu(dense(x, f"{layer}/intermediate/dense"))  # erf
            x = norm(x + dense(m, f"{layer}/output/dense"), f"{layer}/output/LayerNorm")
        return x, alphas

    def predict(self, hidden):
        """hidden (..., d) -> logits over the vocabulary (..., vocab), the MLM head."""
        p, d = self.params, self.d_model
        t = hidden @ p["cls/predictions/transform/dense/weight"].t() + p[
            "cls/predictions/transform/dense/bias"]
        t = torch.nn.functional.gelu(t)
        t = torch.nn.functional.layer_norm(t, (d,), p["cls/predictions/transform/LayerNorm/weight"],
                                           p["cls/predictions/transform/LayerNorm/bias"], 1e-12)
        return t @ p["bert/embeddings/word_embeddings/weight"].t() + p["cls/predictions/bias"]

    def is_next_logits(self, hidden):
        """hidden (b, n, d) -> (b, 2): BERT's next-sentence head on [CLS] (0: B follows A)."""
        p = self.params
        pooled = torch.tanh(hidden[:, 0] @ p["bert/pooler/dense/weight"].t()
                            + p["bert/pooler/dense/bias"])
        return pooled @ p["cls/seq_relationship/weight"].t() + p["cls/seq_relationship/bias"]


# ----------------------------------------------------------------------------------------------
# Data: windows of verses, masked
# ----------------------------------------------------------------------------------------------


class MaskedWindows:
    """Examples of at most n tokens: [CLS] A [SEP] or [CLS] A [SEP] B [SEP], A and B consecutive
    verses (whole verses while they fit, a long one cut), 15% of the ordinary tokens chosen.
    A fraction single_verses of all examples is one verse alone, as short as the sentences a
    class types (BERT keeps 10% of its examples short for the same reason).
    With random_b, half the pairs' B starts at a random verse instead (BERT's next-sentence
    task: label 0 when B follows A, 1 when it is random, -100 for a single text).
    With repeats_masked (a set of token ids: the words that may repeat), a chosen word's other
    occurrences in the example are chosen too, so that its answer is never a copy of a word the
    example still shows: 'God said, "Let there be [MASK]," and there was light.' teaches copying,
    'God said, "Let there be [MASK]," and there was [MASK].' teaches the verse."""

    def __init__(self, verses, n_ctx, vocab_size, rng, random_b=False, single_verses=0.0,
                 clauses=0.0, clause_marks=None, repeats_masked=None, mask_rate=0.15):
        self.verses, self.n_ctx, self.vocab_size, self.rng = verses, n_ctx, vocab_size, rng
        self.mask_rate = mask_rate
        self.random_b, self.single_verses = random_b, single_verses
        self.clauses, self.clause_marks = clauses, clause_marks
        self.repeats_masked = None
        if repeats_masked:  # (vocab_size,) bool: which ids mask their repeats
            self.repeats_masked = np.zeros(vocab_size, dtype=bool)
            self.repeats_masked[list(repeats_masked)] = True

    def clause(self, verse):
        """A verse's opening clauses as a class would type them: its double quotes dropped, cut
        at one of its commas, semicolons or colons (or whole), ended with a full stop.
        'God said, "Let there be light," and there was light.' gives "God said.", "God said,
        Let there be light." or the whole verse without its quotes."""
        marks = self.clause_marks
        words = [t for t in verse if t != marks["quote"]]
        cuts = [i for i, t in enumerate(words[:-1]) if t in marks["breaks"] and i > 0]
        cut = int(self.rng.integers(0, len(cuts) + 1))
        if cut < len(cuts):
            words = words[:cuts[cut]] + [marks["stop"]]
        return words[:self.n_ctx - 2]

    def span(self, start, budget):
        out, i = [], start
        while i < len(self.verses) and len(out) + len(self.verses[i]) <= budget:
            out += self.verses[i]
            i += 1
        if not out:  # a verse longer than the room: its start
            out = self.verses[start][:budget]
            i = start + 1
        return out, i

    def example(self):
        rng, n = self.rng, self.n_ctx
        start = int(rng.integers(0, len(self.verses)))
        if rng.random() < 0.5:
            a, after = self.span(start, int(rng.integers(8, n - 2)))
            is_next = 0
            if self.random_b and rng.random() < 0.5:
                after, is_next = int(rng.integers(0, len(self.verses))), 1
            b, _ = self.span(after % len(self.verses), n - 3 - len(a))
            ids = [CLS] + a + [SEP] + b + [SEP]
            types = [0] * (len(a) + 2) + [1] * (len(b) + 1)
        else:
            # One verse alone, a class's sentence's length, or its opening clauses (no draw
            # without them: the random stream, and so a run's weights, stays what the recipe
            # without them made).
            if self.clauses > 0 and rng.random() < 2 * self.clauses:
                a = self.clause(self.verses[start])
            elif self.single_verses > 0 and rng.random() < 2 * self.single_verses:
                a = self.verses[start][:n - 2]
            else:
                a, _ = self.span(start, n - 2)
            ids = [CLS] + a + [SEP]
            types = [0] * len(ids)
            is_next = -100
        return ids[:n], types[:n], is_next

    def batch(self, size):
        rng, n = self.rng, self.n_ctx
        ids = np.full((size, n), PAD, dtype=np.int64)
        types = np.zeros((size, n), dtype=np.int64)
        attention = np.zeros((size, n), dtype=np.int64)
        is_next = np.zeros(size, dtype=np.int64)
        for row in range(size):
            example, example_types, is_next[row] = self.example()
            ids[row, :len(example)] = example
            types[row, :len(example)] = example_types
            attention[row, :len(example)] = 1
        ordinary = ids >= len(SPECIAL_TOKENS)
        chosen = ordinary & (rng.random((size, n)) < self.mask_rate)
        if self.repeats_masked is not None:  # no draw of its own (more random replacements)
            for row in range(size):
                chosen_ids = ids[row, chosen[row]]
                words = chosen_ids[self.repeats_masked[chosen_ids]]
                chosen[row] |= ordinary[row] & np.isin(ids[row], words)
        labels = np.where(chosen, ids, -100)
        draw = rng.random((size, n))
        inputs = ids.copy()
        inputs[chosen & (draw < 0.8)] = MASK
        randomized = chosen & (draw >= 0.8) & (draw < 0.9)
        inputs[randomized] = rng.integers(len(SPECIAL_TOKENS), self.vocab_size,
                                          size=int(randomized.sum()))
        return tuple(torch.from_numpy(a) for a in (inputs, types, attention, labels, is_next))


# ----------------------------------------------------------------------------------------------
# Head scores and fill-mask
# ----------------------------------------------------------------------------------------------


def head_scores(model, ids, types, attention):
    """Per (layer, head), averaged over the real queries: alpha on [SEP], on [CLS], on the previous
    token, on the next token, and the entropy of the row over log(n) (1: uniform, broad)."""
    with torch.no_grad():
        _, alphas = model.encode(ids, types, attention, keep_alpha=True)
    is_sep = (ids == SEP).float()[:, None, None, :]
    is_cls = (ids == CLS).float()[:, None, None, :]
    real = attention.float()  # (b, n)
    queries = real[:, None, :]  # weights over the queries (b, 1, n)
    lengths = real.sum(dim=1)
    scores = collections.OrderedDict((name, []) for name in
                                     ("sep", "cls", "previous", "next", "broad"))
    for alpha in alphas:  # (b, h, n, n)
        def mean_over_queries(per_query, mask=queries):
            return (per_query * mask).sum(dim=(0, 2)) / mask.sum(dim=(0, 2))
        scores["sep"].append(mean_over_queries((alpha * is_sep).sum(-1)))
        scores["cls"].append(mean_over_queries((alpha * is_cls).sum(-1)))
        previous = torch.nn.functional.pad(alpha.diagonal(offset=-1, dim1=2, dim2=3), (1, 0))
        following = torch.nn.functional.pad(alpha.diagonal(offset=1, dim1=2, dim2=3), (0, 1))
        scores["previous"].append(mean_over_queries(previous))
        scores["next"].append(mean_over_queries(following))
        entropy = -(alpha * torch.log(alpha.clamp_min(1e-30))).sum(-1)  # (b, h, n)
        scores["broad"].append(mean_over_queries(entropy / torch.log(lengths)[:, None, None]))
    return {name: torch.stack(rows) for name, rows in scores.items()}  # (layers, heads) each


def fill_mask(model, tokenizer, vocab, sentence, top=5):
    """The top predictions for each [MASK] of the sentence (the sentence as a user types it)."""
    ids = [CLS]
    for part_index, part in enumerate(sentence.split("[MASK]")):
        if part_index > 0:
            ids.append(MASK)
        ids += tokenizer.encode(part)
    ids.append(SEP)
    tensor = torch.tensor([ids])
    with torch.no_grad():
        hidden, _ = model.encode(tensor, torch.zeros_like(tensor), torch.ones_like(tensor))
        logits = model.predict(hidden[0])
    out = []
    for position in [i for i, t in enumerate(ids) if t == MASK]:
        probabilities = torch.softmax(logits[position], dim=-1)
        best = torch.topk(probabilities, top)
        out.append([(vocab[int(i)], round(float(p), 4)) for p, i in zip(best.values, best.indices)])
    return ids, out


FILL_MASK_CHECKS = [  # (sentence, the word it should find first)
    ("God said, let there be [MASK].", "light"),
    ("In the beginning God created the heavens and the [MASK].", "earth"),
    ("The Lord is my [MASK].", "shepherd"),
    ("They went up to [MASK].", None),
    ("She gave birth to a [MASK].", "son"),
]


# recall_clauses()'s groups: how many times the text has a clause's last 4-gram (low, high)
BUCKETS = {"once": (1, 1), "2-4 times": (2, 4), "5-19 times": (5, 19),
           "20 times or more": (20, 10**9)}


def recall_clauses(train_lines, vocab, rng, per_bucket=150):
    """Sentences for recall_by_count(): a training verse's opening clauses as a class would type
    them (up to its first comma, semicolon or colon, and up to its second; quotation marks
    dropped, ended with a full stop, at least five words) with the last word masked when it is a
    whole token, grouped by how many times the training text has that word after the clause's
    three words before it (the 4-gram), the lines taken in the order of a permutation drawn from
    rng. -> {bucket: [(sentence, word)]}"""
    def words_of(text):
        return re.findall(r"[a-z]+", text.lower())

    grams = collections.Counter()
    for line in train_lines:
        words = words_of(line)
        grams.update(tuple(words[i - 3:i + 1]) for i in range(3, len(words)))
    whole_tokens = set(vocab)
    buckets = {name: [] for name in BUCKETS}
    for index in rng.permutation(len(train_lines)):
        line = " ".join(train_lines[index].replace('"', "").split())
        cuts = [m.start() for m in re.finditer(r"[,;:]", line)] + [len(line)]
        for cut in cuts[:2]:
            clause = line[:cut].strip().rstrip(".!?")
            words = words_of(clause)
            last = clause.split()[-1] if clause else ""
            if (len(words) < 5 or not re.fullmatch(r"[A-Za-z]+", last)
                    or words[-1] not in whole_tokens):
                continue
            seen = grams[tuple(words[-4:])]
            name = next(b for b, (low, high) in BUCKETS.items() if low <= seen <= high)
            if len(buckets[name]) < per_bucket:
                buckets[name].append((clause[:clause.rfind(" ")] + " [MASK].", words[-1]))
        if all(len(b) == per_bucket for b in buckets.values()):
            break
    return buckets


def recall_by_count(model, tokenizer, vocab, train_lines, rng, per_bucket=150):
    """How well the model recalls what it was trained on, by how often it saw it: the first
    guess at each masked last word of recall_clauses(). -> [(bucket, right first guesses,
    clauses)]. "let there be light" is a 4-gram the text has once."""
    out = []
    for name, items in recall_clauses(train_lines, vocab, rng, per_bucket).items():
        right = sum(fill_mask(model, tokenizer, vocab, sentence, top=1)[1][0][0][0] == word
                    for sentence, word in items)
        out.append((name, right, len(items)))
    return out


# ----------------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------------


def write_config(path, args, vocab_size):
    config = {
        "architectures": ["BertForPreTraining" if args.next_sentence else "BertForMaskedLM"],
        "attention_probs_dropout_prob": 0.0,
        "classifier_dropout": None,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        "hidden_size": args.d_model,
        "initializer_range": 0.02,
        "intermediate_size": 4 * args.d_model,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": args.context,
        "model_type": "bert",
        "num_attention_heads": args.heads,
        "num_hidden_layers": args.layers,
        "pad_token_id": PAD,
        "position_embedding_type": "absolute",
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "type_vocab_size": 2,
        "use_cache": True,
        "vocab_size": vocab_size,
    }
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")


def write_tokenizer(folder, vocab, context):
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(piece + "\n" for piece in vocab))
    config = {
        "cls_token": "[CLS]", "do_basic_tokenize": True, "do_lower_case": True,
        "mask_token": "[MASK]", "model_max_length": context, "pad_token": "[PAD]",
        "sep_token": "[SEP]", "strip_accents": None, "tokenize_chinese_chars": True,
        "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]",
    }
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")


def format_scores(scores):
    return " ".join("[" + " ".join(f"{v:.2f}" for v in row) + "]" for row in scores.tolist())


# ----------------------------------------------------------------------------------------------


def main():
    parser = training_run.parser(__doc__.split("\n")[0], steps=24000, batch=32, context=64,
                                 d_model=192, layers=4, heads=6, vocab_size=8192, lr=1e-3,
                                 warmup=250, eval_every=1000, matmuls="bfloat16")
    parser.add_argument("--next-sentence", type=int, choices=(0, 1), default=0,
                        help="1: BERT's next-sentence task beside MLM (half the pairs' B random); "
                        "tried, not used for bert-web: models/train/experiments/")
    parser.add_argument("--single-verses", type=float, default=0.0,
                        help="the fraction of examples that are one verse alone, [CLS] verse "
                        "[SEP] (the rest fill the context with whole verses); tried at 0.25, "
                        "not used for bert-web: models/train/experiments/")
    parser.add_argument("--clauses", type=float, default=0.0,
                        help="the fraction of examples that are a verse's opening clauses as a "
                        "class types a sentence: [CLS] clauses . [SEP], double quotes dropped; "
                        "tried, not used for bert-web: models/train/experiments/")
    parser.add_argument("--mask-repeats", type=int, default=0, metavar="N",
                        help="N > 0: a chosen word's other occurrences in the example are chosen "
                        "too (masked), unless it is one of the N most frequent tokens of the "
                        "training text (the, and, commas): no answer is a copy of a word still "
                        "shown, so a verse like Genesis 1:3 that repeats its word is learned, not "
                        "copied")
    parser.add_argument("--mask-rate", type=float, default=0.15,
                        help="the fraction of the ordinary tokens chosen for the loss (BERT's "
                        "0.15; the held-out loss is always measured at 0.15)")
    parser.add_argument("--init", default=None, metavar="FOLDER",
                        help="start from the weights of the bert-web folder FOLDER (its vocab.txt "
                        "must be the one this run learns) instead of random ones: more passes over "
                        "the text after a finished run, with a new warm-up and decay")
    args = parser.parse_args()

    log = training_run.start(args.out, args, torch, np)

    # 1. corpus
    verses = web_corpus.read_verses()
    chapters = web_corpus.chapters_of(verses)
    train_chapters = [text for i, (_, _, text) in enumerate(chapters) if i % 20 != 10]
    val_chapters = [text for i, (_, _, text) in enumerate(chapters) if i % 20 == 10]
    mark = [text for book, _, _, text in verses if book == "Mark"]
    log(f"corpus: the World English Bible ({web_corpus.MODULE}), {len(chapters)} chapters "
        f"without {', '.join(web_corpus.HELD_OUT_BOOKS)}; every 20th held out "
        f"({len(val_chapters)} chapters); Mark ({len(mark)} verses) for the head scores")

    # 2. tokenizer
    word_counts = collections.Counter(w for text in train_chapters for w in basic_tokenize(text))
    vocab = learn_wordpiece(word_counts, args.vocab_size, log)
    write_tokenizer(args.out, vocab, args.context)
    tokenizer = WordPiece(vocab)
    train_verses = [tokenizer.encode(line) for text in train_chapters for line in text.split("\n")]
    val_verses = [tokenizer.encode(line) for text in val_chapters for line in text.split("\n")]
    mark_verses = [tokenizer.encode(line) for line in mark]
    n_tokens = sum(len(v) for v in train_verses)
    log(f"tokens: training {n_tokens} in {len(train_verses)} verses; held out "
        f"{sum(len(v) for v in val_verses)}; Mark {sum(len(v) for v in mark_verses)}, "
        f"{sum(len(v) for v in mark_verses) / sum(len(m.split()) for m in mark):.2f} a word")
    everyday_words = sum(len(s.split()) for s in train_gpt2.EVERYDAY_SENTENCES)
    everyday_tokens = sum(len(tokenizer.encode(s)) for s in train_gpt2.EVERYDAY_SENTENCES)
    log(f"tokens a word on {len(train_gpt2.EVERYDAY_SENTENCES)} everyday sentences in no Bible: "
        f"{everyday_tokens / everyday_words:.2f} ({everyday_tokens} tokens, {everyday_words} "
        f"words; punctuation marks are tokens)")
    for s in train_gpt2.EVERYDAY_SENTENCES[:3]:
        log("  " + " | ".join(vocab[i] for i in tokenizer.encode(s)))
    unknown = sum(v.count(UNK) for v in mark_verses)
    log(f"[UNK] in Mark: {unknown}")

    # 3. model and data
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = Bert(len(vocab), args.context, args.d_model, args.layers, args.heads,
                 bool(args.next_sentence))
    if args.init:
        with open(os.path.join(args.init, "vocab.txt"), encoding="utf-8") as f:
            if f.read() != "".join(piece + "\n" for piece in vocab):
                parser.error(f"--init {args.init}: its vocab.txt is not the vocabulary learned here")
        stored = training_run.read_safetensors(torch, os.path.join(args.init, "model.safetensors"))
        with torch.no_grad():
            for name, tensor in model.named_bert_tensors():
                if name not in stored or stored[name].shape != tensor.shape:
                    parser.error(f"--init {args.init}: no {name} of shape {list(tensor.shape)}")
                tensor.copy_(stored[name])
        log(f"weights from {args.init}/model.safetensors (SHA-256 "
            f"{training_run.sha256_of(os.path.join(args.init, 'model.safetensors'))})")
    n_params = sum(t.numel() for t in model.parameters())
    log(f"model: {args.layers} layers, {args.heads} heads, d {args.d_model}, context "
        f"{args.context}, vocabulary {len(vocab)}: {n_params} parameters")
    random_b = bool(args.next_sentence)
    if not 0.0 <= args.single_verses <= 0.5:
        parser.error("--single-verses is a fraction of the examples from 0 to 0.5 (the other "
                     "half are sentence pairs)")
    if not 0.0 <= args.clauses <= 0.5 - args.single_verses:
        parser.error("--clauses is a fraction of the examples from 0 to 0.5 less --single-verses "
                     "(half are sentence pairs)")
    piece = {p: i for i, p in enumerate(vocab)}
    clause_marks = {"quote": piece['"'], "stop": piece["."],
                    "breaks": {piece[","], piece[";"], piece[":"]}}
    repeats_masked = None
    if not 0.0 < args.mask_rate <= 0.5:
        parser.error("--mask-rate is a fraction of the tokens, above 0 and at most 0.5")
    if args.mask_repeats < 0:
        parser.error("--mask-repeats is a number of frequent tokens, 0 or more")
    if args.mask_repeats > 0:
        counts = collections.Counter(t for v in train_verses for t in v)
        frequent = {t for t, _ in counts.most_common(args.mask_repeats)}
        repeats_masked = set(range(len(SPECIAL_TOKENS), len(vocab))) - frequent
        log(f"repeats masked: every token but the {args.mask_repeats} most frequent ("
            + " ".join(vocab[t] for t, _ in counts.most_common(12)) + " ...)")
    data = MaskedWindows(train_verses, args.context, len(vocab), rng, random_b,
                         args.single_verses, args.clauses, clause_marks, repeats_masked,
                         args.mask_rate)

    eval_rng = np.random.default_rng(args.seed + 1)
    val_data = MaskedWindows(val_verses, args.context, len(vocab), eval_rng, random_b)
    val_batches = [val_data.batch(32) for _ in range(4)]
    mark_data = MaskedWindows(mark_verses, args.context, len(vocab), eval_rng)
    mark_inputs, mark_types, mark_attention, mark_labels, _ = mark_data.batch(48)
    mark_ids = torch.where(mark_labels != -100, mark_labels, mark_inputs)  # the text unmasked

    def losses(inputs, types, attention, labels, is_next):
        """-> (the MLM loss, the next-sentence loss or None, its right answers, its examples)"""
        hidden, _ = model.encode(inputs, types, attention)
        chosen = labels != -100
        logits = model.predict(hidden[chosen]).float()  # only where the loss is
        masked = torch.nn.functional.cross_entropy(logits, labels[chosen])
        if not model.next_sentence:
            return masked, None, 0, 0
        pairs = is_next != -100
        is_next_logits = model.is_next_logits(hidden[pairs])  # (pairs, 2)
        right = int((is_next_logits.argmax(-1) == is_next[pairs]).sum())
        return (masked,
                torch.nn.functional.cross_entropy(is_next_logits.float(), is_next[pairs]), right,
                int(pairs.sum()))

    def training_loss(batch):
        with training_run.step_precision(torch, args):
            masked, next_sentence, _, _ = losses(*batch)
        return masked if next_sentence is None else masked + next_sentence

    def evaluate(step):
        model.eval()
        with torch.no_grad():
            results = [losses(*b) for b in val_batches]
        val_loss = float(np.mean([r[0].item() for r in results]))
        next_sentence = ""
        if model.next_sentence:
            next_sentence = (f"; next sentence right {sum(r[2] for r in results)} of "
                             f"{sum(r[3] for r in results)}")
        scores = head_scores(model, mark_ids, mark_types, mark_attention)
        log(f"eval step {step}: held-out masked loss {val_loss:.4f}{next_sentence}; on Mark: "
            + "; ".join(f"{name} {format_scores(s)}" for name, s in scores.items()))
        for sentence, _ in FILL_MASK_CHECKS:
            _, predictions = fill_mask(model, tokenizer, vocab, sentence)
            log(f"  {sentence} -> {predictions[0][:3]}")
        model.train()
        return val_loss, scores

    optimizer = training_run.adamw(torch, model.params, args.lr, 0.01, (0.9, 0.98), 1e-6)

    def learning_rate(step):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        return args.lr * max(0.0, (args.steps - step) / max(1, args.steps - args.warmup))

    log(f"recipe: masked language modelling ({args.mask_rate:.0%} of the ordinary tokens: 80% "
        f"[MASK], 10% random, 10% kept); half the examples sentence pairs"
        + (f", {args.single_verses:.0%} one verse alone" if args.single_verses > 0 else "")
        + (f", {args.clauses:.0%} a verse's opening clauses ended with a full stop, without "
           "double quotes" if args.clauses > 0 else "")
        + (f"; a chosen token's repeats in its example chosen too (not the {args.mask_repeats} "
           "most frequent tokens)" if args.mask_repeats > 0 else "")
        + ("; BERT's next-sentence task (half the pairs' B a random verse), its loss added"
           if model.next_sentence else "") + f"; AdamW betas (0.9, 0.98), peak lr "
        f"{args.lr}, {args.warmup} warm-up steps, linear decay to 0, weight decay 0.01 on "
        f"matrices, gradient clip 1.0; {args.steps} steps of {args.batch}x{args.context}; the "
        f"steps' matrix products in {args.matmuls}"
        + (f" (this CPU {'has' if 'amx_bf16' in open('/proc/cpuinfo').read() else 'lacks'} "
           "AMX's bfloat16 products)" if args.matmuls == "bfloat16" else ""))
    evaluate(0)
    training_run.train_steps(model, optimizer, learning_rate, args.steps,
                             lambda: training_loss(data.batch(args.batch)), evaluate, log, 50,
                             args.eval_every, train_gpt2.load_average,
                             torch.nn.utils.clip_grad_norm_,
                             training_run.Checkpoint(torch, args.out, args.checkpoint_every,
                                                     {"data": data}), args.resume)

    # 4. final measurements
    model.eval()
    val_loss, scores = evaluate(args.steps)
    for name, s in scores.items():
        best = divmod(int(torch.argmax(s)), args.heads)
        log(f"final: the most {name} head L{best[0]}H{best[1]} {s[best].item():.3f}")
    found = 0
    for sentence, expected in FILL_MASK_CHECKS:
        _, predictions = fill_mask(model, tokenizer, vocab, sentence)
        first = predictions[0][0][0]
        found += expected is not None and first == expected
        log(f"fill-mask: {sentence} -> {predictions[0]}"
            + (f" (expected {expected})" if expected else ""))
    expected_count = sum(1 for _, e in FILL_MASK_CHECKS if e)
    log(f"fill-mask: {found} of {expected_count} first guesses as expected")
    train_lines = [line for text in train_chapters for line in text.split("\n")]
    for name, right, count in recall_by_count(model, tokenizer, vocab, train_lines,
                                              np.random.default_rng(5)):
        log(f"recall: clauses whose last word's 4-gram the training text has {name}: first guess "
            f"right {right} of {count} ({right / max(1, count):.0%})")

    # 5. save
    train_gpt2.write_safetensors(os.path.join(args.out, "model.safetensors"),
                                 model.named_bert_tensors())
    write_config(os.path.join(args.out, "config.json"), args, len(vocab))
    ids, predictions = fill_mask(model, tokenizer, vocab, FILL_MASK_CHECKS[0][0])
    tensor = torch.tensor([ids])
    with torch.no_grad():
        hidden, _ = model.encode(tensor, torch.zeros_like(tensor), torch.ones_like(tensor))
    check = {
        "sentence": FILL_MASK_CHECKS[0][0],
        "ids": ids,
        "predictions": predictions,
        "hidden_first": [round(v, 6) for v in hidden[0, 0].tolist()],
        "hidden_last": [round(v, 6) for v in hidden[0, -1].tolist()],
    }
    log("CHECK " + json.dumps(check, separators=(",", ":")))
    log(f"wall time {time.time() - log.wall_start:.0f} s in all")
    log.close()
    training_run.write_sha256sums(args.out, ["config.json", "model.safetensors",
                                             "tokenizer_config.json", "train.log", "vocab.txt"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
