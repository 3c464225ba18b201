#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/.

The seeds are small, meaningful inputs: the built-in scenario and lessons, sentences in many
scripts, invalid UTF-8, and malformed JSON. Re-run after changing the assets; libFuzzer's own
discoveries go to build-fuzz/corpus/, never here."""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CORPUS = HERE / "corpus"


def write(target, name, data):
    path = CORPUS / target / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


# --- fuzz_tokenizer: the first byte is the token limit, the rest the sentence ------------------
SENTENCES = {
    "readme": (16, "I like Natural Language Processing, a lot!"),
    "contractions": (32, "Don't stop: it's a well-known, state-of-the-art idea."),
    "numbers": (32, "pi is 3.14, and 1,000 > 999. Version 2.0.1-rc"),
    "emoji_zwj": (32, "coder \U0001F469\u200D\U0001F4BB and family \U0001F468\u200D\U0001F469\u200D\U0001F467 \u2764\uFE0F"),
    "skin_tone_flags": (32, "hi \U0001F44B\U0001F3FD from \U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA\U0001F1EF"),
    "cjk": (32, "我喜欢吃苹果。東京タワー、한국어 문장"),
    "rtl_bidi": (32, "\u202Bשלום עולם\u202C and \u200Fمرحبا بالعالم\u061F"),
    "combining": (32, "cafe\u0301 nai\u0308ve \u0915\u094D\u0937 Z\u0351\u0352\u0353algo"),
    "spaces_format": (32, "a\u00A0b\u2003c\u3000d\u200Be \uFEFFf\u00ADg\u2060h"),
    "greek_cyrillic": (32, "ΑΘΗΝΑ Αθήνα МОСКВА Ёж Ѐ"),
    "truncated_limit": (2, "one two three four five"),
    "limit_zero": (0, "nothing is kept"),
    "empty": (8, ""),
    "only_spaces": (8, " \t\r\n \u2028 "),
}
for name, (limit, sentence) in SENTENCES.items():
    write("fuzz_tokenizer", name, bytes([limit]) + sentence.encode("utf-8"))
INVALID = {
    "invalid_bytes": b"abc \xff\xfe def \x80\x80 g\xc3",
    "overlong_surrogate": b"over\xc0\xaflong \xed\xa0\x80surrogate \xf4\x90\x80\x80big",
    "truncated_sequences": b"\xe2\x82 \xf0\x9f\x98 \xe4\xb8 end\xf0",
    "replacement_char": "real \ufffd and fake \xef\xbf".encode("utf-8") + b"\xef\xbf",
    "mixed_invalid_emoji": "x\U0001F469\u200D".encode("utf-8") + b"\xff" + "\U0001F4BB".encode("utf-8"),
}
for name, data in INVALID.items():
    write("fuzz_tokenizer", name, bytes([16]) + data)

# --- fuzz_scenario / fuzz_compute: scenario files ------------------------------------------------
def scenario(**fields):
    base = {"format": "attnviz-scenario", "version": 1, "target": "i like to eat apple"}
    base.update(fields)
    return json.dumps(base, ensure_ascii=False)

SCENARIOS = {
    "builtin.json": (ROOT / "assets/scenarios/default.json").read_text(encoding="utf-8"),
    "translation.json": (ROOT / "docs/scenarios/translation.json").read_text(encoding="utf-8"),
    "minimal.json": '{"target": "a"}',
    "mask_pattern.json": scenario(target="the animal did not cross the street", causal=True,
                                  mask_pattern={"kind": "dilated", "width": 3, "dilation": 2,
                                                "global": [0, 40]}),
    "grouped_query.json": scenario(heads=4, d_k=2, d_v=2, kv_groups=2, causal=True),
    "cross_mask.json": scenario(mode="cross", source="je mange une pomme", causal=True,
                                mask=[[1, 0, 1, 1], [0, 0, 0, 0], [True, False, True, True],
                                      [1, 1, 1, 1], [0, 1, 0, 1]]),
    "general_hard.json": scenario(compatibility="general", hard=True, d_model=6, heads=3, d_k=2,
                                  d_v=3, seed=12345),
    "additive_positions.json": scenario(compatibility="additive", d_att=3, positional="sinusoidal",
                                        temperature=0.001, max_tokens=3),
    "cosine_zero_weights.json": scenario(compatibility="cosine", d_model=2, heads=1, d_k=2,
                                         weights={"W_Q": [[[0, 0], [0, 0]]], "W_K": [[[1, 0], [0, 1]]]}),
    "overflow.json": scenario(compatibility="dot", d_model=2, heads=1, d_k=1, d_v=1,
                              temperature=0.001,
                              embeddings={"apple": [3.4e38, -3.4e38], "eat": [1e30, 1e30]},
                              weights={"W_Q": [[[3.4e38], [3.4e38]]], "W_K": [[[3.4e38], [-3.4e38]]],
                                       "W_V": [[[1e38], [1e38]]], "W_O": [[3.4e38, -3.4e38]]}),
    "unicode_view.json": scenario(title="Ünïcödé 🧪", target="我 like 🍎 שלום\u200F don't 3.14",
                                  description="RTL \u202Bמימין\u202C", seed=2**64 - 1,
                                  embeddings={"🍎": [1, 2, 3, 4, 5, 6, 7, 8]},
                                  view={"theme": "dark", "head": 1, "panels": ["input", "arrows"],
                                        "nested": {"z": [1.5, None, True], "a": "x"}}),
    "comments_unknown_keys.json": '/* block */ {"target": "x y", // line\n "extra": [1, {"a": 2}], "temperature": 1000}',
    # Comments holding quotes and brackets, and a view nested close to the 32-level limit.
    "comments_quotes_nesting.json": '{"target": "a b", /* a 5" screen { [ */ // "odd\n "view": '
                                    + '{"v": ' * 29 + '[1]' + '}' * 29 + '}',
}
MALFORMED = {
    "bad_trailing_comma.json": '{"target": "a b",}',
    "bad_unterminated.json": '{"target": "a b',
    "bad_type.json": '{"target": 5, "heads": "two"}',
    "bad_limits.json": '{"target": "a", "d_model": 0, "heads": 17, "temperature": 1e-9}',
    "bad_deep.json": "[" * 40 + "]" * 40,
    "bad_not_object.json": '["attnviz-scenario", 1]',
    "bad_invalid_utf8.json": b'{"target": "a \xff b"}',
    "bad_mask_shape.json": scenario(mask=[[1, 0], [1]]),
    "bad_weights_shape.json": scenario(weights={"W_Q": [[[1, 2]]]}),
}
for target in ("fuzz_scenario", "fuzz_compute"):
    for name, text in SCENARIOS.items():
        write(target, name, text)
for name, text in MALFORMED.items():
    write("fuzz_scenario", name, text)
# A model's scenario with edited weights and embeddings (the parser only: fuzz_compute skips models).
write("fuzz_scenario", "model_edits.json", json.dumps({
    "format": "attnviz-scenario", "version": 2,
    "model": {"name": "stories260K",
              "interventions": [{"layer": 0, "head": 1, "scale": 0}],
              "weights": [{"layer": 0, "matrix": "W_Q", "head": 2, "cells": [[0, 5, 0.25]]},
                          {"layer": 1, "matrix": "W_K", "kv_head": 0, "cells": [[7, 7, 0]]}],
              "embeddings": [{"token": 317, "cells": [[4, 1.2]]}]},
    "target": "Once upon a time"}, indent=1))

# --- fuzz_lesson: the built-in lessons and a few small ones ---------------------------------------
for path in sorted((ROOT / "assets/lessons").glob("*.json")):
    write("fuzz_lesson", path.name, path.read_bytes())

def lesson(steps, **scenario_fields):
    base = {"target": "the animal did not cross the street because it was tired", "d_model": 8,
            "heads": 2}
    base.update(scenario_fields)
    return json.dumps({"format": "attnviz-lesson", "version": 1, "title": "t", "summary": "s",
                       "scenario": base, "steps": steps}, ensure_ascii=False)

LESSONS = {
    "small_checks.json": lesson([
        {"title": "one", "text": "{alpha:0:it:animal} {argmax:1:#3} {n_query} {pairs} {sqrt_d_k} {nope} {",
         "query": "it", "key": 1, "head": 1, "panels": ["input", "heatmaps"], "view": "neuron",
         "predict": {"prompt": "?", "query": "#10", "head": 0},
         "checks": [{"check": "argmax", "query": "it", "key": "animal"},
                    {"check": "weight_above", "query": 0, "key": "#1", "value": 0.5},
                    {"check": "heads_disagree", "query": "it", "head": 0, "head_b": 1},
                    {"check": "one_hot"}, {"check": "diagonal_dominates"}]},
        {"title": "two", "scenario": {"causal": True, "hard": True, "heads": None},
         "checks": [{"check": "upper_triangle_zero"}, {"check": "output_equals_value", "query": 0, "key": 0}]},
    ]),
    "small_cross_permutation.json": lesson([
        {"title": "perm", "checks": [{"check": "permutation_equivariant",
                                      "permutation": [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]}]},
        {"title": "cross", "scenario": {"mode": "cross", "source": "l'animal n'a pas traversé"},
         "key": "l'animal", "checks": [{"check": "max_weight_below", "query": "#0", "value": 1}]},
    ]),
    "bad_no_steps.json": lesson([]),
    "bad_step_patch.json": lesson([{"title": "x", "scenario": {"d_model": 7}}]),
    "bad_format.json": '{"format": "attnviz-scenario", "title": 1}',
    "bad_truncated.json": lesson([{"title": "x"}])[:-7],
}
for name, text in LESSONS.items():
    write("fuzz_lesson", name, text)

# --- Regressions: inputs that crashed (see tests/core/pipeline/test_regressions.cpp) -----------------------
write("fuzz_lesson", "regression_lesson_number", "29007199254740993")
write("fuzz_lesson", "regression_permutation_past_int.json",
      lesson([{"title": "p", "checks": [{"check": "permutation_equivariant",
                                          "permutation": [4294967296] + list(range(1, 11))}]}]))
write("fuzz_scenario", "regression_comment_quote_depth.json",
      '{"target": "a", // "\n "view": {"v": ' + "[" * 40 + "1" + "]" * 40 + "}}")

# --- fuzz_safetensors: byte 0 even: a safetensors file; odd: a folder (1, 5 GPT-2; 3 BERT; 7 an
# encoder–decoder) -------------------------------------------------------------------------------
# (two little-endian bytes: config.json's length, then config.json, then model.safetensors).
import struct


def safetensors(tensors, metadata=None, pad=True):
    """tensors: [(name, dtype, shape, raw bytes)] -> the file's bytes."""
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    while pad and len(text) % 8:
        text += b" "
    return struct.pack("<Q", len(text)) + text + data


