"""What the training scripts share around their model: the log (every line timed, printed and
written to FOLDER/train.log; the first lines say the command, the options, the machine and the
BLAS in use), the loop of optimizer steps, and SHA256SUMS of the files a script wrote."""

import argparse
import hashlib
import json
import os
import platform
import sys
import time

import blas_setup  # models/train/blas_setup.py, beside this script


def parser(description, *, steps, batch, d_model, layers, heads, vocab_size, lr, warmup,
           eval_every, context=128, matmuls="float32"):
    """The options every training script takes, with the script's defaults (the model it makes)."""
    options = argparse.ArgumentParser(description=description)
    options.add_argument("--out", required=True, help="the model folder to write")
    options.add_argument("--seed", type=int, default=1234)
    options.add_argument("--steps", type=int, default=steps)
    options.add_argument("--batch", type=int, default=batch)
    options.add_argument("--context", type=int, default=context)
    options.add_argument("--d-model", type=int, default=d_model)
    options.add_argument("--layers", type=int, default=layers)
    options.add_argument("--heads", type=int, default=heads)
    options.add_argument("--vocab-size", type=int, default=vocab_size)
    options.add_argument("--lr", type=float, default=lr)
    options.add_argument("--warmup", type=int, default=warmup)
    options.add_argument("--eval-every", type=int, default=eval_every)
    options.add_argument("--threads", type=int, default=1,
                         help="threads for torch and OpenBLAS (read before they load)")
    options.add_argument("--matmuls", choices=("float32", "bfloat16"), default="float32",
                         help="the training steps' matrix products: bfloat16 under torch.autocast "
                         "(4x faster on a CPU with AMX) or float32; evaluation is float32")
    options.add_argument("--checkpoint-every", type=int, default=1000,
                         help="write OUT/checkpoint.pt every this many steps (the weights, the "
                         "optimizer's state, the random generators, the data's place), so that "
                         "--resume can finish a run a session did not")
    options.add_argument("--resume", action="store_true",
                         help="go on from OUT/checkpoint.pt, bit for bit as if never stopped "
                         "(the same options and --threads; the log is appended to)")
    options.add_argument("--openblas-coretype", default=None,
                         help="OpenBLAS kernel to use (e.g. SkylakeX); default: the fastest "
                         "correct one measured at start")
    options.set_defaults(matmuls=matmuls)
    return options


def step_precision(torch, args):
    """The context a training step's forward pass runs in: torch.autocast to bfloat16 when
    --matmuls bfloat16 (the products, and the operations that read them, in bfloat16; weights,
    gradients and the optimizer's state float32), else nothing."""
    return torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.matmuls == "bfloat16")


def start(folder, args, torch, numpy):
    """Opens FOLDER/train.log (the folder made if need be), sets torch's threads to args.threads
    and logs the run's first lines. Returns log(message)."""
    os.makedirs(folder, exist_ok=True)
    if args.resume and not os.path.exists(os.path.join(folder, CHECKPOINT)):
        sys.exit(f"--resume: {os.path.join(folder, CHECKPOINT)} does not exist")
    log_file = open(os.path.join(folder, "train.log"), "a" if args.resume else "w",
                    encoding="utf-8")
    wall_start = time.time()

    def log(message):
        line = f"[{time.time() - wall_start:7.1f}s] {message}"
        print(line, flush=True)
        log_file.write(line + "\n")
        log_file.flush()

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    if args.resume:
        log("---- resumed: the lines before this one are the run's until its last checkpoint "
            "(and maybe a few after it, computed again below)")
    log("command: " + " ".join([sys.executable] + sys.argv))
    log(f"args: {json.dumps(vars(args), sort_keys=True)}")
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.processor())
    log(f"machine: {platform.machine()} {cpu}, {os.cpu_count()} cores; python "
        f"{platform.python_version()}, torch {torch.__version__}, numpy {numpy.__version__}")
    blas_setup.log_setup(log, torch)
    log.close = log_file.close
    log.wall_start = wall_start
    return log


