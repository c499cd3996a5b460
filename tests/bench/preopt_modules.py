#!/usr/bin/env python3
"""Before-optimization HLO modules for the compiler reading's measurements
(tests/bench/RESULTS.md#before-optimization-programs-the-compilers-reading).

usage: preopt_modules.py mlp LAYERS    an MLP stack: dot, a sigmoid, dot, a residual add and an
                                       RMS reduce per layer, bf16[8192,1024] activations
       preopt_modules.py llama LAYERS  a Llama-style forward: attention (q, k, v, softmax over
                                       f32[1,32,4096,4096] scores, out projection) and a SwiGLU
                                       MLP per layer, d_model 4096, d_ff 14336

Prints unscheduled HLO without layouts, what XLA reads before its passes.
"""
import sys


def mlp(L):
    B, D, F = 8192, 1024, 4096
    out = ["HloModule synth_mlp", "add_f32 {", "  x = f32[] parameter(0)", "  y = f32[] parameter(1)", "  ROOT s = f32[] add(x, y)", "}", "ENTRY main {"]
    out.append(f"  x0 = bf16[{B},{D}] parameter(0)")
    pi = 1
    prev = "x0"
    for l in range(L):
        out.append(f"  w1_{l} = bf16[{D},{F}] parameter({pi})"); pi += 1
        out.append(f"  w2_{l} = bf16[{F},{D}] parameter({pi})"); pi += 1
        out.append(f"  h_{l} = bf16[{B},{F}] dot({prev}, w1_{l}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}")
        out.append(f"  hf_{l} = f32[{B},{F}] convert(h_{l})")
        out.append(f"  hn_{l} = f32[{B},{F}] negate(hf_{l})")
        out.append(f"  he_{l} = f32[{B},{F}] exponential(hn_{l})")
        out.append(f"  one_{l} = f32[] constant(1)")
        out.append(f"  ob_{l} = f32[{B},{F}] broadcast(one_{l}), dimensions={{}}")
        out.append(f"  hd_{l} = f32[{B},{F}] add(he_{l}, ob_{l})")
        out.append(f"  hs_{l} = f32[{B},{F}] divide(hf_{l}, hd_{l})")
        out.append(f"  hb_{l} = bf16[{B},{F}] convert(hs_{l})")
        out.append(f"  o_{l} = bf16[{B},{D}] dot(hb_{l}, w2_{l}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}")
        out.append(f"  r_{l} = bf16[{B},{D}] add(o_{l}, {prev})")
        out.append(f"  rf_{l} = f32[{B},{D}] convert(r_{l})")
        out.append(f"  sq_{l} = f32[{B},{D}] multiply(rf_{l}, rf_{l})")
        out.append(f"  z_{l} = f32[] constant(0)")
        out.append(f"  ss_{l} = f32[{B}] reduce(sq_{l}, z_{l}), dimensions={{1}}, to_apply=add_f32")
        out.append(f"  sb_{l} = f32[{B},{D}] broadcast(ss_{l}), dimensions={{0}}")
        out.append(f"  nr_{l} = f32[{B},{D}] multiply(rf_{l}, sb_{l})")
        out.append(f"  x{l+1} = bf16[{B},{D}] convert(nr_{l})")
        prev = f"x{l+1}"
    out.append(f"  ROOT out = bf16[{B},{D}] copy({prev})")
    out.append("}")
    return "\n".join(out)


