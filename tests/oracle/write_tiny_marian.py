#!/usr/bin/python3
"""Writes a tiny random Marian folder (MarianMTModel's layout), or with --bart a tiny BART, for the
engine's oracle tests. Marian's:
config.json, model.safetensors (F32, F16 or BF16; random weights from marian_reference.py's
tiny_weights, a random final_logits_bias, optionally an untied lm_head.weight), and a real
tokenizer: source.spm and target.spm learned here by Debian's python3-sentencepiece from a few
English and Spanish sentences, and vocab.json, their pieces in one vocabulary ("</s>" 0,
"<unk>" 1, ..., "<pad>" last, as the opus-mt models have).

Usage: /usr/bin/python3 tests/oracle/write_tiny_marian.py OUT_DIR [--dtype F16] [--untied]
         [--d-model D --heads H --layers L --ffn F --vocab V --positions P --scale S]
(--vocab pads the vocabulary with pieces no text gives, up to V tokens: the bench's opus-mt
shape.)
"""

import argparse
import io
import json
import pathlib
import sys

import numpy as np
import sentencepiece

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import marian_reference  # noqa: E402
import model_oracle_test  # noqa: E402  (the tiny byte-level BPE vocabulary)
import write_tiny_gpt2  # noqa: E402

ENGLISH = [
    "In the beginning God created the heavens and the earth.",
    "The earth was formless and empty.",
    "God said, let there be light, and there was light.",
    "God saw the light, and saw that it was good.",
    "The teacher asked the students to open their books.",
    "She gave birth to a son, and they went up to the city.",
]
SPANISH = [
    "En el principio creó Dios los cielos y la tierra.",
    "Y la tierra estaba desordenada y vacía.",
    "Y dijo Dios: Sea la luz, y fue la luz.",
    "Y vio Dios que la luz era buena.",
    "El maestro pidió a los estudiantes que abrieran sus libros.",
    "Ella dio a luz un hijo, y subieron a la ciudad.",
]


def learn_pieces(sentences, vocab_size):
    """A SentencePiece unigram model of `sentences`, as bytes."""
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences * 4), model_writer=model, vocab_size=vocab_size,
        model_type="unigram", character_coverage=1.0, unk_id=1, bos_id=-1, eos_id=0, pad_id=-1,
        hard_vocab_limit=False, minloglevel=2)
    return model.getvalue()


