#!/usr/bin/python3
"""Oracle test: checks the AttnViz C++ attention engine against a PyTorch reference.

For each random scenario the script writes an `attnviz-scenario` JSON file, runs
`attnviz-cli compute SCENARIO.json -o OUT.json`, recomputes every matrix in torch
float64 following the documented math (row-vector convention, per head), and compares.
Where the shapes allow it (scaled_dot, soft, temperature 1, d_k == d_v == d_model/heads,
no custom mask) the result is also compared with torch.nn.MultiheadAttention.

Usage (CTest):
  /usr/bin/python3 tests/oracle/oracle_test.py --cli build/attnviz-cli [--cases N]
                                               [--seed S] [--workdir DIR]
  /usr/bin/python3 tests/oracle/oracle_test.py --self-check [--cases N] [--seed S]

--self-check needs no CLI: it validates the torch reference itself against
nn.MultiheadAttention, against an independent pure-Python loop implementation, and
checks that softmax rows sum to 1 (0 for fully masked rows).

Always run it with /usr/bin/python3 (Debian's python3-torch, torch 1.13).
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

try:
    import torch
except ImportError as _exc:  # reported in main() with a clear message
    torch = None
    TORCH_IMPORT_ERROR = str(_exc)
else:
    TORCH_IMPORT_ERROR = ""

DEFAULT_CASES = 200
DEFAULT_SEED = 1234
TOLERANCE = 1e-4            # max |Δ| for weights and outputs (absolute)
TOLERANCE_TEXT = "1e-4"
NEAR_TIE = 1e-3             # hard cases: top-two gap below this -> skip the case
CLI_TIMEOUT_S = 30
VOCABULARY = [f"w{i}" for i in range(31)]
COMPATIBILITIES = ["dot", "scaled_dot", "general", "additive", "cosine"]
MAX_LEN = 24
P_MHA = 0.3                 # fraction of cases built MultiheadAttention-compatible
P_MASK = 0.28               # among the other cases (~20% overall)
P_HARD = 0.15               # among the other cases (~10% overall)
P_FULL_ROW = 0.35           # custom mask: chance to mask one row completely
MAX_PROBLEMS_SHOWN = 4


# --------------------------------------------------------------------------------------
# Scenario generation
# --------------------------------------------------------------------------------------

def f32(array):
    """Round to float32-representable values and return nested Python lists of floats.

    The engine works in float32; giving it exactly representable inputs means both sides
    start from the same numbers and only the arithmetic differs.
    """
    return np.asarray(array, dtype=np.float32).astype(np.float64).tolist()


def random_weights(rng, heads, d_model, d_k, d_v, d_att):
    """All projection and scorer weights, normal with std 1/sqrt(fan_in)."""
    def normal(shape, fan_in):
        return f32(rng.standard_normal(shape) / math.sqrt(fan_in))

    return {
        "W_Q": normal((heads, d_model, d_k), d_model),
        "W_K": normal((heads, d_model, d_k), d_model),
        "W_V": normal((heads, d_model, d_v), d_model),
        "W_O": normal((heads * d_v, d_model), heads * d_v),
        "W_a": normal((heads, d_k, d_k), d_k),
        "W_1": normal((heads, d_k, d_att), d_k),
        "W_2": normal((heads, d_k, d_att), d_k),
        "v_a": normal((heads, d_att), d_att),
    }


def random_mask(rng, n_q, n_k):
    """A random 0/1 mask (1 = allowed), sometimes with one completely masked row."""
    mask = (rng.random((n_q, n_k)) < 0.7).astype(int)
    if rng.random() < P_FULL_ROW:
        mask[rng.integers(n_q), :] = 0
    return mask.tolist()


def random_words(rng, n, distinct):
    """n words from VOCABULARY (repeats allowed unless distinct)."""
    return [VOCABULARY[i] for i in rng.choice(len(VOCABULARY), size=n, replace=not distinct)]


def random_scenario(rng):
    """Build one random scenario dict in the CLI's input format."""
    mode = "self" if rng.random() < 0.5 else "cross"
    mha_shape = rng.random() < P_MHA
    if mha_shape:
        heads = int(rng.integers(1, 9))
        head_dim = int(rng.integers(max(1, -(-2 // heads)), min(16, 64 // heads) + 1))
        d_model, d_k, d_v = heads * head_dim, head_dim, head_dim
        compatibility, temperature, hard, use_mask = "scaled_dot", 1.0, False, False
    else:
        d_model = int(rng.integers(2, 65))
        heads = int(rng.integers(1, 9))
        d_k = int(rng.integers(1, 17))
        d_v = d_k if rng.random() < 0.25 else int(rng.integers(1, 17))
        compatibility = COMPATIBILITIES[int(rng.integers(len(COMPATIBILITIES)))]
        if rng.random() < 0.2:
            temperature = 1.0
        else:  # log-uniform in [0.25, 4], on a 1/64 grid (exact in float32)
            temperature = round(math.exp(rng.uniform(math.log(0.25), math.log(4.0))) * 64) / 64
        hard = bool(rng.random() < P_HARD)
        use_mask = bool(rng.random() < P_MASK)
    d_att = int(rng.integers(1, 17))

    n_target = int(rng.integers(1, MAX_LEN + 1))
    # Hard cases use distinct words: a repeated key word (without positional encoding)
    # ties exactly in float64 but not always in float32, and would only be skipped.
    target = random_words(rng, n_target, distinct=hard)
    source = None
    n_keys = n_target
    if mode == "cross":
        n_keys = int(rng.integers(1, MAX_LEN))
        if n_keys >= n_target:  # a length different from the target's
            n_keys += 1
        source = random_words(rng, n_keys, distinct=hard)

    words = sorted(set(target) | set(source or []), key=lambda w: int(w[1:]))
    scenario = {
        "format": "attnviz-scenario", "version": 1,
        "mode": mode,
        "target": " ".join(target),
        "d_model": d_model, "heads": heads, "d_k": d_k, "d_v": d_v, "d_att": d_att,
        "compatibility": compatibility,
        "temperature": temperature, "hard": hard,
        # Cross-attention has no causal mask (the CLI would turn it off with a warning); the
        # draw is made in both modes, so the scenarios after it stay as they were.
        "causal": bool(rng.random() < 0.4) and mode == "self",
        "positional": "sinusoidal" if rng.random() < 0.5 else "none",
        "seed": int(rng.integers(1, 1 << 30)),
        "embeddings": {w: f32(rng.standard_normal(d_model)) for w in words},
        "weights": random_weights(rng, heads, d_model, d_k, d_v, d_att),
    }
    if source is not None:
        scenario["source"] = " ".join(source)
    if use_mask:
        scenario["mask"] = random_mask(rng, n_target, n_keys)
    return scenario


# --------------------------------------------------------------------------------------
# Torch float64 reference
# --------------------------------------------------------------------------------------

def tensor(data):
    """Nested lists -> float64 torch tensor."""
    return torch.tensor(data, dtype=torch.float64)


def sinusoidal(n, d_model):
    """The paper's positional encoding, positions 0..n-1 (n, d_model)."""
    pe = torch.zeros(n, d_model, dtype=torch.float64)
    pos = torch.arange(n, dtype=torch.float64)
    for i in range(0, d_model, 2):
        angle = pos / (10000.0 ** (i / d_model))
        pe[:, i] = torch.sin(angle)
        if i + 1 < d_model:
            pe[:, i + 1] = torch.cos(angle)
    return pe


def embed(scenario, words):
    """Embedding rows of the words plus the optional positional encoding."""
    x = tensor([scenario["embeddings"][w] for w in words])
    if scenario["positional"] == "sinusoidal":
        x = x + sinusoidal(len(words), scenario["d_model"])
    return x


def sentence_words(scenario):
    """(target words, key/value words); the key words are the target's in self mode."""
    target = scenario["target"].split()
    source = scenario["source"].split() if scenario["mode"] == "cross" else target
    return target, source


def masked_cells(scenario, n_q, n_k):
    """Boolean (n_q, n_k) tensor, True where the cell is masked."""
    masked = torch.zeros(n_q, n_k, dtype=torch.bool)
    if scenario["causal"]:
        masked |= torch.ones(n_q, n_k, dtype=torch.bool).triu(diagonal=1)
    if "mask" in scenario:
        masked |= tensor(scenario["mask"]) == 0
    return masked


def raw_scores(scenario, h, q, k):
    """Unscaled compatibility scores S (n_q, n_k) for head h."""
    kind = scenario["compatibility"]
    weights = scenario["weights"]
    if kind in ("dot", "scaled_dot"):
        return q @ k.T
    if kind == "general":
        return q @ tensor(weights["W_a"][h]) @ k.T
    if kind == "additive":
        hq = q @ tensor(weights["W_1"][h])            # (n_q, d_att)
        hk = k @ tensor(weights["W_2"][h])            # (n_k, d_att)
        return torch.tanh(hq[:, None, :] + hk[None, :, :]) @ tensor(weights["v_a"][h])
    if kind == "cosine":
        norms = q.norm(dim=1)[:, None] * k.norm(dim=1)[None, :]
        safe = torch.where(norms > 0, norms, torch.ones_like(norms))
        return torch.where(norms > 0, (q @ k.T) / safe, torch.zeros_like(norms))
    raise ValueError(f"unknown compatibility {kind!r}")


def attention_weights(scenario, masked_scores, masked):
    """Softmax (or one-hot argmax when hard) over keys; fully masked rows are all zero."""
    full = masked.all(dim=1)
    safe = masked_scores.masked_fill(full[:, None], 0.0)
    if scenario["hard"]:
        alpha = torch.zeros_like(safe)
        alpha[torch.arange(safe.shape[0]), safe.argmax(dim=1)] = 1.0
    else:
        alpha = torch.softmax(safe, dim=1)
    return alpha.masked_fill(full[:, None], 0.0)


def reference(scenario):
    """Every matrix of the documented math, in float64. Returns a dict of tensors."""
    target, source = sentence_words(scenario)
    x_target = embed(scenario, target)
    x_source = embed(scenario, source)
    masked = masked_cells(scenario, len(target), len(source))
    scale = 1.0 / math.sqrt(scenario["d_k"]) if scenario["compatibility"] == "scaled_dot" else 1.0
    weights = scenario["weights"]
    heads = []
    for h in range(scenario["heads"]):
        q = x_target @ tensor(weights["W_Q"][h])
        k = x_source @ tensor(weights["W_K"][h])
        v = x_source @ tensor(weights["W_V"][h])
        scores = raw_scores(scenario, h, q, k)
        scaled = scores * scale / scenario["temperature"]
        masked_scores = scaled.masked_fill(masked, -math.inf)
        alpha = attention_weights(scenario, masked_scores, masked)
        heads.append({"Q": q, "K": k, "V": v, "scores": scores, "scaled_scores": scaled,
                      "weights": alpha, "output": alpha @ v})
    concat = torch.cat([head["output"] for head in heads], dim=1)
    return {
        "target_tokens": target, "source_tokens": source,
        "X_target": x_target, "X_source": x_source,
        "masked": masked,
        "fully_masked_rows": [int(i) for i in torch.nonzero(masked.all(dim=1)).flatten()],
        "heads": heads, "concat": concat, "output": concat @ tensor(weights["W_O"]),
    }


def has_near_tie(scenario, ref):
    """True if a hard case has a row whose top two unmasked scores are within NEAR_TIE.

    float32 and float64 may then pick different argmax keys, so such cases are skipped.
    """
    if not scenario["hard"]:
        return False
    for head in ref["heads"]:
        for row, masked_row in zip(head["scaled_scores"], ref["masked"]):
            candidates = row[~masked_row]
            if candidates.numel() >= 2:
                top = candidates.topk(2).values
                if float(top[0] - top[1]) <= NEAR_TIE:
                    return True
    return False


def mha_compatible(scenario):
    """Whether nn.MultiheadAttention computes exactly this scenario."""
    heads, d_model = scenario["heads"], scenario["d_model"]
    return (scenario["compatibility"] == "scaled_dot" and not scenario["hard"]
            and scenario["temperature"] == 1.0 and "mask" not in scenario
            and d_model % heads == 0
            and scenario["d_k"] == scenario["d_v"] == d_model // heads)


def mha_reference(scenario, ref):
    """Run nn.MultiheadAttention (float64) with the scenario's weights.

    Returns (per-head weights (heads, n_q, n_k), output (n_q, d_model)).
    """
    weights = scenario["weights"]
    heads = scenario["heads"]
    mha = torch.nn.MultiheadAttention(scenario["d_model"], heads, bias=False,
                                      batch_first=True).double().eval()
    # Row-vector X @ W[h] is the Linear x @ weight.T, so weight rows of head h = W[h]^T.
    w_q = torch.cat([tensor(weights["W_Q"][h]) for h in range(heads)], dim=1)
    w_k = torch.cat([tensor(weights["W_K"][h]) for h in range(heads)], dim=1)
    w_v = torch.cat([tensor(weights["W_V"][h]) for h in range(heads)], dim=1)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w_q.T, w_k.T, w_v.T], dim=0))
        mha.out_proj.weight.copy_(tensor(weights["W_O"]).T)
        attn_mask = ref["masked"] if scenario["causal"] else None
        output, alpha = mha(ref["X_target"][None], ref["X_source"][None],
                            ref["X_source"][None], need_weights=True,
                            attn_mask=attn_mask, average_attn_weights=False)
    return alpha[0], output[0]


# --------------------------------------------------------------------------------------
# Independent pure-Python implementation (self-check only)
# --------------------------------------------------------------------------------------

def naive_reference(scenario):
    """Loop-based re-implementation of the math, sharing no code with reference().

    Returns (per-head weights, final output) as nested lists.
    """
    def matmul(a, b):
        return [[sum(a[i][t] * b[t][j] for t in range(len(b))) for j in range(len(b[0]))]
                for i in range(len(a))]

    def rows(words):
        out = []
        for pos, word in enumerate(words):
            row = list(scenario["embeddings"][word])
            if scenario["positional"] == "sinusoidal":
                for c in range(len(row)):
                    angle = pos / 10000.0 ** ((c - c % 2) / len(row))
                    row[c] += math.sin(angle) if c % 2 == 0 else math.cos(angle)
            out.append(row)
        return out

    w = scenario["weights"]
    target = scenario["target"].split()
    source = scenario["source"].split() if scenario["mode"] == "cross" else target
    xq, xk = rows(target), rows(source)
    kind = scenario["compatibility"]
    all_weights, concat = [], [[] for _ in target]
    for h in range(scenario["heads"]):
        q, k, v = matmul(xq, w["W_Q"][h]), matmul(xk, w["W_K"][h]), matmul(xk, w["W_V"][h])
        if kind == "additive":
            hq, hk = matmul(q, w["W_1"][h]), matmul(k, w["W_2"][h])
        if kind == "general":
            qa = matmul(q, w["W_a"][h])
        head_weights = []
        for i in range(len(target)):
            logits = []
            for j in range(len(source)):
                dot = sum(a * b for a, b in zip(q[i], k[j]))
                if kind == "dot":
                    s = dot
                elif kind == "scaled_dot":
                    s = dot / math.sqrt(scenario["d_k"])
                elif kind == "general":
                    s = sum(a * b for a, b in zip(qa[i], k[j]))
                elif kind == "additive":
                    s = sum(va * math.tanh(a + b) for va, a, b in zip(w["v_a"][h], hq[i], hk[j]))
                else:
                    nq = math.sqrt(sum(a * a for a in q[i]))
                    nk = math.sqrt(sum(b * b for b in k[j]))
                    s = dot / (nq * nk) if nq > 0 and nk > 0 else 0.0
                allowed = not (scenario["causal"] and j > i)
                if "mask" in scenario and scenario["mask"][i][j] == 0:
                    allowed = False
                logits.append(s / scenario["temperature"] if allowed else None)
            alive = [s for s in logits if s is not None]
            if not alive:
                row = [0.0] * len(source)
            elif scenario["hard"]:
                best = logits.index(max(alive))
                row = [1.0 if j == best else 0.0 for j in range(len(source))]
            else:
                top = max(alive)
                exps = [math.exp(s - top) if s is not None else 0.0 for s in logits]
                row = [e / sum(exps) for e in exps]
            head_weights.append(row)
            for c in range(scenario["d_v"]):
                concat[i].append(sum(row[j] * v[j][c] for j in range(len(source))))
        all_weights.append(head_weights)
    return all_weights, matmul(concat, w["W_O"])


# --------------------------------------------------------------------------------------
# Comparison of the CLI output with the reference
# --------------------------------------------------------------------------------------

def to_array(matrix):
    """JSON matrix (rows, possibly with nulls) -> float64 numpy array, null -> NaN."""
    return np.array([[np.nan if x is None else x for x in row] for row in matrix],
                    dtype=np.float64).reshape(len(matrix), -1)


class Comparison:
    """Collects problems and the largest differences for one case."""

    def __init__(self):
        self.problems = []
        self.max_diff = {"weights": 0.0, "outputs": 0.0, "intermediates": 0.0}

    def matrix(self, name, got, expected, bucket, relative=False):
        """Compare one matrix; bucket names the statistic and tolerance it counts for.

        relative=True (intermediates such as raw scores, which can be large) scales the
        tolerance by max(1, max |expected|).
        """
        expected = np.asarray(expected, dtype=np.float64)
        try:
            got = to_array(got)
        except (TypeError, ValueError) as exc:
            self.problems.append(f"{name}: not a numeric matrix ({exc})")
            return
        if got.shape != expected.shape:
            self.problems.append(f"{name}: shape {got.shape}, expected {expected.shape}")
            return
        if got.size == 0:
            return
        if not np.isfinite(got).all():
            self.problems.append(f"{name}: contains null/NaN/inf")
            return
        diff = float(np.abs(got - expected).max())
        if relative:
            diff /= max(1.0, float(np.abs(expected).max()))
        self.max_diff[bucket] = max(self.max_diff[bucket], diff)
        if diff > TOLERANCE:
            self.problems.append(f"{name} max|Δ|={diff:.3g}")

    def equal(self, name, got, expected):
        """Exact equality of non-numeric data (tokens, index lists)."""
        if got != expected:
            self.problems.append(f"{name}: got {got!r}, expected {expected!r}")


def compare_masked_scores(comparison, name, got, scaled, masked):
    """masked_scores must be null exactly at masked cells and equal scaled elsewhere."""
    try:
        got = to_array(got)
    except (TypeError, ValueError) as exc:
        comparison.problems.append(f"{name}: not a matrix ({exc})")
        return
    if got.shape != tuple(masked.shape):
        comparison.problems.append(f"{name}: shape {got.shape}, expected {tuple(masked.shape)}")
        return
    nulls = np.isnan(got)
    if not np.array_equal(nulls, masked.numpy()):
        cells = np.argwhere(nulls != masked.numpy())[:3].tolist()
        comparison.problems.append(f"{name}: null pattern differs from the mask at {cells}")
        return
    expected = np.where(masked.numpy(), 0.0, scaled.numpy())
    comparison.matrix(name, np.where(nulls, 0.0, got).tolist(), expected,
                      "intermediates", relative=True)


def compare(scenario, ref, mha, out):
    """Compare the CLI's output JSON with the reference (and MHA results if given)."""
    c = Comparison()
    missing = [key for key in ("target_tokens", "source_tokens", "X_target", "X_source",
                               "heads", "concat", "output") if key not in out]
    if missing:
        c.problems.append(f"missing keys {missing}")
        return c
    c.equal("target_tokens", out["target_tokens"], ref["target_tokens"])
    c.equal("source_tokens", out["source_tokens"], ref["source_tokens"])
    c.matrix("X_target", out["X_target"], ref["X_target"], "intermediates", relative=True)
    c.matrix("X_source", out["X_source"], ref["X_source"], "intermediates", relative=True)
    if not isinstance(out["heads"], list) or len(out["heads"]) != len(ref["heads"]):
        c.problems.append(f"heads: expected a list of {len(ref['heads'])}")
        return c
    for h, (got, exp) in enumerate(zip(out["heads"], ref["heads"])):
        for key in ("Q", "K", "V", "scores", "scaled_scores"):
            c.matrix(f"head {h} {key}", got.get(key), exp[key], "intermediates", relative=True)
        compare_masked_scores(c, f"head {h} masked_scores", got.get("masked_scores"),
                              exp["scaled_scores"], ref["masked"])
        c.matrix(f"head {h} weights", got.get("weights"), exp["weights"], "weights")
        c.matrix(f"head {h} output", got.get("output"), exp["output"], "outputs")
        c.equal(f"head {h} fully_masked_rows", got.get("fully_masked_rows"),
                ref["fully_masked_rows"])
        if mha is not None:
            c.matrix(f"head {h} weights vs MHA", got.get("weights"), mha[0][h], "weights")
    c.matrix("concat", out["concat"], ref["concat"], "outputs")
    c.matrix("output", out["output"], ref["output"], "outputs")
    if mha is not None:
        c.matrix("output vs MHA", out["output"], mha[1], "outputs")
    return c


def check_reference_against_mha(ref, mha):
    """Oracle sanity: the manual float64 reference must match MHA to ~1e-12."""
    weights = torch.stack([head["weights"] for head in ref["heads"]])
    diff = max(float((weights - mha[0]).abs().max()), float((ref["output"] - mha[1]).abs().max()))
    return diff


# --------------------------------------------------------------------------------------
# Drivers
# --------------------------------------------------------------------------------------

def case_rng(seed, index):
    """Independent, reproducible generator for case `index`."""
    return np.random.default_rng([seed, index])


def run_cli(cli, scenario_path, output_path):
    """Run `cli compute`; returns (output dict or None, error message or None)."""
    try:
        proc = subprocess.run([cli, "compute", scenario_path, "-o", output_path],
                              capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f"CLI timed out after {CLI_TIMEOUT_S} s"
    except OSError as exc:
        return None, f"cannot run CLI: {exc}"
    if proc.returncode != 0:
        return None, f"CLI exit {proc.returncode}: {proc.stderr.strip()}"
    try:
        with open(output_path, encoding="utf-8") as handle:
            return json.load(handle), None
    except (OSError, ValueError) as exc:
        return None, f"cannot read CLI output {output_path}: {exc}"


def self_check(cases, seed):
    """Validate the torch reference itself (no CLI needed). Returns the exit code."""
    failures, mha_cases, worst_mha, worst_naive = 0, 0, 0.0, 0.0
    for index in range(cases):
        scenario = random_scenario(case_rng(seed, index))
        ref = reference(scenario)
        problems = []
        for h, head in enumerate(ref["heads"]):
            sums = head["weights"].sum(dim=1)
            expected = torch.ones_like(sums)
            expected[ref["fully_masked_rows"]] = 0.0
            if float((sums - expected).abs().max()) > 1e-12:
                problems.append(f"head {h} weight rows do not sum to 1/0")
            if bool((head["weights"][ref["masked"]] != 0).any()):
                problems.append(f"head {h} masked cells have weight")
        naive_weights, naive_output = naive_reference(scenario)
        diff = max(float((torch.stack([h["weights"] for h in ref["heads"]])
                          - tensor(naive_weights)).abs().max()),
                   float((ref["output"] - tensor(naive_output)).abs().max()))
        if not has_near_tie(scenario, ref):
            worst_naive = max(worst_naive, diff)
            if diff > 1e-9:
                problems.append(f"naive loop implementation differs by {diff:.3g}")
        if mha_compatible(scenario):
            mha_cases += 1
            diff = check_reference_against_mha(ref, mha_reference(scenario, ref))
            worst_mha = max(worst_mha, diff)
            if diff > 1e-9:
                problems.append(f"nn.MultiheadAttention differs by {diff:.3g}")
        if problems:
            failures += 1
            print(f"SELF-CHECK FAIL case {index} ({scenario['mode']}, "
                  f"{scenario['compatibility']}): {'; '.join(problems)}")
    print(f"self-check: {cases} cases, {mha_cases} vs nn.MultiheadAttention "
          f"(max |Δ| {worst_mha:.2g}), vs loop implementation max |Δ| {worst_naive:.2g}")
    print(f"{cases - failures} passed, {failures} failed")
    return 0 if failures == 0 and cases > 0 else 1


def run_case(cli, workdir, seed, index):
    """Run one case. Returns (status, comparison or None, scenario path, message, used_mha).

    status is "pass", "fail" or "skip".
    """
    scenario = random_scenario(case_rng(seed, index))
    scenario_path = os.path.join(workdir, f"case{index:03d}.json")
    output_path = os.path.join(workdir, f"case{index:03d}.out.json")
    ref = reference(scenario)
    if has_near_tie(scenario, ref):
        return "skip", None, scenario_path, "", False
    with open(scenario_path, "w", encoding="utf-8") as handle:
        json.dump(scenario, handle)
    mha = mha_reference(scenario, ref) if mha_compatible(scenario) else None
    out, error = run_cli(cli, scenario_path, output_path)
    if error:
        return "fail", None, scenario_path, error, mha is not None
    comparison = compare(scenario, ref, mha, out)
    if mha is not None and check_reference_against_mha(ref, mha) > 1e-9:
        comparison.problems.append("oracle bug: reference differs from nn.MultiheadAttention")
    if comparison.problems:
        shown = comparison.problems[:MAX_PROBLEMS_SHOWN]
        more = len(comparison.problems) - len(shown)
        message = "; ".join(shown) + (f"; ... {more} more" if more else "")
        return "fail", comparison, scenario_path, message, mha is not None
    for path in (scenario_path, output_path):
        os.remove(path)
    return "pass", comparison, scenario_path, "", mha is not None


def run_oracle(cli, cases, seed, workdir):
    """Run all cases against the CLI, print failures and the summary. Returns exit code."""
    if not (os.path.isfile(cli) and os.access(cli, os.X_OK)):
        print(f"oracle: CLI not found or not executable: {cli}")
        return 1
    cli = os.path.abspath(cli)
    own_dir = workdir is None
    workdir = tempfile.mkdtemp(prefix="attnviz-oracle-") if own_dir else workdir
    os.makedirs(workdir, exist_ok=True)
    counts = {"pass": 0, "fail": 0, "skip": 0}
    mha_cases = 0
    worst = {"weights": 0.0, "outputs": 0.0, "intermediates": 0.0}
    for index in range(cases):
        status, comparison, path, message, used_mha = run_case(cli, workdir, seed, index)
        counts[status] += 1
        mha_cases += used_mha
        if comparison is not None:
            for key, value in comparison.max_diff.items():
                worst[key] = max(worst[key], value)
        if status == "fail":
            print(f"FAIL case {index}: {path}: {message}")
    print(f"oracle: {cases} cases ({mha_cases} also vs nn.MultiheadAttention), "
          f"{counts['skip']} skipped near-ties; max |Δ| weights={worst['weights']:.2g} "
          f"outputs={worst['outputs']:.2g} intermediates(rel)={worst['intermediates']:.2g} "
          f"(tolerance {TOLERANCE_TEXT})")
    if counts["fail"]:
        print(f"oracle: failing scenarios kept in {workdir}")
    elif own_dir:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"{counts['pass']} passed, {counts['fail']} failed")
    return 0 if counts["fail"] == 0 and counts["pass"] > 0 else 1


def parse_args(argv):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cli", help="path to attnviz-cli")
    parser.add_argument("--cases", type=int, default=DEFAULT_CASES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--workdir", help="where to keep scenario files (default: temp dir)")
    parser.add_argument("--self-check", action="store_true",
                        help="validate the torch reference only (no CLI)")
    args = parser.parse_args(argv)
    if not args.self_check and not args.cli:
        parser.error("--cli is required (or use --self-check)")
    return args


def main(argv):
    """Entry point; returns the process exit code."""
    args = parse_args(argv)
    if torch is None:
        print(f"oracle: cannot import torch ({TORCH_IMPORT_ERROR}); install python3-torch "
              f"and run with /usr/bin/python3")
        return 1
    torch.set_num_threads(1)
    if args.self_check:
        return self_check(args.cases, args.seed)
    return run_oracle(args.cli, args.cases, args.seed, args.workdir)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
