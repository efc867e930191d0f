"""The chapter's causal attention on batched multi-head tensors in PyTorch (CPU, double, one thread), as the
chapter writes it: scores = Q @ K.transpose(-2, -1) / sqrt(d), the future masked_fill'ed with -inf, softmax over
the last dim, @ V; forward + autograd.grad of J = sum(O * G) with respect to Q, K and V. Shapes (4, 8, T, 64).
Prints one JSON line per T: the median time of 5 runs of a timed loop. Run by bench/compare."""
import json
import math
import sys

import torch
from torch_timing import median_seconds

torch.set_num_threads(1)
torch.manual_seed(42)


def causal_attention(query, key, value):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    future = torch.arange(key.shape[-2])[None, :] > torch.arange(query.shape[-2])[:, None]
    return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ value


for T in [int(t) for t in sys.argv[1:]]:
    Q, K, V = (torch.randn(4, 8, T, 64, dtype=torch.float64, requires_grad=True) for _ in range(3))
    G = torch.randn(4, 8, T, 64, dtype=torch.float64)
    step = lambda: torch.autograd.grad((causal_attention(Q, K, V) * G).sum(), (Q, K, V))
    print(json.dumps({"T": T, "seconds": median_seconds(step), "torch": torch.__version__}))