def llama(L):
    B,S,H,Dh=1,4096,32,128; D=H*Dh; F=14336
    o=["HloModule llama_like_forward","max_f32 {","  x = f32[] parameter(0)","  y = f32[] parameter(1)","  ROOT m = f32[] maximum(x, y)","}","add_f32 {","  x = f32[] parameter(0)","  y = f32[] parameter(1)","  ROOT s = f32[] add(x, y)","}","ENTRY main {"]
    o.append(f"  x0 = bf16[{B},{S},{D}] parameter(0)"); pi=1; prev="x0"
    for l in range(L):
        for w,shape in [("wq",f"{D},{H},{Dh}"),("wk",f"{D},{H},{Dh}"),("wv",f"{D},{H},{Dh}"),("wo",f"{H},{Dh},{D}"),("w1",f"{D},{F}"),("w3",f"{D},{F}"),("w2",f"{F},{D}")]:
            o.append(f"  {w}_{l} = bf16[{shape}] parameter({pi})"); pi+=1
        o.append(f"  q_{l} = bf16[{B},{S},{H},{Dh}] dot({prev}, wq_{l}), lhs_contracting_dims={{2}}, rhs_contracting_dims={{0}}")
        o.append(f"  k_{l} = bf16[{B},{S},{H},{Dh}] dot({prev}, wk_{l}), lhs_contracting_dims={{2}}, rhs_contracting_dims={{0}}")
        o.append(f"  v_{l} = bf16[{B},{S},{H},{Dh}] dot({prev}, wv_{l}), lhs_contracting_dims={{2}}, rhs_contracting_dims={{0}}")
        o.append(f"  s_{l} = f32[{B},{H},{S},{S}] dot(q_{l}, k_{l}), lhs_batch_dims={{0,2}}, lhs_contracting_dims={{3}}, rhs_batch_dims={{0,2}}, rhs_contracting_dims={{3}}")
        o.append(f"  ninf_{l} = f32[] constant(-inf)")
        o.append(f"  m_{l} = f32[{B},{H},{S}] reduce(s_{l}, ninf_{l}), dimensions={{3}}, to_apply=max_f32")
        o.append(f"  mb_{l} = f32[{B},{H},{S},{S}] broadcast(m_{l}), dimensions={{0,1,2}}")
        o.append(f"  d_{l} = f32[{B},{H},{S},{S}] subtract(s_{l}, mb_{l})")
        o.append(f"  e_{l} = f32[{B},{H},{S},{S}] exponential(d_{l})")
        o.append(f"  z_{l} = f32[] constant(0)")
        o.append(f"  sum_{l} = f32[{B},{H},{S}] reduce(e_{l}, z_{l}), dimensions={{3}}, to_apply=add_f32")
        o.append(f"  sb_{l} = f32[{B},{H},{S},{S}] broadcast(sum_{l}), dimensions={{0,1,2}}")
        o.append(f"  p_{l} = f32[{B},{H},{S},{S}] divide(e_{l}, sb_{l})")
        o.append(f"  pb_{l} = bf16[{B},{H},{S},{S}] convert(p_{l})")
        o.append(f"  a_{l} = bf16[{B},{H},{S},{Dh}] dot(pb_{l}, v_{l}), lhs_batch_dims={{0,1}}, lhs_contracting_dims={{3}}, rhs_batch_dims={{0,2}}, rhs_contracting_dims={{1}}")
        o.append(f"  ao_{l} = bf16[{B},{S},{D}] dot(a_{l}, wo_{l}), lhs_contracting_dims={{1,3}}, rhs_contracting_dims={{0,1}}")
        o.append(f"  h_{l} = bf16[{B},{S},{D}] add({prev}, ao_{l})")
        o.append(f"  g_{l} = bf16[{B},{S},{F}] dot(h_{l}, w1_{l}), lhs_contracting_dims={{2}}, rhs_contracting_dims={{0}}")
        o.append(f"  u_{l} = bf16[{B},{S},{F}] dot(h_{l}, w3_{l}), lhs_contracting_dims={{2}}, rhs_contracting_dims={{0}}")
        o.append(f"  gs_{l} = bf16[{B},{S},{F}] logistic(g_{l})")
        o.append(f"  gg_{l} = bf16[{B},{S},{F}] multiply(g_{l}, gs_{l})")
        o.append(f"  gu_{l} = bf16[{B},{S},{F}] multiply(gg_{l}, u_{l})")
        o.append(f"  f_{l} = bf16[{B},{S},{D}] dot(gu_{l}, w2_{l}), lhs_contracting_dims={{2}}, rhs_contracting_dims={{0}}")
        o.append(f"  x{l+1} = bf16[{B},{S},{D}] add(h_{l}, f_{l})")
        prev=f"x{l+1}"
    o.append(f"  ROOT out = bf16[{B},{S},{D}] copy({prev})"); o.append("}")
    return "\n".join(o)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("mlp", "llama"):
        sys.exit(__doc__)
    print({"mlp": mlp, "llama": llama}[sys.argv[1]](int(sys.argv[2])))
