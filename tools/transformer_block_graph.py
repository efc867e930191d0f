#!/usr/bin/env python3
"""Writes the pre-norm transformer block of graph/models/transformer_block.hpp as a graph file (graph-format-v2),
for any T, D, number of heads and MLP width, with seeded inputs that are exact in every precision (k/32 for
weights and X, gains 1 + k/64, biases k/64, the probe G k/32). The node list is the one of
examples/graphs/transformer_block.json (T = 3, D = 4, 2 heads, width 8), written by hand earlier; the scale is
1/sqrt(D / heads) to 101 digits.

  tools/transformer_block_graph.py T D HEADS WIDTH [--seed S] > FILE.json

examples/graphs/transformer_block_t4_d8.json is `tools/transformer_block_graph.py 4 8 4 32` (issue 18's
check-timing case: 4 heads of 2, MLP width 4 D). Python's standard library only."""
import argparse
import decimal
import json
import random
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("T", type=int)
    p.add_argument("D", type=int)
    p.add_argument("heads", type=int)
    p.add_argument("width", type=int)
    p.add_argument("--seed", type=int, default=18)
    a = p.parse_args()
    if min(a.T, a.D, a.heads, a.width) < 1 or a.D % a.heads:
        sys.exit(f"transformer_block_graph: T, D, HEADS, WIDTH must be positive and HEADS must divide D "
                 f"(got {a.T} {a.D} {a.heads} {a.width})")
    rng = random.Random(a.seed)
    T, D, H, W, dh = a.T, a.D, a.heads, a.width, a.D // a.heads

    def matrix(rows, cols, numerator, denominator):
        return [[str(numerator(rng) / denominator) for _ in range(cols)] for _ in range(rows)]

    weight = lambda r, c: matrix(r, c, lambda g: g.randint(-16, 16), 32)
    inputs = {
        "X": weight(T, D),
        "g1": matrix(1, D, lambda g: 64 + g.randint(-16, 16), 64),
        "c1": matrix(1, D, lambda g: g.randint(-16, 16), 64),
        "Wq": weight(D, D), "Wk": weight(D, D), "Wv": weight(D, D), "Wo": weight(D, D),
        "g2": matrix(1, D, lambda g: 64 + g.randint(-16, 16), 64),
        "c2": matrix(1, D, lambda g: g.randint(-16, 16), 64),
        "W1": weight(D, W), "b1": matrix(1, W, lambda g: g.randint(-16, 16), 64),
        "W2": weight(W, D), "b2": matrix(1, D, lambda g: g.randint(-16, 16), 64),
        "G": weight(T, D),
    }
    decimal.getcontext().prec = 130  # then rounded once to 101 significant digits
    factor = str(decimal.Context(prec=101).create_decimal(1 / decimal.Decimal(dh).sqrt()))

    nodes = [
        {"name": "LN1", "op": "layer_norm", "args": ["X"]},
        {"name": "LN1 g1", "op": "mul", "args": ["LN1", "g1"]},
        {"name": "N1", "op": "add", "args": ["LN1 g1", "c1"]},
        {"name": "Q", "op": "matmul", "args": ["N1", "Wq"]},
        {"name": "K", "op": "matmul", "args": ["N1", "Wk"]},
        {"name": "V", "op": "matmul", "args": ["N1", "Wv"]},
    ]
    for h in range(1, H + 1):
        s = f"_h{h}"
        for m in "QKV":
            nodes.append({"name": m + s, "op": "slice_cols", "args": [m], "begin": (h - 1) * dh, "count": dh})
        nodes += [
            {"name": "Kt" + s, "op": "transpose", "args": ["K" + s]},
            {"name": "S0" + s, "op": "matmul", "args": ["Q" + s, "Kt" + s]},
            {"name": "S" + s, "op": "scale", "args": ["S0" + s], "factor": factor},
            {"name": "M" + s, "op": "causal_mask", "args": ["S" + s]},
            {"name": "A" + s, "op": "softmax", "args": ["M" + s]},
            {"name": "O" + s, "op": "matmul", "args": ["A" + s, "V" + s]},
        ]
    nodes += [
        {"name": "C", "op": "concat_cols", "args": [f"O_h{h}" for h in range(1, H + 1)]},
        {"name": "Y", "op": "matmul", "args": ["C", "Wo"]},
        {"name": "R1", "op": "add", "args": ["X", "Y"]},
        {"name": "LN2", "op": "layer_norm", "args": ["R1"]},
        {"name": "LN2 g2", "op": "mul", "args": ["LN2", "g2"]},
        {"name": "N2", "op": "add", "args": ["LN2 g2", "c2"]},
        {"name": "N2 W1", "op": "matmul", "args": ["N2", "W1"]},
        {"name": "Z1", "op": "add", "args": ["N2 W1", "b1"]},
        {"name": "H", "op": "gelu", "args": ["Z1"]},
        {"name": "H W2", "op": "matmul", "args": ["H", "W2"]},
        {"name": "F", "op": "add", "args": ["H W2", "b2"]},
        {"name": "Out", "op": "add", "args": ["R1", "F"]},
        {"name": "Out G", "op": "mul", "args": ["Out", "G"]},
        {"name": "J", "op": "sum", "args": ["Out G"]},
    ]
    doc = {
        "description": f"a pre-norm transformer block (graph/models/transformer_block.hpp), written by "
                       f"tools/transformer_block_graph.py {T} {D} {H} {W} --seed {a.seed}: layer_norm with gain g1 and "
                       f"bias c1, {H}-head causal attention with Wo (scores scaled by 1/sqrt {dh}), residual, "
                       f"layer_norm with g2 and c2, a GELU MLP of width {W} with biases b1 and b2, residual; "
                       f"J = sum(Out * G). T = {T}, D = {D}",
        "inputs": inputs,
        "nodes": nodes,
        "output": "J",
    }
    json.dump(doc, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
