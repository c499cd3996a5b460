#!/usr/bin/env python3
"""Writes the example model descriptions in this directory (run from anywhere).

tiny-lm-train.json: a 2-layer decoder-only transformer training step (batch 8, seq 512,
d_model 512, 8 heads, ffn 2048, vocab 32000): f32 master params, bf16 activations, f32
grads and Adam moments, with the program order as ops so lifetimes are derived.

sharded-lm.json: the same kind of model's state on a data=4 x model=2 mesh, including an
uneven shard (vocab 32001 over 2), a minor dim sharded below 128 lanes (256 / 4 = 64,
server/planner/SOURCES.md#per-device-layout) and a replicated parameter.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
B, S, D, H, F, V, L = 8, 512, 512, 8, 2048, 32000, 2


def tiny_lm():
    tensors, ops = [], []

    def t(name, shape, dtype, kind, **kw):
        tensors.append(dict(name=name, shape=shape, dtype=dtype, kind=kind, **kw))

    def op(name, inputs, outputs):
        ops.append(dict(name=name, inputs=inputs, outputs=outputs))

    t("tokens", [B, S], "s32", "input", donated=True)
    t("targets", [B, S], "s32", "input", donated=True)
    params = {"embed": [V, D], "ln_f": [D]}
    for l in range(L):
        params.update({f"l{l}.ln1": [D], f"l{l}.wqkv": [D, 3 * D], f"l{l}.wo": [D, D],
                       f"l{l}.ln2": [D], f"l{l}.w1": [D, F], f"l{l}.w2": [F, D]})
    for p, shape in params.items():
        t(p, shape, "f32", "param", tags=[p.split(".")[0]])
    for p, shape in params.items():
        t(p + ".adam_m", shape, "f32", "optimizer", tags=[p.split(".")[0]])
        t(p + ".adam_v", shape, "f32", "optimizer", tags=[p.split(".")[0]])
    # forward
    t("x0", [B, S, D], "bf16", "activation")
    op("embed", ["tokens", "embed"], ["x0"])
    x = "x0"
    for l in range(L):
        g = [f"layer{l}"]
        # per-head layout [B, H, S, 64]: head_dim 64 is half a 128-lane tile (2x padding)
        for n in "qkv":
            t(f"l{l}.{n}", [B, H, S, D // H], "bf16", "activation", tags=g)
        t(f"l{l}.scores", [B, H, S, S], "f32", "activation", tags=g)
        t(f"l{l}.probs", [B, H, S, S], "bf16", "activation", tags=g)
        t(f"l{l}.attn", [B, S, D], "bf16", "activation", tags=g)
        t(f"l{l}.h", [B, S, D], "bf16", "activation", tags=g)
        t(f"l{l}.ff1", [B, S, F], "bf16", "activation", tags=g)
        t(f"l{l}.out", [B, S, D], "bf16", "activation", tags=g)
        op(f"l{l}.qkv_proj", [x, f"l{l}.ln1", f"l{l}.wqkv"], [f"l{l}.q", f"l{l}.k", f"l{l}.v"])
        op(f"l{l}.qk", [f"l{l}.q", f"l{l}.k"], [f"l{l}.scores"])
        op(f"l{l}.softmax", [f"l{l}.scores"], [f"l{l}.probs"])
        op(f"l{l}.pv", [f"l{l}.probs", f"l{l}.v"], [f"l{l}.attn"])
        op(f"l{l}.o_proj", [f"l{l}.attn", f"l{l}.wo", x], [f"l{l}.h"])
        op(f"l{l}.ffn_in", [f"l{l}.h", f"l{l}.ln2", f"l{l}.w1"], [f"l{l}.ff1"])
        op(f"l{l}.ffn_out", [f"l{l}.ff1", f"l{l}.w2", f"l{l}.h"], [f"l{l}.out"])
        x = f"l{l}.out"
    t("logits", [B, S, V], "f32", "activation")
    t("loss", [], "f32", "output")
    op("unembed", [x, "ln_f", "embed"], ["logits"])
    op("xent", ["logits", "targets"], ["loss"])
    # backward: activation grads, then weight grads
    t("d_logits", [B, S, V], "bf16", "temp")
    op("xent_grad", ["logits", "targets", "loss"], ["d_logits"])
    t("grad.embed", [V, D], "f32", "grad")
    t("grad.ln_f", [D], "f32", "grad")
    t(f"d_x{L}", [B, S, D], "bf16", "temp")
    op("unembed_grad", ["d_logits", x, "embed"], ["grad.embed", "grad.ln_f", f"d_x{L}"])
    for l in reversed(range(L)):
        g = [f"layer{l}"]
        for p in ("wqkv", "wo", "w1", "w2", "ln1", "ln2"):
            t(f"grad.l{l}.{p}", params[f"l{l}.{p}"], "f32", "grad", tags=g)
        t(f"l{l}.d_ff1", [B, S, F], "bf16", "temp", tags=g)
        t(f"l{l}.d_h", [B, S, D], "bf16", "temp", tags=g)
        t(f"l{l}.d_probs", [B, H, S, S], "bf16", "temp", tags=g)
        t(f"l{l}.d_qkv", [B, S, 3 * D], "bf16", "temp", tags=g)
        t(f"d_x{l}", [B, S, D], "bf16", "temp", tags=g)
        op(f"l{l}.ffn_out_grad", [f"d_x{l + 1}", f"l{l}.ff1", f"l{l}.w2"],
           [f"l{l}.d_ff1", f"grad.l{l}.w2"])
        op(f"l{l}.ffn_in_grad", [f"l{l}.d_ff1", f"l{l}.h", f"l{l}.w1", f"d_x{l + 1}"],
           [f"l{l}.d_h", f"grad.l{l}.w1", f"grad.l{l}.ln2"])
        op(f"l{l}.o_proj_grad", [f"l{l}.d_h", f"l{l}.attn", f"l{l}.wo", f"l{l}.probs"],
           [f"l{l}.d_probs", f"grad.l{l}.wo"])
        op(f"l{l}.attn_grad", [f"l{l}.d_probs", f"l{l}.q", f"l{l}.k", f"l{l}.v", f"l{l}.scores"],
           [f"l{l}.d_qkv"])
        op(f"l{l}.qkv_proj_grad", [f"l{l}.d_qkv", f"l{l}.wqkv", f"l{l}.d_h"],
           [f"d_x{l}", f"grad.l{l}.wqkv", f"grad.l{l}.ln1"])
    op("embed_grad", ["d_x0", "tokens"], [])
    # Adam: reads grads and moments, updates params and moments in place
    for p in params:
        gname = "grad." + p
        op("adam." + p, [gname, p + ".adam_m", p + ".adam_v", p],
           [p, p + ".adam_m", p + ".adam_v"])
    return dict(name="tiny-lm-train", chip="v5e", tensors=tensors, ops=ops,
                options=dict(strategies="best", time_limit=1))


def sharded():
    mesh = {"data": 4, "model": 2}
    tensors = [
        dict(name="embed", shape=[32001, 1024], dtype="bf16", kind="param",
             sharding=["model", None]),
        dict(name="embed.adam_m", shape=[32001, 1024], dtype="f32", kind="optimizer",
             sharding=["model", "data"]),
        dict(name="embed.adam_v", shape=[32001, 1024], dtype="f32", kind="optimizer",
             sharding=["model", "data"]),
        dict(name="w_in", shape=[1024, 4096], dtype="bf16", kind="param",
             sharding=["data", "model"]),
        dict(name="w_out", shape=[4096, 1024], dtype="bf16", kind="param",
             sharding=["model", "data"]),
        dict(name="head_proj", shape=[1024, 256], dtype="f32", kind="param",
             sharding=[None, ["data"]]),
        dict(name="norm_scale", shape=[1024], dtype="f32", kind="param"),
        dict(name="x", shape=[32, 2048, 1024], dtype="bf16", kind="activation",
             sharding=["data", None, None], live=[0, 3]),
        dict(name="h", shape=[32, 2048, 4096], dtype="bf16", kind="activation",
             sharding=["data", None, "model"], live=[1, 3]),
        dict(name="y", shape=[32, 2048, 1024], dtype="bf16", kind="output",
             sharding=["data", None, None], live=[2, 4]),
    ]
    return dict(name="sharded-ffn", chip="v5p", mesh=mesh, tensors=tensors)


for fname, model in (("tiny-lm-train.json", tiny_lm()), ("sharded-lm.json", sharded())):
    with open(os.path.join(HERE, fname), "w") as f:
        json.dump(model, f, indent=1)
        f.write("\n")
