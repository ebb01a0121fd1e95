#!/usr/bin/env python3
"""Training throughput of one GPU, per model and precision, measured with PyTorch.

    python3 scripts/gpu_throughput.py [--out FILE.json] [--steps N] [--warmup N]
                                      [--models resnet50,resnet101,...] [--quick]

One training step is forward, loss, backward and an SGD update on synthetic data (the
communication-free compute that hvdsim's workloads time). Precisions:

  fp32      float32 with TF32 disabled (what tf_cnn_benchmarks calls fp32 on Pascal/Volta)
  tf32      float32 storage, TF32 tensor-core matmuls and convolutions (Ampere and later)
  amp_fp16  torch.autocast float16 with a GradScaler
  amp_bf16  torch.autocast bfloat16

CNNs come from torchvision (weights random), input 224x224 (299 for Inception V3), channels-last
under AMP; BERT-Large is transformers' BertForPreTraining built from its published
configuration (24 layers, hidden 1024, 16 heads), masked-LM plus next-sentence loss, at the
sequence length asked for. The JSON holds one row per (model, precision, batch): samples/s,
ms/step, the batch, the GPU's name, torch/CUDA versions and the command. Time is taken with
CUDA events around `steps` steps after `warmup` steps; each row is the median of 3 rounds.
"""
import argparse
import json
import statistics
import sys
import time

import torch

CNN_BATCH = {"fp32": 64, "tf32": 64, "amp_fp16": 256, "amp_bf16": 256}
BERT_BATCH = {128: 64, 512: 16}


def cnn(name):
    import torchvision.models as tvm

    if name == "inception_v3":
        return tvm.inception_v3(weights=None, aux_logits=False, init_weights=False), 299
    return getattr(tvm, name)(weights=None), 224


def bert_large():
    from transformers import BertConfig, BertForPreTraining

    cfg = BertConfig(vocab_size=30522, hidden_size=1024, num_hidden_layers=24,
                     num_attention_heads=16, intermediate_size=4096, max_position_embeddings=512)
    return BertForPreTraining(cfg)


def set_precision(precision):
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


def time_steps(step, warmup, steps, rounds=3):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    per_step = []
    for _ in range(rounds):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            step()
        stop.record()
        torch.cuda.synchronize()
        per_step.append(start.elapsed_time(stop) / 1e3 / steps)
    return statistics.median(per_step), per_step


def make_step(model, inputs, loss_fn, precision):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    amp = precision.startswith("amp_")
    dtype = torch.float16 if precision == "amp_fp16" else torch.bfloat16
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "amp_fp16")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype, enabled=amp):
            loss = loss_fn(model, inputs)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return step


def run_cnn(name, precision, batch, warmup, steps):
    model, size = cnn(name)
    model = model.cuda().train()
    x = torch.randn(batch, 3, size, size, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    if precision.startswith("amp_"):
        model = model.to(memory_format=torch.channels_last)
        x = x.to(memory_format=torch.channels_last)
    ce = torch.nn.CrossEntropyLoss()
    return time_steps(make_step(model, x, lambda m, i: ce(m(i), y), precision), warmup, steps)


def run_bert(seq, precision, batch, warmup, steps):
    model = bert_large().cuda().train()
    ids = torch.randint(0, 30522, (batch, seq), device="cuda")
    labels = ids.clone()
    nsp = torch.randint(0, 2, (batch,), device="cuda")

    def loss(m, i):
        return m(input_ids=i, labels=labels, next_sentence_label=nsp).loss

    return time_steps(make_step(model, ids, loss, precision), warmup, steps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--models", default="resnet50,resnet101,vgg16,inception_v3,bert-large-128,bert-large-512")
    ap.add_argument("--precisions", default="fp32,tf32,amp_fp16,amp_bf16")
    ap.add_argument("--quick", action="store_true", help="2 warm-up and 3 timed steps (a smoke run)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("gpu_throughput: no CUDA device", file=sys.stderr)
        return 2
    if a.quick:
        a.warmup, a.steps = 2, 3
    torch.backends.cudnn.benchmark = True
    rows = []
    t0 = time.time()
    for model in a.models.split(","):
        for precision in a.precisions.split(","):
            set_precision(precision)
            if model.startswith("bert-large"):
                seq = int(model.rsplit("-", 1)[1])
                if precision in ("fp32", "tf32") and seq == 512:
                    continue
                batch = BERT_BATCH[seq]
                fn = lambda: run_bert(seq, precision, batch, a.warmup, a.steps)  # noqa: E731
            else:
                batch = CNN_BATCH[precision]
                fn = lambda: run_cnn(model, precision, batch, a.warmup, a.steps)  # noqa: E731
            try:
                median, rounds = fn()
            except Exception as e:  # one failing case (say out of memory) does not stop the rest
                print(f"{model:16s} {precision:9s} FAILED: {type(e).__name__}: {str(e)[:200]}", flush=True)
                rows.append({"model": model, "precision": precision, "batch": batch, "error": str(e)[:300]})
                torch.cuda.empty_cache()
                continue
            row = {"model": model, "precision": precision, "batch": batch,
                   "samples_per_s": round(batch / median, 1), "ms_per_step": round(median * 1e3, 3),
                   "rounds_ms": [round(r * 1e3, 3) for r in rounds]}
            rows.append(row)
            print(f"{model:16s} {precision:9s} batch {batch:4d}  {row['samples_per_s']:9.1f} samples/s "
                  f"{row['ms_per_step']:9.2f} ms/step", flush=True)
            torch.cuda.empty_cache()
            write(a.out, rows, a, t0)
    doc = write(a.out, rows, a, t0)
    print(f"gpu_throughput: {len(rows)} rows in {doc['wall_s']} s on {doc['gpu']}")
    return 0


def write(path, rows, a, t0):
    """The JSON so far (rewritten after every row, so a run cut short keeps what it measured)."""
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
           "command": " ".join(["python3"] + sys.argv), "warmup": a.warmup, "steps": a.steps,
           "rounds": 3, "wall_s": round(time.time() - t0, 1), "rows": rows}
    if path:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
    return doc


if __name__ == "__main__":
    sys.exit(main())
