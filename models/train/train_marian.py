#!/usr/bin/python3
"""Trains marian-web-es, AttnViz's English → Spanish translation model in Marian's layout (issue
39), from scratch on verse pairs of two public-domain Bibles, so that a class can see
cross-attention align the words of two languages.

Run by hand (not by CI), from the repository's root, with Debian's python3-torch and
python3-sentencepiece (third_party/install-deps.sh train):

    nice /usr/bin/python3 models/train/train_marian.py --out assets/models/marian-web-es --threads 1
    cp tests/reference/alignments/mark-alignments.json assets/models/marian-web-es/alignments.json

(alignments.json: the verses of Mark the app measures the cross heads' alignment on.)

What it does, in order (every step logged to OUT/train.log):
  1. Corpus: verse pairs of the World English Bible (engWEB2015eb) and the Reina-Valera 1909
     (spaRV1909eb), joined by book, chapter and verse, read by models/train/web_corpus.py with
     their markup stripped; the Gospel of Mark and the book of Ruth never trained on; every
     20th chapter held out for validation. A Spanish verse that opens a chapter starts with a
     word in capitals ("EN el principio"): written as a word ("En").
  2. Vocabularies: a SentencePiece unigram model for each language (source.spm, target.spm;
     --vocab-size pieces each), learned here by SentencePiece's trainer on the training verses; vocab.json joins their
     pieces as Marian's tokenizer reads them: </s> 0, <unk> 1, the English pieces, the Spanish
     ones not already there, <pad> last. One embedding table for both sides and the output.
  3. Model: Marian (Hugging Face's MarianMTModel) written plainly in torch: post-LayerNorm
     encoder and decoder layers, embeddings scaled by √d, sinusoidal positions (sin in the first
     half of each row, cos in the second), SiLU ("swish") in the feed-forward layers as in the
     opus-mt models, the decoder's self-attention causal, its cross-attention's queries from the
     decoder and keys and values from the encoder's output, logits from the shared embeddings
     plus final_logits_bias. The decoder starts from <pad> (decoder_start_token_id). It only
     ever outputs Spanish pieces, </s> or <unk>: final_logits_bias holds -100 for the others
     (pieces only English has, <pad>), so that the full softmax is the one over those, which
     training computes alone (half the output layer's cost).
  4. Training: cross-entropy on the Spanish verse followed by </s>, with label smoothing 0.1
     and dropout 0.1 (the embeddings and each sublayer's output); batches of verse pairs of
     like lengths, in a random order each epoch (pairs longer than --context tokens on a side
     left out); the steps' matrix products in bfloat16 (--matmuls), evaluation in float32.
  5. Evaluation on the Gospel of Mark (never trained on): greedy translations and their chrF
     against the Reina-Valera (character 6-grams, β 2, as sacrebleu's chrF computes it), and for
     every decoder layer and head the precision of its cross-attention alignment: the source
     word each target token's row weighs most, right when the two words carry one Strong's
     number in the modules' markup, beside the diagonal's precision.
  6. Saved in Hugging Face's MarianMTModel layout: config.json, model.safetensors (F32; the
     shared embeddings stored once as model.shared.weight), source.spm, target.spm, vocab.json,
     tokenizer_config.json, train.log, SHA256SUMS (LICENSE and PROVENANCE.md by hand).

Reproducibility: a fixed seed and a fixed step count; --threads threads for torch and OpenBLAS,
and the OpenBLAS kernel logged. SentencePiece's trainer runs on one thread.
"""

import collections
import json
import math
import os
import sys
import time

import blas_setup  # models/train/blas_setup.py, beside this script
import training_run  # models/train/training_run.py

if __name__ == "__main__":
    blas_setup.prepare()

import numpy as np  # noqa: E402
import sentencepiece  # noqa: E402
import torch  # noqa: E402

import train_gpt2  # noqa: E402  (the safetensors writer, the machine's load)
import web_corpus  # noqa: E402

SPANISH_MODULE = "spaRV1909eb"
EOS, UNK = 0, 1  # Marian's: </s> 0, <unk> 1, <pad> the last id

# ----------------------------------------------------------------------------------------------
# 1. Corpus
# ----------------------------------------------------------------------------------------------


def verse_pairs(log):
    """[(book, chapter, verse, English markup, Spanish markup)] for the verses both modules
    have, in canonical order."""
    english = {(b, c, v): t for b, c, v, t in web_corpus.read_verses(markup=True)}
    pairs = []
    for book, chapter, verse, spanish in web_corpus.read_verses(SPANISH_MODULE, markup=True):
        key = (book, chapter, verse)
        if key in english:
            pairs.append((book, chapter, verse, english[key], spanish))
    log(f"corpus: {len(pairs)} verse pairs of {web_corpus.MODULE} and {SPANISH_MODULE} "
        f"({len(english)} English verses)")
    return pairs