def sha256_of(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_sha256sums(folder, names):
    with open(os.path.join(folder, "SHA256SUMS"), "w") as f:
        for name in names:
            f.write(f"{sha256_of(os.path.join(folder, name))}  {name}\n")


CHECKPOINT = "checkpoint.pt"


class Checkpoint:
    """A run's state every `every` steps in FOLDER/checkpoint.pt (written to a temporary file,
    then renamed): the model's weights, the optimizer's state, torch's random generator, and the
    attributes of each object of `objects` ({name: object}: the data's batcher, with its numpy
    generator and its place in the epoch). Restored, the steps after it are the ones the run
    would have made."""

    def __init__(self, torch, folder, every, objects):
        self.torch, self.path, self.every, self.objects = torch, os.path.join(folder, CHECKPOINT), \
            every, objects

    def save(self, model, optimizer, step):
        state = {"step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                 "torch_rng": self.torch.get_rng_state(),
                 "objects": {name: dict(vars(o)) for name, o in self.objects.items()}}
        temporary = self.path + ".partial"
        self.torch.save(state, temporary)
        os.replace(temporary, self.path)

    def restore(self, model, optimizer):
        """-> the step the checkpoint was written after."""
        state = self.torch.load(self.path)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        self.torch.set_rng_state(state["torch_rng"])
        for name, attributes in state["objects"].items():
            vars(self.objects[name]).update(attributes)
        return state["step"]

    def remove(self):
        if os.path.exists(self.path):
            os.remove(self.path)


def train_steps(model, optimizer, learning_rate, steps, next_loss, evaluate, log, report_every,
                eval_every, load_average, clip, checkpoint=None, resume=False):
    """`steps` optimizer steps: the learning rate of the step, the loss of the next batch
    (next_loss()), gradients clipped to norm 1.0 by clip (torch.nn.utils.clip_grad_norm_); the
    mean loss logged every `report_every` steps, evaluate(step) every `eval_every` (not at the
    last step: the caller measures it). With a Checkpoint, its state saved every checkpoint.every
    steps and, when `resume`, restored first; the checkpoint is removed when the steps are done."""
    first = 1
    if checkpoint is not None and resume:
        first = checkpoint.restore(model, optimizer) + 1
        log(f"resumed after step {first - 1} from {checkpoint.path}")
    train_start, running = time.time(), 0.0
    for step in range(first, steps + 1):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step - 1)
        loss = next_loss()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        clip(model.parameters(), 1.0)
        optimizer.step()
        running += loss.item()
        if step % report_every == 0:
            elapsed = time.time() - train_start
            log(f"step {step}: train loss {running / report_every:.4f} (mean of the last "
                f"{report_every} steps), lr {learning_rate(step - 1):.2e}, "
                f"{1000 * elapsed / (step - first + 1):.0f} ms a step; load average "
                f"{load_average()}")
            running = 0.0
        if step % eval_every == 0 and step != steps:
            evaluate(step)
        if checkpoint is not None and step % checkpoint.every == 0 and step != steps:
            checkpoint.save(model, optimizer, step)
    train_seconds = time.time() - train_start
    done = steps - first + 1
    log(f"training done: {done} steps in {train_seconds:.0f} s "
        f"({1000 * train_seconds / max(done, 1):.0f} ms a step)")
    if checkpoint is not None:
        checkpoint.remove()


def read_safetensors(torch, path):
    """{name: float32 tensor} of a safetensors file of F32 tensors (what write_safetensors of
    train_gpt2.py writes): u64 little-endian header length, the JSON header, the data."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    header_length = int.from_bytes(blob[:8], "little")
    if header_length > len(blob) - 8:
        raise ValueError(f"{path}: its header length {header_length} runs past the file's end")
    header = json.loads(blob[8:8 + header_length])
    data = blob[8 + header_length:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if entry["dtype"] != "F32":
            raise ValueError(f"{path}: {name} is {entry['dtype']}, not F32")
        begin, end = entry["data_offsets"]
        count = 1
        for size in entry["shape"]:
            count *= size
        if not 0 <= begin <= end <= len(data) or end - begin != 4 * count:
            raise ValueError(f"{path}: {name}'s offsets do not fit its shape or the file")
        tensors[name] = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32) \
            .reshape(entry["shape"]).clone()
    return tensors


def linear_parameters(torch, params, name, n_out, n_in):
    """A linear layer's parameters as torch's Linear keeps them, into `params` (a ParameterDict):
    NAME/weight (n_out, n_in), N(0, 0.02²) as BERT and Marian start them, and NAME/bias (n_out),
    zeros."""
    params[f"{name}/weight"] = torch.nn.Parameter(torch.randn(n_out, n_in) * 0.02)
    params[f"{name}/bias"] = torch.nn.Parameter(torch.zeros(n_out))


def norm_parameters(torch, params, name, size):
    """A LayerNorm's parameters into `params`: NAME/weight (size) ones, NAME/bias zeros."""
    params[f"{name}/weight"] = torch.nn.Parameter(torch.ones(size))
    params[f"{name}/bias"] = torch.nn.Parameter(torch.zeros(size))


def adamw(torch, params, lr, weight_decay, betas, eps):
    """AdamW with weight decay on the matrices only (embeddings included), none on biases and
    norms. `params`: a ParameterDict."""
    decay = [t for t in params.values() if t.dim() == 2]
    no_decay = [t for t in params.values() if t.dim() != 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr, betas=betas, eps=eps)
