"""The pre-norm transformer block of graph/models/transformer_block.hpp in PyTorch (CPU, double, one thread),
written as a PyTorch user writes it (heads as a batch dimension): forward, then autograd.grad of
J = sum(Out * G) with respect to X and all twelve parameters. D = 256, 4 heads of 64, MLP width 4 D.
  N1 = layer_norm(X) g1 + c1;  Y = causal 4-head attention(N1; Wq, Wk, Wv) Wo;  R1 = X + Y
  N2 = layer_norm(R1) g2 + c2;  F = gelu(N2 W1 + b1) W2 + b2 (gelu's erf form);  Out = R1 + F
Prints one JSON line per T given on the command line: the median time of 5 runs of a timed loop."""
import json
import sys

import torch
import torch.nn.functional as F
from torch_timing import median_seconds

torch.set_num_threads(1)
torch.manual_seed(42)
D, HEADS = 256, 4


def block(X, g1, c1, Wq, Wk, Wv, Wo, g2, c2, W1, b1, W2, b2, mask):
    T, dh = X.shape[0], D // HEADS
    n1 = F.layer_norm(X, (D,), eps=1e-5) * g1 + c1
    q, k, v = ((n1 @ W).view(T, HEADS, dh).transpose(0, 1) for W in (Wq, Wk, Wv))  # HEADS x T x dh
    s = (q @ k.transpose(1, 2)) / dh**0.5
    a = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
    y = (a @ v).transpose(0, 1).reshape(T, D) @ Wo
    r1 = X + y
    n2 = F.layer_norm(r1, (D,), eps=1e-5) * g2 + c2
    return r1 + F.gelu(n2 @ W1 + b1) @ W2 + b2


for T in [int(t) for t in sys.argv[1:]]:
    shapes = [(T, D), (1, D), (1, D), (D, D), (D, D), (D, D), (D, D), (1, D), (1, D), (D, 4 * D), (1, 4 * D),
              (4 * D, D), (1, D)]
    inputs = [(torch.randn(s, dtype=torch.float64) / (s[0] ** 0.5 if s[0] > 1 and i > 0 else 1)).requires_grad_()
              for i, s in enumerate(shapes)]
    G = torch.randn(T, D, dtype=torch.float64)
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)  # key j > query i is masked

    def step():
        torch.autograd.grad((block(*inputs, mask) * G).sum(), inputs)

    print(json.dumps({"T": T, "D": D, "seconds": median_seconds(step), "torch": torch.__version__}))