def plain(markup, spanish=False):
    text = web_corpus.clean(markup)
    return web_corpus.capitals_as_word(text) if spanish else text


# ----------------------------------------------------------------------------------------------
# 2. Vocabularies
# ----------------------------------------------------------------------------------------------


def learn_sentencepiece(path_prefix, sentences, vocab_size, log, name):
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_prefix=path_prefix, vocab_size=vocab_size,
        model_type="unigram", character_coverage=1.0, num_threads=1, unk_id=0, bos_id=-1,
        eos_id=-1, pad_id=-1, minloglevel=2, input_sentence_size=0, shuffle_input_sentence=False)
    processor = sentencepiece.SentencePieceProcessor(model_file=path_prefix + ".model")
    log(f"sentencepiece ({name}): a unigram model of {processor.get_piece_size()} pieces")
    return processor


class MarianTokens:
    """Marian's tokenizer as MarianTokenizer does it: a side's SentencePiece pieces, each looked
    up in vocab.json (<unk> when absent), then </s>."""

    def __init__(self, source, target):
        self.source, self.target = source, target
        vocab = ["</s>", "<unk>"]
        seen = set(vocab)
        for processor in (source, target):
            for i in range(processor.get_piece_size()):
                piece = processor.id_to_piece(i)
                if processor.is_unknown(i) or piece in seen:
                    continue
                seen.add(piece)
                vocab.append(piece)
        vocab.append("<pad>")
        self.vocab = vocab
        self.ids = {piece: i for i, piece in enumerate(vocab)}
        self.pad = len(vocab) - 1

    def encode(self, text, side):
        processor = self.source if side == "source" else self.target
        return [self.ids.get(p, UNK) for p in processor.encode(text, out_type=str)] + [EOS]

    def decode(self, ids):
        pieces = [self.vocab[i] for i in ids if i not in (EOS, self.pad)]
        return "".join(pieces).replace("\u2581", " ").strip()


# ----------------------------------------------------------------------------------------------
# 3. Marian in plain torch
# ----------------------------------------------------------------------------------------------