def write_tiny_bart(out_dir, seed=6, dtype="F32", d_model=16, heads=4, layers=2, ffn=24,
                    positions=64):
    """A tiny random BART folder: GPT-2's byte-level BPE (the 256 bytes, four merges, then <s>,
    <pad>, </s>, <unk>), learned positions of max_position_embeddings + 2 rows and an embedding
    LayerNorm on each stack, GELU. Returns the config."""
    import torch
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    alphabet = model_oracle_test.bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    for left, right in model_oracle_test.TINY_MERGES:
        vocab[left + right] = len(vocab)
    for special in ("<s>", "<pad>", "</s>", "<unk>"):
        vocab[special] = len(vocab)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (out / "merges.txt").write_text(
        "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in model_oracle_test.TINY_MERGES),
        encoding="utf-8")
    config = {
        "architectures": ["BartForConditionalGeneration"], "model_type": "bart",
        "d_model": d_model, "encoder_layers": layers, "decoder_layers": layers,
        "encoder_attention_heads": heads, "decoder_attention_heads": heads,
        "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn, "vocab_size": len(vocab),
        "max_position_embeddings": positions, "activation_function": "gelu",
        "scale_embedding": False, "normalize_before": False, "add_final_layer_norm": False,
        "bos_token_id": vocab["<s>"], "pad_token_id": vocab["<pad>"],
        "eos_token_id": vocab["</s>"], "decoder_start_token_id": vocab["</s>"],
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    weights = marian_reference.tiny_weights(seed, len(vocab), d_model, ffn, layers, layers)
    generator = torch.Generator().manual_seed(seed + 1)
    for side in ("encoder", "decoder"):
        weights[f"model.{side}.embed_positions.weight"] = torch.randn(
            positions + 2, d_model, generator=generator, dtype=torch.float64) * 0.3
        weights[f"model.{side}.layernorm_embedding.weight"] = 1.0 + 0.3 * torch.randn(
            d_model, generator=generator, dtype=torch.float64)
        weights[f"model.{side}.layernorm_embedding.bias"] = 0.3 * torch.randn(
            d_model, generator=generator, dtype=torch.float64)
    tensors = [(name, dtype, array.numpy().astype(np.float32)) for name, array in weights.items()]
    write_tiny_gpt2.write_safetensors(out / "model.safetensors", tensors, {"format": "pt"})
    return config


def write_tiny_marian(out_dir, seed=5, dtype="F32", untied=False, d_model=16, heads=4,
                      layers=2, ffn=24, positions=64, vocab_size=None, scale=0.3):
    """Writes the folder; returns the config."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    source, target = learn_pieces(ENGLISH, 60), learn_pieces(SPANISH, 60)
    (out / "source.spm").write_bytes(source)
    (out / "target.spm").write_bytes(target)
    pieces = ["</s>", "<unk>"]
    for model in (source, target):
        processor = sentencepiece.SentencePieceProcessor(model_proto=model)
        for i in range(processor.get_piece_size()):
            piece = processor.id_to_piece(i)
            if piece not in pieces and piece not in ("<s>", "<pad>"):
                pieces.append(piece)
    pieces += [f"▁unused{i}" for i in range(max(0, (vocab_size or 0) - len(pieces) - 1))]
    pieces.append("<pad>")
    vocab = {piece: i for i, piece in enumerate(pieces)}
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=1),
                                    encoding="utf-8")
    config = {
        "architectures": ["MarianMTModel"], "model_type": "marian", "d_model": d_model,
        "encoder_layers": layers, "decoder_layers": layers, "encoder_attention_heads": heads,
        "decoder_attention_heads": heads, "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn,
        "vocab_size": len(pieces), "max_position_embeddings": positions,
        "activation_function": "swish", "scale_embedding": True, "normalize_before": False,
        "share_encoder_decoder_embeddings": True, "pad_token_id": len(pieces) - 1,
        "decoder_start_token_id": len(pieces) - 1, "eos_token_id": 0,
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    weights = marian_reference.tiny_weights(seed, len(pieces), d_model, ffn, layers, layers, scale)
    tensors = [(name, dtype, array.numpy().astype(np.float32)) for name, array in weights.items()]
    if untied:
        head = weights["model.shared.weight"].numpy().astype(np.float32) + 0.25
        tensors.append(("lm_head.weight", dtype, head))
    del weights  # (the bench's model: a float64 copy of 300 MB of weights)
    write_tiny_gpt2.write_safetensors(out / "model.safetensors", tensors, {"format": "pt"})
    return config


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--dtype", default="F32", choices=("F32", "F16", "BF16"))
    parser.add_argument("--untied", action="store_true")
    parser.add_argument("--bart", action="store_true", help="a tiny BART instead")
    parser.add_argument("--d-model", type=int, default=16)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--ffn", type=int, default=24)
    parser.add_argument("--vocab", type=int, default=None)
    parser.add_argument("--positions", type=int, default=64)
    parser.add_argument("--scale", type=float, default=0.3)
    args = parser.parse_args(argv)
    if args.bart:
        write_tiny_bart(args.out, dtype=args.dtype)
        return 0
    write_tiny_marian(args.out, dtype=args.dtype, untied=args.untied, d_model=args.d_model,
                      heads=args.heads, layers=args.layers, ffn=args.ffn,
                      positions=args.positions, vocab_size=args.vocab, scale=args.scale)
    return 0


if __name__ == "__main__":
    sys.exit(main())