def values(dtype, count, k):
    """count small values of tensor k: multiples of 1/32, exact in F16 and BF16."""
    floats = [((k * 13 + i * 7) % 33 - 16) / 32 for i in range(count)]
    if dtype == "F32":
        return struct.pack(f"<{count}f", *floats)
    if dtype == "F16":
        return struct.pack(f"<{count}e", *floats)
    return b"".join(struct.pack("<f", v)[2:] for v in floats)  # BF16: the float's top half


def tiny_gpt2(dtype="F32", prefix="", d=4, layers=1, vocab=5, positions=3, inner=None):
    inner = inner or 4 * d
    shapes = [("wte.weight", [vocab, d]), ("wpe.weight", [positions, d])]
    for i in range(layers):
        h = f"h.{i}."
        shapes += [(h + "ln_1.weight", [d]), (h + "ln_1.bias", [d]),
                   (h + "attn.c_attn.weight", [d, 3 * d]), (h + "attn.c_attn.bias", [3 * d]),
                   (h + "attn.c_proj.weight", [d, d]), (h + "attn.c_proj.bias", [d]),
                   (h + "ln_2.weight", [d]), (h + "ln_2.bias", [d]),
                   (h + "mlp.c_fc.weight", [d, inner]), (h + "mlp.c_fc.bias", [inner]),
                   (h + "mlp.c_proj.weight", [inner, d]), (h + "mlp.c_proj.bias", [d])]
    shapes += [("ln_f.weight", [d]), ("ln_f.bias", [d])]
    tensors = []
    for k, (name, shape) in enumerate(shapes):
        count = 1
        for n in shape:
            count *= n
        tensors.append((prefix + name, dtype, shape, values(dtype, count, k)))
    config = {"model_type": "gpt2", "n_embd": d, "n_head": 2, "n_layer": layers,
              "n_positions": positions, "n_ctx": positions, "vocab_size": vocab, "n_inner": None,
              "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5}
    return json.dumps(config).encode(), tensors


def gpt2_input(config, tensors):
    return b"\x01" + struct.pack("<H", len(config)) + config + safetensors(tensors)


for dtype in ("F32", "F16", "BF16"):
    for prefix in ("", "transformer."):
        config, tensors = tiny_gpt2(dtype, prefix)
        label = dtype.lower() + ("_prefixed" if prefix else "")
        write("fuzz_safetensors", f"gpt2_{label}", gpt2_input(config, tensors))
config, tensors = tiny_gpt2("F32", "transformer.", layers=2, inner=6)
tensors.append(("transformer.h.0.attn.bias", "F32", [1, 1, 3, 3], values("F32", 9, 99)))
tensors.append(("lm_head.weight", "F32", [5, 4], tensors[0][3]))
write("fuzz_safetensors", "gpt2_two_layers_mask_lm_head", gpt2_input(config, tensors))
config, tensors = tiny_gpt2("F16")
write("fuzz_safetensors", "gpt2_config_disagrees", gpt2_input(config.replace(b'"n_embd": 4', b'"n_embd": 8'), tensors))
write("fuzz_safetensors", "gpt2_config_not_json", gpt2_input(b'{"n_embd": 4,', tensors))



def tensors_of(shapes, dtype):
    """(name, dtype, shape, bytes) of each (name, shape), tensor number k's values values(dtype,
    count, k)."""
    tensors = []
    for k, (name, shape) in enumerate(shapes):
        count = 1
        for n in shape:
            count *= n
        tensors.append((name, dtype, shape, values(dtype, count, k)))
    return tensors


def tiny_bert(dtype="F32", layout="masked-lm", d=4, layers=1, vocab=7, positions=5, inner=6):
    """A BERT folder's config and tensors: BertModel's names, or BertForMaskedLM's with "bert."
    and the MLM head (nn.Linear's (out, in) shapes)."""
    prefix = "bert." if layout == "masked-lm" else ""
    shapes = [(prefix + "embeddings.word_embeddings.weight", [vocab, d]),
              (prefix + "embeddings.position_embeddings.weight", [positions, d]),
              (prefix + "embeddings.token_type_embeddings.weight", [2, d]),
              (prefix + "embeddings.LayerNorm.weight", [d]), (prefix + "embeddings.LayerNorm.bias", [d])]
    for i in range(layers):
        at = f"{prefix}encoder.layer.{i}."
        for part in ("query", "key", "value"):
            shapes += [(at + f"attention.self.{part}.weight", [d, d]),
                       (at + f"attention.self.{part}.bias", [d])]
        shapes += [(at + "attention.output.dense.weight", [d, d]), (at + "attention.output.dense.bias", [d]),
                   (at + "attention.output.LayerNorm.weight", [d]), (at + "attention.output.LayerNorm.bias", [d]),
                   (at + "intermediate.dense.weight", [inner, d]), (at + "intermediate.dense.bias", [inner]),
                   (at + "output.dense.weight", [d, inner]), (at + "output.dense.bias", [d]),
                   (at + "output.LayerNorm.weight", [d]), (at + "output.LayerNorm.bias", [d])]
    if layout == "masked-lm":
        shapes += [("cls.predictions.transform.dense.weight", [d, d]),
                   ("cls.predictions.transform.dense.bias", [d]),
                   ("cls.predictions.transform.LayerNorm.weight", [d]),
                   ("cls.predictions.transform.LayerNorm.bias", [d]), ("cls.predictions.bias", [vocab])]
    tensors = tensors_of(shapes, dtype)
    config = {"model_type": "bert", "hidden_size": d, "num_attention_heads": 2,
              "num_hidden_layers": layers, "intermediate_size": inner, "vocab_size": vocab,
              "max_position_embeddings": positions, "type_vocab_size": 2, "hidden_act": "gelu"}
    return json.dumps(config).encode(), tensors


def bert_input(config, tensors):
    return b"\x03" + struct.pack("<H", len(config)) + config + safetensors(tensors)


for dtype in ("F32", "F16", "BF16"):
    for layout in ("model", "masked-lm"):
        config, tensors = tiny_bert(dtype, layout)
        write("fuzz_safetensors", f"bert_{dtype.lower()}_{layout}", bert_input(config, tensors))
config, tensors = tiny_bert("F32", layers=2)
tensors.append(("cls.predictions.decoder.weight", "F32", [7, 4], tensors[0][3]))
write("fuzz_safetensors", "bert_two_layers_decoder", bert_input(config, tensors))
config, tensors = tiny_bert("F32")
write("fuzz_safetensors", "bert_config_disagrees",
      bert_input(config.replace(b'"hidden_size": 4', b'"hidden_size": 8'), tensors))

def tiny_marian(dtype="F32", bart=False, d=4, layers=1, vocab=7, positions=5, ffn=6):
    """A Marian (or BART) folder's config and tensors, names after "model."."""
    shapes = [("model.shared.weight", [vocab, d])]
    for side in ("encoder", "decoder"):
        at = f"model.{side}."
        if bart:
            shapes += [(at + "embed_positions.weight", [positions + 2, d]),
                       (at + "layernorm_embedding.weight", [d]), (at + "layernorm_embedding.bias", [d])]
        for i in range(layers):
            layer = f"{at}layers.{i}."
            for attention in ["self_attn"] + (["encoder_attn"] if side == "decoder" else []):
                for part in ("q_proj", "k_proj", "v_proj", "out_proj"):
                    shapes += [(f"{layer}{attention}.{part}.weight", [d, d]),
                               (f"{layer}{attention}.{part}.bias", [d])]
                shapes += [(f"{layer}{attention}_layer_norm.weight", [d]),
                           (f"{layer}{attention}_layer_norm.bias", [d])]
            shapes += [(layer + "fc1.weight", [ffn, d]), (layer + "fc1.bias", [ffn]),
                       (layer + "fc2.weight", [d, ffn]), (layer + "fc2.bias", [d]),
                       (layer + "final_layer_norm.weight", [d]), (layer + "final_layer_norm.bias", [d])]
    shapes.append(("final_logits_bias", [1, vocab]))
    tensors = tensors_of(shapes, dtype)
    config = {"model_type": "bart" if bart else "marian", "d_model": d, "encoder_layers": layers,
              "decoder_layers": layers, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
              "encoder_ffn_dim": ffn, "decoder_ffn_dim": ffn, "vocab_size": vocab,
              "max_position_embeddings": positions, "scale_embedding": not bart,
              "decoder_start_token_id": vocab - 1, "eos_token_id": 0}
    return json.dumps(config).encode(), tensors


def encoder_decoder_input(config, tensors):
    return b"\x07" + struct.pack("<H", len(config)) + config + safetensors(tensors)


for dtype in ("F32", "F16", "BF16"):
    for bart in (False, True):
        config, tensors = tiny_marian(dtype, bart)
        write("fuzz_safetensors", f"{'bart' if bart else 'marian'}_{dtype.lower()}",
              encoder_decoder_input(config, tensors))
config, tensors = tiny_marian("F32", layers=2)
write("fuzz_safetensors", "marian_two_layers", encoder_decoder_input(config, tensors))
config, tensors = tiny_marian("F32")
write("fuzz_safetensors", "marian_config_disagrees",
      encoder_decoder_input(config.replace(b'"d_model": 4', b'"d_model": 8'), tensors))

SAFETENSORS = {
    "one_f32": safetensors([("w", "F32", [2, 2], struct.pack("<4f", 1.5, -2, 0.25, 3))],
                           {"format": "pt"}),
    "f16_special": safetensors([("h", "F16", [6], struct.pack("<6H", 0x3C00, 0x7BFF, 0x0001,
                                                               0x8000, 0x7C00, 0x7E00))]),
    "bf16_unaligned": safetensors([("b", "BF16", [2], struct.pack("<2H", 0x3F80, 0xC049))],
                                  pad=False),
    "int_and_empty": safetensors([("i", "I64", [1], struct.pack("<q", 7)),
                                  ("e", "F32", [0, 4], b""), ("s", "U8", [], b"\x05")]),
    "empty_header": safetensors([]),
    "bad_overlap": struct.pack("<Q", 100) + (json.dumps(
        {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode().ljust(100)) + bytes(12),
    "bad_terabyte": struct.pack("<Q", 1 << 40) + b"{}",
}
for name, data in SAFETENSORS.items():
    write("fuzz_safetensors", name, b"\x00" + data)

# --- fuzz_gpt2_tokenizer: VOCAB \0 MERGES \0 TEXT, or TEXT alone for the target's fixed tokenizer --
def gpt2_symbols(data):
    """encoder.py's bytes_to_unicode(), applied to `data`."""
    printable = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or b >= 0xAE]
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + extra)
            extra += 1
    return "".join(table[b] for b in data)


def gpt2_files(words):
    tokens = [bytes([b]) for b in range(256)]
    merges = ["#version: 0.2"]
    for word in words:
        data = word.encode("utf-8")
        for n in range(2, len(data) + 1):
            if data[:n] not in tokens:
                tokens.append(data[:n])
                merges.append(gpt2_symbols(data[:n - 1]) + " " + gpt2_symbols(data[n - 1:n]))
    vocab = {gpt2_symbols(t): i for i, t in enumerate(tokens)}
    vocab["<|endoftext|>"] = len(tokens)
    return json.dumps(vocab, ensure_ascii=False), "\n".join(merges) + "\n"


GPT2_VOCAB, GPT2_MERGES = gpt2_files(["hello", " world", " the", "ing", "  ", "\u00e9t\u00e9"])
for name, text in {"hello": "hello world", "contractions": "it's we'll I'M",
                   "special": "a<|endoftext|>b", "spaces": "a  b\n\n c \t",
                   "accents_cjk_emoji": "\u00e9t\u00e9 \u6771\u4eac \U0001F469\u200D\U0001F4BB"}.items():
    write("fuzz_gpt2_tokenizer", f"files_{name}",
          (GPT2_VOCAB + "\0" + GPT2_MERGES + "\0" + text).encode("utf-8"))
write("fuzz_gpt2_tokenizer", "files_bad_merge",
      (GPT2_VOCAB + "\0h e\nh x y\n\0hello").encode("utf-8"))
write("fuzz_gpt2_tokenizer", "files_bad_id", ('{"a": 7}\0\0a').encode("utf-8"))
for name, (_, sentence) in SENTENCES.items():
    write("fuzz_gpt2_tokenizer", f"text_{name}", sentence.encode("utf-8"))
for name, data in INVALID.items():
    write("fuzz_gpt2_tokenizer", f"text_{name}", data)

# --- fuzz_llama2c_tokenizer: u16 vocabulary size - 1, u16 file length, the file, the text ---------
TOK512 = (ROOT / "assets/models/stories260K/tok512.bin").read_bytes()
for name, text in {"story": "Once upon a time, there was a little girl named Lily.",
                   "bytes": "caf\u00e9 \u2713 \U0001F600", "empty": "", "spaces": "  two  spaces\n"}.items():
    write("fuzz_llama2c_tokenizer", f"tok512_{name}",
          (511).to_bytes(2, "little") + len(TOK512).to_bytes(2, "little") + TOK512 +
          text.encode("utf-8"))
write("fuzz_llama2c_tokenizer", "tok512_cut",
      (511).to_bytes(2, "little") + (3000).to_bytes(2, "little") + TOK512[:3000] + b"x")


# --- fuzz_llama2c: the bytes are the checkpoint ----------------------------------------------------
def llama2c_checkpoint(version, dim=4, hidden=6, layers=1, heads=2, kv_heads=1, vocab=5, seq=3,
                       shared=True):
    """A tiny llama2.c checkpoint with small, varied weights (llama2.c's export.py's layout)."""
    count = [0]

    def floats(n):
        values = [((count[0] + i) % 7 - 3) * 0.125 for i in range(n)]
        count[0] += n
        return struct.pack(f"<{n}f", *values)

    head = dim // heads
    kv = head * kv_heads
    embedding = floats(vocab * dim)
    rms_att, rms_ffn = floats(layers * dim), floats(layers * dim)
    wq, wk, wv = floats(layers * dim * dim), floats(layers * kv * dim), floats(layers * kv * dim)
    wo = floats(layers * dim * dim)
    w1, w2, w3 = (floats(layers * hidden * dim) for _ in range(3))
    rms_final = floats(dim)
    classifier = b"" if shared else floats(vocab * dim)
    sizes = [dim, hidden, layers, heads, kv_heads, vocab if (shared or version == 1) else -vocab,
             seq]
    if version == 0:
        return (struct.pack("<7i", *sizes) + embedding + rms_att + wq + wk + wv + wo + rms_ffn +
                w1 + w2 + w3 + rms_final + floats(seq * head // 2) + floats(seq * head // 2) +
                classifier)
    header = struct.pack("<Ii7iB", 0x616B3432, 1, *sizes, 1 if shared else 0)
    return (header.ljust(256, b"\0") + rms_att + rms_ffn + rms_final + embedding + wq + wk + wv +
            wo + w1 + w2 + w3 + classifier)


write("fuzz_llama2c", "v0_shared", llama2c_checkpoint(0))
write("fuzz_llama2c", "v0_own_classifier_two_layers", llama2c_checkpoint(0, layers=2, shared=False))
write("fuzz_llama2c", "v1_shared", llama2c_checkpoint(1))
write("fuzz_llama2c", "v1_own_classifier", llama2c_checkpoint(1, heads=2, kv_heads=2, shared=False))
write("fuzz_llama2c", "v0_truncated", llama2c_checkpoint(0)[:-4])
write("fuzz_llama2c", "v1_trailing", llama2c_checkpoint(1) + b"\0\0\0\0")
write("fuzz_llama2c", "v1_nan", llama2c_checkpoint(1)[:-4] + struct.pack("<f", float("nan")))
write("fuzz_llama2c", "v2_refused", struct.pack("<Ii", 0x616B3432, 2).ljust(256, b"\0"))
write("fuzz_llama2c", "v0_absurd_sizes", struct.pack("<7i", 1 << 30, 1 << 30, 1 << 20, 1, 1,
                                                     -(1 << 31), 1 << 30))