def marian_sinusoids(n_positions, d_model):
    """Hugging Face's MarianSinusoidalPositionalEmbedding: row p, column j < d/2 is
    sin(p / 10000^(2j/d)), column d/2 + j is cos of the same."""
    position = torch.arange(n_positions, dtype=torch.float64)[:, None]
    frequency = torch.pow(10000.0, -2.0 * torch.arange(d_model // 2, dtype=torch.float64)
                          / d_model)
    return torch.cat([torch.sin(position * frequency), torch.cos(position * frequency)],
                     dim=1).float()


class Marian(torch.nn.Module):
    """MarianMTModel as Hugging Face computes it (post-LayerNorm, eps 1e-5). Weights are stored as
    torch's Linear stores them, (out, in). Parameter names are Hugging Face's ('/' for '.')."""

    def __init__(self, vocab_size, n_positions, d_model, layers, heads, ffn, dropout=0.0):
        super().__init__()
        self.d_model, self.heads, self.layers = d_model, heads, layers
        self.dropout = dropout  # in training only: on the embeddings and each sublayer's output
        P = torch.nn.Parameter
        p = self.params = torch.nn.ParameterDict()

        def linear(name, n_out, n_in):
            training_run.linear_parameters(torch, p, name, n_out, n_in)

        def norm(name):
            training_run.norm_parameters(torch, p, name, d_model)

        def attention(name):
            for part in ("q_proj", "k_proj", "v_proj", "out_proj"):
                linear(f"{name}/{part}", d_model, d_model)

        p["model/shared/weight"] = P(torch.randn(vocab_size, d_model) * 0.02)
        p["final_logits_bias"] = P(torch.zeros(1, vocab_size))
        # -100 on the ids the model never outputs (set_outputs()), added to final_logits_bias
        self.register_buffer("blocked", torch.zeros(1, vocab_size))
        self.register_buffer("outputs", torch.arange(vocab_size))
        self.register_buffer("positions", marian_sinusoids(n_positions, d_model))
        for side in ("encoder", "decoder"):
            for i in range(layers):
                layer = f"model/{side}/layers/{i}"
                attention(f"{layer}/self_attn")
                norm(f"{layer}/self_attn_layer_norm")
                if side == "decoder":
                    attention(f"{layer}/encoder_attn")
                    norm(f"{layer}/encoder_attn_layer_norm")
                linear(f"{layer}/fc1", ffn, d_model)
                linear(f"{layer}/fc2", d_model, ffn)
                norm(f"{layer}/final_layer_norm")

    def set_outputs(self, ids):
        """The only ids the decoder may output (the target's pieces, </s>, <unk>): the others'
        logits get -100 through final_logits_bias (e^-100: a full softmax is the softmax over
        these), and training computes the logits of these only (decode(..., only_outputs))."""
        self.outputs = torch.tensor(sorted(ids))
        self.blocked = torch.full_like(self.blocked, -100.0)
        self.blocked[0, self.outputs] = 0.0

    def named_marian_tensors(self):
        tensors = [(name.replace("/", "."), t + self.blocked if name == "final_logits_bias" else t)
                   for name, t in self.params.items()]
        for side in ("encoder", "decoder"):  # as Hugging Face saves them (a fixed table)
            tensors.append((f"model.{side}.embed_positions.weight", self.positions))
        return tensors

    def _dense(self, x, name):
        p = self.params
        return x @ p[f"{name}/weight"].t() + p[f"{name}/bias"]

    def _norm(self, x, name):
        p = self.params
        return torch.nn.functional.layer_norm(x, (self.d_model,), p[f"{name}/weight"],
                                              p[f"{name}/bias"], 1e-5)

    def _attention(self, name, x_query, x_key, key_bias, keep):
        """x_query (b, n_q, d), x_key (b, n_k, d), key_bias broadcast to (b, h, n_q, n_k)."""
        b, n_q, d = x_query.shape
        n_k, h = x_key.shape[1], self.heads
        d_head = d // h
        q = (self._dense(x_query, f"{name}/q_proj") * d_head**-0.5).view(b, n_q, h, d_head)
        k = self._dense(x_key, f"{name}/k_proj").view(b, n_k, h, d_head)
        v = self._dense(x_key, f"{name}/v_proj").view(b, n_k, h, d_head)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        alpha = torch.softmax(q @ k.transpose(2, 3) + key_bias, dim=-1)  # (b, h, n_q, n_k)
        if keep is not None:
            keep.append(alpha)
        heads = (alpha @ v).transpose(1, 2).reshape(b, n_q, d)
        return self._dense(heads, f"{name}/out_proj")

    def _drop(self, x):
        return torch.nn.functional.dropout(x, self.dropout, self.training)

    def _embed(self, ids):
        x = self.params["model/shared/weight"][ids] * math.sqrt(self.d_model)
        return self._drop(x + self.positions[:ids.shape[1]])

    def _feed_forward(self, x, layer):
        m = torch.nn.functional.silu(self._dense(x, f"{layer}/fc1"))
        return self._norm(x + self._drop(self._dense(m, f"{layer}/fc2")),
                          f"{layer}/final_layer_norm")

    def encode(self, source, source_mask, keep=None):
        """source (b, n_s) ids, source_mask (b, n_s) 1 for a token -> (b, n_s, d)."""
        key_bias = (1.0 - source_mask[:, None, None, :].float()) * -1e9
        x = self._embed(source)
        for i in range(self.layers):
            layer = f"model/encoder/layers/{i}"
            x = self._norm(x + self._drop(self._attention(f"{layer}/self_attn", x, x, key_bias,
                                                          keep)), f"{layer}/self_attn_layer_norm")
            x = self._feed_forward(x, layer)
        return x

    def decode(self, target_in, memory, source_mask, keep_self=None, keep_cross=None,
               only_outputs=False):
        """target_in (b, n_t) the decoder's input ids (<pad> first) -> logits (b, n_t, vocab),
        or (b, n_t, outputs) over self.outputs only."""
        n_t = target_in.shape[1]
        causal = torch.full((n_t, n_t), -1e9).triu(1)[None, None]
        cross_bias = (1.0 - source_mask[:, None, None, :].float()) * -1e9
        x = self._embed(target_in)
        for i in range(self.layers):
            layer = f"model/decoder/layers/{i}"
            x = self._norm(x + self._drop(self._attention(f"{layer}/self_attn", x, x, causal,
                                                          keep_self)),
                           f"{layer}/self_attn_layer_norm")
            x = self._norm(x + self._drop(self._attention(f"{layer}/encoder_attn", x, memory,
                                                          cross_bias, keep_cross)),
                           f"{layer}/encoder_attn_layer_norm")
            x = self._feed_forward(x, layer)
        embeddings = self.params["model/shared/weight"]  # (vocab, d)
        bias = self.params["final_logits_bias"] + self.blocked  # (1, vocab)
        if only_outputs:
            return x @ embeddings[self.outputs].t() + bias[:, self.outputs]
        return x @ embeddings.t() + bias


# ----------------------------------------------------------------------------------------------
# 4. Data
# ----------------------------------------------------------------------------------------------


class PairBatches:
    """Batches of verse pairs (source ids, target ids, guidance()) of like lengths (little
    padding): the pairs sorted by their longer side and cut into batches of `size`, the batches
    taken in a random order, epoch after epoch."""

    def __init__(self, pairs, pad, rng, size=32):
        self.pairs, self.pad, self.rng = pairs, pad, rng
        order = sorted(range(len(pairs)), key=lambda i: (max(len(pairs[i][0]),
                                                              len(pairs[i][1])), i))
        self.batches = [order[i:i + size] for i in range(0, len(order), size)]
        self.queue = []

    def batch(self, rows=None):
        """-> source (b, n_s), source_mask, target_in (b, n_t), target_out, target_mask, and
        guide (b, n_t, n_s): for the row that outputs a linked target piece, 1/k on each of its k
        linked source pieces (rows without a link all 0)."""
        if rows is None:
            if not self.queue:
                self.queue = [self.batches[i] for i in self.rng.permutation(len(self.batches))]
            rows = self.queue.pop()
        chosen = [self.pairs[int(i)] for i in rows]
        n_s = max(len(s) for s, _, _ in chosen)
        n_t = max(len(t) for _, t, _ in chosen)
        source = np.full((len(chosen), n_s), self.pad, dtype=np.int64)
        target_in = np.full((len(chosen), n_t), self.pad, dtype=np.int64)
        target_out = np.full((len(chosen), n_t), self.pad, dtype=np.int64)
        guide = np.zeros((len(chosen), n_t, n_s), dtype=np.float32)
        for row, (s, t, links) in enumerate(chosen):
            for piece, keys in links:
                guide[row, piece, list(keys)] = 1.0 / len(keys)
            source[row, :len(s)] = s
            target_in[row, 1:len(t)] = t[:-1]  # <pad> (the start) first
            target_out[row, :len(t)] = t
        source_mask = source != self.pad
        target_mask = np.zeros_like(target_out, dtype=bool)
        for row, (_, t, _) in enumerate(chosen):
            target_mask[row, :len(t)] = True
        return tuple(torch.from_numpy(a) for a in (source, source_mask, target_in, target_out,
                                                   target_mask, guide))


# ----------------------------------------------------------------------------------------------
# 5. Evaluation
# ----------------------------------------------------------------------------------------------


def greedy(model, tokens, text, limit=96):
    source = torch.tensor([tokens.encode(text, "source")])
    mask = torch.ones_like(source)
    with torch.no_grad():
        memory = model.encode(source, mask)
        out = [tokens.pad]
        for _ in range(limit):
            logits = model.decode(torch.tensor([out]), memory, mask)
            best = int(torch.argmax(logits[0, -1]))
            out.append(best)
            if best == EOS:
                break
    return tokens.decode(out[1:])


def chrf(hypotheses, references, order=6, beta=2.0):
    """Corpus chrF as sacrebleu computes it: character n-gram statistics (spaces removed) for
    n = 1..order summed over the corpus, precision and recall averaged over n, F-beta."""
    matches, hyp_total, ref_total = [0] * order, [0] * order, [0] * order
    for hypothesis, reference in zip(hypotheses, references):
        h, r = hypothesis.replace(" ", ""), reference.replace(" ", "")
        for n in range(1, order + 1):
            h_grams = collections.Counter(h[i:i + n] for i in range(len(h) - n + 1))
            r_grams = collections.Counter(r[i:i + n] for i in range(len(r) - n + 1))
            matches[n - 1] += sum((h_grams & r_grams).values())
            hyp_total[n - 1] += sum(h_grams.values())
            ref_total[n - 1] += sum(r_grams.values())
    precision = sum(m / t if t else 0.0 for m, t in zip(matches, hyp_total)) / order
    recall = sum(m / t if t else 0.0 for m, t in zip(matches, ref_total)) / order
    if precision + recall == 0:
        return 0.0
    return 100.0 * (1 + beta**2) * precision * recall / (beta**2 * precision + recall)


def word_of_piece(pieces):
    """The index of the word (split at spaces) each SentencePiece piece belongs to; None for
    </s>."""
    words, index = [], -1
    for piece in pieces:
        if piece.startswith("\u2581") or index < 0:
            index += 1
        words.append(index)
    return words


def linked_pieces(tokens, english_markup, spanish_markup):
    """A verse pair's ids, the word of each source and target piece (None for </s>), and the
    Strong's links: target word -> the set of source words sharing a number with it. None when a
    piece is only a space (the words are not recoverable)."""
    english = web_corpus.tagged_words(english_markup)
    spanish = web_corpus.tagged_words(spanish_markup)
    if spanish:  # the chapter's first word in capitals, written as a word
        spanish[0] = (web_corpus.capitals_as_word(spanish[0][0]), spanish[0][1])
    source_pieces = tokens.source.encode(" ".join(w for w, _ in english), out_type=str)
    target_pieces = tokens.target.encode(" ".join(w for w, _ in spanish), out_type=str)
    source_words, target_words = word_of_piece(source_pieces), word_of_piece(target_pieces)
    if (not source_words or not target_words or source_words[-1] != len(english) - 1
            or target_words[-1] != len(spanish) - 1):
        return None
    links = [{i for i, (_, e) in enumerate(english) if e & s} for _, s in spanish]
    source = [tokens.ids.get(p, UNK) for p in source_pieces] + [EOS]
    target = [tokens.ids.get(p, UNK) for p in target_pieces] + [EOS]
    return source, target, source_words + [None], target_words + [None], links


def alignment_examples(tokens, pairs):
    """linked_pieces() of each held-out verse pair whose words are recoverable."""
    examples = [linked_pieces(tokens, p[3], p[4]) for p in pairs]
    return [e for e in examples if e is not None]


def guidance(linked):
    """For guided alignment: [(target piece, (its linked source pieces))] of a linked_pieces()
    result, one entry for each target piece whose word has a Strong's link."""
    _, _, source_words, target_words, links = linked
    out = []
    for piece, word in enumerate(target_words):
        if word is None or not links[word]:
            continue
        keys = tuple(k for k, w in enumerate(source_words) if w in links[word])
        if keys:
            out.append((piece, keys))
    return out


def alignment_precision(model, tokens, examples):
    """Each cross head's alignment precision, (layers, heads), twice: for the row that outputs a
    target piece (its input is the piece before), and for the row that reads it (its input is
    the piece); and the diagonal's. A row counts when its piece's word has a Strong's link (not
    </s>); it is right when the source word it weighs most is linked to that word."""
    outputs = torch.zeros(model.layers, model.heads)
    reads = torch.zeros(model.layers, model.heads)
    diagonal, counted = 0, 0
    with torch.no_grad():
        for source, target, source_words, target_words, links in examples:
            s = torch.tensor([source])
            mask = torch.ones_like(s)
            keep = []
            model.decode(torch.tensor([[tokens.pad] + target]), model.encode(s, mask), mask,
                         keep_cross=keep)
            best = torch.stack([a[0].argmax(-1) for a in keep])  # (layers, heads, n_t + 1)
            linked = torch.zeros(best.shape[-1], len(source), dtype=torch.bool)  # (row, key)
            for piece, word in enumerate(target_words):
                if word is None or not links[word]:
                    continue
                counted += 1
                for key, source_word in enumerate(source_words):
                    linked[piece, key] = source_word in links[word]
                key = round((piece + 0.5) * len(source) / len(target) - 0.5)
                diagonal += bool(linked[piece, min(key, len(source) - 1)])
            rows = torch.arange(len(target))
            outputs += linked[rows[None, None, :], best[:, :, :-1]].float().sum(-1)
            reads += linked[rows[None, None, :], best[:, :, 1:]].float().sum(-1)
    counted = max(counted, 1)
    return outputs / counted, reads / counted, diagonal / counted, counted


# ----------------------------------------------------------------------------------------------
# 6. Files
# ----------------------------------------------------------------------------------------------


def write_config(path, args, vocab_size, pad):
    config = {
        "activation_dropout": 0.0, "activation_function": "swish", "architectures":
        ["MarianMTModel"], "attention_dropout": 0.0, "bos_token_id": 0,
        "d_model": args.d_model, "decoder_attention_heads": args.heads,
        "decoder_ffn_dim": 4 * args.d_model, "decoder_layerdrop": 0.0,
        "decoder_layers": args.layers, "decoder_start_token_id": pad,
        "decoder_vocab_size": vocab_size, "dropout": args.dropout,
        "encoder_attention_heads": args.heads,
        "encoder_ffn_dim": 4 * args.d_model, "encoder_layerdrop": 0.0,
        "encoder_layers": args.layers, "eos_token_id": EOS, "forced_eos_token_id": EOS,
        "init_std": 0.02, "is_encoder_decoder": True, "max_length": 512,
        "max_position_embeddings": args.context, "model_type": "marian", "num_beams": 1,
        "num_hidden_layers": args.layers, "pad_token_id": pad, "scale_embedding": True,
        "share_encoder_decoder_embeddings": True, "static_position_embeddings": True,
        "tie_word_embeddings": True, "torch_dtype": "float32", "use_cache": True,
        "vocab_size": vocab_size,
    }
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")


def write_tokenizer(folder, tokens, context):
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(tokens.ids, ensure_ascii=False, indent=2) + "\n")
    config = {"eos_token": "</s>", "model_max_length": context, "pad_token": "<pad>",
              "separate_vocabs": False, "source_lang": "en", "target_lang": "es",
              "tokenizer_class": "MarianTokenizer", "unk_token": "<unk>"}
    with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")


# ----------------------------------------------------------------------------------------------

EVERYDAY = ["The teacher asked the students to open their books.",
            "My sister bought a new bicycle last week.",
            "The black dog ran to the house.",
            "God said, let there be light."]


def main():
    parser = training_run.parser(__doc__.split("\n")[0], steps=8000, batch=32, context=128,
                                 d_model=192, layers=3, heads=4, vocab_size=8000, lr=1e-3,
                                 warmup=1000, eval_every=2000, matmuls="bfloat16")
    parser.add_argument("--dropout", type=float, default=0.1,
                        help="dropout while training (the embeddings, each sublayer's output)")
    parser.add_argument("--guided-head", default="1.0",
                        help="LAYER.HEAD: the decoder cross-attention head taught to align by "
                        "guided alignment (Garg et al. 2019; Marian's --guided-alignment)")
    parser.add_argument("--guided-weight", type=float, default=0.5,
                        help="the weight of the guided-alignment loss beside the translation's "
                        "(0: none, every head left to learn alone)")
    parser.add_argument("--init", default=None, metavar="FOLDER",
                        help="start from the weights of the marian-web-es folder FOLDER (its "
                        "vocab.json must be the one this run learns) instead of random ones: a "
                        "finished run trained on, with a new warm-up")
    args = parser.parse_args()
    try:
        guided_layer, guided_head = (int(v) for v in args.guided_head.split("."))
    except ValueError:
        parser.error(f"--guided-head {args.guided_head}: LAYER.HEAD expected, as 1.0")
    if not (0 <= guided_layer < args.layers and 0 <= guided_head < args.heads):
        parser.error(f"--guided-head {args.guided_head}: no such head in {args.layers} layers of "
                     f"{args.heads} heads")
    if not 0.0 <= args.guided_weight <= 10.0:
        parser.error("--guided-weight is from 0 to 10")
    log = training_run.start(args.out, args, torch, np)

    # 1. corpus
    all_pairs = verse_pairs(log)
    pairs = [p for p in all_pairs if p[0] not in web_corpus.HELD_OUT_BOOKS]
    chapter_index = {key: i for i, key in enumerate(dict.fromkeys((p[0], p[1]) for p in pairs))}
    train = [p for p in pairs if chapter_index[(p[0], p[1])] % 20 != 10]
    validation = [p for p in pairs if chapter_index[(p[0], p[1])] % 20 == 10]
    held_out = [p for p in all_pairs if p[0] == "Mark"]
    log(f"training {len(train)} pairs, validation {len(validation)} (every 20th chapter), "
        f"Mark {len(held_out)} for the translations and the alignments")

    # 2. vocabularies
    english_text = [plain(p[3]) for p in train]
    spanish_text = [plain(p[4], spanish=True) for p in train]
    source = learn_sentencepiece(os.path.join(args.out, "source"), english_text,
                                 args.vocab_size, log, "English")
    target = learn_sentencepiece(os.path.join(args.out, "target"), spanish_text,
                                 args.vocab_size, log, "Spanish")
    for side in ("source", "target"):
        os.replace(os.path.join(args.out, side + ".model"), os.path.join(args.out, side + ".spm"))
        os.remove(os.path.join(args.out, side + ".vocab"))
    tokens = MarianTokens(source, target)
    write_tokenizer(args.out, tokens, args.context)
    log(f"vocab.json: {len(tokens.vocab)} pieces (</s>, <unk>, English, Spanish, <pad>)")
    words = sum(len(s.split()) for s in train_gpt2.EVERYDAY_SENTENCES)
    pieces = sum(len(tokens.encode(s, "source")) - 1 for s in train_gpt2.EVERYDAY_SENTENCES)
    log(f"tokens a word on {len(train_gpt2.EVERYDAY_SENTENCES)} everyday English sentences: "
        f"{pieces / words:.2f}")
    for s in EVERYDAY[:2]:
        log("  " + " | ".join(source.encode(s, out_type=str)))

    def encoded(subset):
        """[(source ids, target ids, guidance)] of the pairs within the context; the guidance
        empty where the Strong's links cannot be read onto the pieces."""
        out = []
        for p in subset:
            s, t = tokens.encode(plain(p[3]), "source"), tokens.encode(plain(p[4], True), "target")
            if len(s) <= args.context and len(t) <= args.context:
                linked = linked_pieces(tokens, p[3], p[4])
                same = linked is not None and linked[0] == s and linked[1] == t
                out.append((s, t, guidance(linked) if same else []))
        return out

    train_pairs, validation_pairs = encoded(train), encoded(validation)
    log(f"pairs within {args.context} tokens a side: training {len(train_pairs)} of "
        f"{len(train)}, validation {len(validation_pairs)} of {len(validation)}; training "
        f"tokens: {sum(len(s) for s, _, _ in train_pairs)} English, "
        f"{sum(len(t) for _, t, _ in train_pairs)} Spanish")
    log(f"Strong's links for guided alignment: {sum(len(g) for _, _, g in train_pairs)} target "
        f"pieces of {sum(len(t) - 1 for _, t, _ in train_pairs)} (training pairs only; "
        f"{sum(1 for _, _, g in train_pairs if not g)} pairs have none)")

    # 3. model
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = Marian(len(tokens.vocab), args.context, args.d_model, args.layers, args.heads,
                   4 * args.d_model, args.dropout)
    model.set_outputs({EOS, UNK} | {tokens.ids[target.id_to_piece(i)]
                                    for i in range(target.get_piece_size())
                                    if not target.is_unknown(i)})
    if args.init:
        with open(os.path.join(args.init, "vocab.json"), encoding="utf-8") as f:
            if json.load(f) != tokens.ids:
                parser.error(f"--init {args.init}: its vocab.json is not the vocabulary learned "
                             "here")
        stored = training_run.read_safetensors(torch, os.path.join(args.init, "model.safetensors"))
        with torch.no_grad():
            for key, tensor in model.params.items():
                name = key.replace("/", ".")
                if name not in stored or stored[name].shape != tensor.shape:
                    parser.error(f"--init {args.init}: no {name} of shape {list(tensor.shape)}")
                # the stored bias holds the -100 of the ids never output: the parameter does not
                tensor.copy_(stored[name] - model.blocked if name == "final_logits_bias"
                             else stored[name])
        log(f"weights from {args.init}/model.safetensors (SHA-256 "
            f"{training_run.sha256_of(os.path.join(args.init, 'model.safetensors'))})")
    log(f"outputs: the {len(model.outputs)} Spanish pieces, </s> and <unk>; the other ids' "
        "final_logits_bias is -100")
    log(f"model: {args.layers} + {args.layers} layers, {args.heads} heads, d {args.d_model}, "
        f"vocabulary {len(tokens.vocab)}: {sum(t.numel() for t in model.parameters())} "
        "parameters")
    data = PairBatches(train_pairs, tokens.pad, rng, args.batch)
    validation_data = PairBatches(validation_pairs, tokens.pad, np.random.default_rng(0))
    validation_batches = [validation_data.batch(rows=range(i, min(i + 32,
                                                                    len(validation_pairs))))
                          for i in range(0, min(256, len(validation_pairs)), 32)]
    examples = alignment_examples(tokens, held_out[:200])
    mark_sources = [plain(p[3]) for p in held_out[:100]]
    mark_references = [plain(p[4], True) for p in held_out[:100]]

    output_index = torch.full((len(tokens.vocab),), -1, dtype=torch.long)
    output_index[model.outputs] = torch.arange(len(model.outputs))

    def loss_of(batch, smoothing, guided=False):
        """The translation's cross-entropy; with `guided`, plus --guided-weight times the
        guided-alignment loss: the cross-entropy of the guided head's attention row against the
        Strong's links, over the rows that output a linked piece."""
        source_ids, source_mask, target_in, target_out, target_mask, guide = batch
        memory = model.encode(source_ids, source_mask)
        keep_cross = [] if guided else None
        logits = model.decode(target_in, memory, source_mask, keep_cross=keep_cross,
                              only_outputs=True)
        loss = torch.nn.functional.cross_entropy(logits[target_mask].float(),
                                                 output_index[target_out[target_mask]],
                                                 label_smoothing=smoothing)
        if guided:
            alpha = keep_cross[guided_layer][:, guided_head].float()  # (b, n_t, n_s)
            rows = guide.sum(-1) > 0  # (b, n_t)
            if bool(rows.any()):
                per_row = -(guide * torch.log(alpha.clamp_min(1e-9))).sum(-1)  # (b, n_t)
                loss = loss + args.guided_weight * per_row[rows].mean()
        return loss

    def training_loss():
        with training_run.step_precision(torch, args):
            return loss_of(data.batch(), 0.1, guided=args.guided_weight > 0)

    def evaluate(step, translations=2):
        was_training = model.training
        model.eval()
        with torch.no_grad():
            loss = float(np.mean([loss_of(b, 0.0).item() for b in validation_batches]))
        outputs, reads, diagonal, counted = alignment_precision(model, tokens, examples)

        def scores(precision):
            best = divmod(int(torch.argmax(precision)), args.heads)
            return (f"best L{best[0]}H{best[1]} {precision[best].item():.3f} ("
                    + " | ".join(" ".join(f"{v:.2f}" for v in row) for row in precision.tolist())
                    + ")")

        log(f"eval step {step}: validation loss {loss:.4f}; cross-attention alignment on Mark "
            f"({counted} target pieces; the diagonal {diagonal:.3f}): the row that outputs the "
            f"piece {scores(outputs)}; the row that reads it {scores(reads)}")
        for text in EVERYDAY[:translations]:
            log(f"  {text} -> {greedy(model, tokens, text)}")
        model.train(was_training)

    optimizer = training_run.adamw(torch, model.params, args.lr, 0.01, (0.9, 0.98), 1e-9)

    def learning_rate(step):  # warm-up, then the inverse square root (Attention Is All You Need)
        return args.lr * min((step + 1) / args.warmup, math.sqrt(args.warmup / (step + 1)))

    log(f"recipe: teacher-forced cross-entropy, label smoothing 0.1, dropout {args.dropout}; "
        f"AdamW betas (0.9, 0.98), peak lr {args.lr} after {args.warmup} warm-up steps, then "
        f"1/√step; weight decay 0.01 on matrices, gradient clip 1.0; {args.steps} steps of "
        f"{args.batch} pairs of like lengths; the steps' matrix products in {args.matmuls}"
        + (f"; guided alignment on cross head L{guided_layer}H{guided_head}: its row that "
           "outputs a target piece whose word has a Strong's link taught the linked source "
           f"pieces (cross-entropy against 1/k on each, weight {args.guided_weight}; the train "
           "loss below is the sum)" if args.guided_weight > 0 else ""))
    evaluate(0)
    training_run.train_steps(model, optimizer, learning_rate, args.steps, training_loss,
                             evaluate, log, 50, args.eval_every, train_gpt2.load_average,
                             torch.nn.utils.clip_grad_norm_,
                             training_run.Checkpoint(torch, args.out, args.checkpoint_every,
                                                     {"data": data}), args.resume)

    # final measurements
    model.eval()
    evaluate(args.steps, translations=len(EVERYDAY))
    hypotheses = [greedy(model, tokens, s) for s in mark_sources]
    for source_text, hypothesis, reference in list(zip(mark_sources, hypotheses,
                                                       mark_references))[:5]:
        log(f"Mark: {source_text}\n    -> {hypothesis}\n    reference: {reference}")
    log(f"chrF of {len(hypotheses)} greedy translations of Mark: "
        f"{chrf(hypotheses, mark_references):.1f}")

    train_gpt2.write_safetensors(os.path.join(args.out, "model.safetensors"),
                                 model.named_marian_tensors())
    write_config(os.path.join(args.out, "config.json"), args, len(tokens.vocab), tokens.pad)
    check_source = torch.tensor([tokens.encode(EVERYDAY[2], "source")])
    with torch.no_grad():
        memory = model.encode(check_source, torch.ones_like(check_source))
    log("CHECK " + json.dumps({"source": EVERYDAY[2], "ids": check_source[0].tolist(),
                               "translation": greedy(model, tokens, EVERYDAY[2]),
                               "memory_first": [round(v, 6) for v in memory[0, 0].tolist()]},
                              separators=(",", ":"), ensure_ascii=False))
    log(f"wall time {time.time() - log.wall_start:.0f} s in all")
    log.close()
    training_run.write_sha256sums(args.out, ["config.json", "model.safetensors", "source.spm",
                                             "target.spm", "tokenizer_config.json", "train.log",
                                             "vocab.json"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
