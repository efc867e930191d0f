"""The same attention in PyTorch (CPU, double, one thread): forward + autograd.grad of J with respect to
X, Wq, Wk, Wv, D = d = r = 64. Prints one JSON line per T: the median time of 5 runs of a timed loop.
Run by bench/compare with Debian's python3-torch."""
import json
import sys

import torch
from torch_timing import median_seconds

torch.set_num_threads(1)
torch.manual_seed(42)


def attention(X, Wq, Wk, Wv, G):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    A = torch.softmax(Q @ K.T / Q.shape[1] ** 0.5, dim=1)
    return ((A @ V) * G).sum()


for T in [int(t) for t in sys.argv[1:]]:
    D = 64
    X, Wq, Wk, Wv = (torch.randn(s, dtype=torch.float64, requires_grad=True) for s in [(T, D), (D, D), (D, D), (D, D)])
    G = torch.randn(T, D, dtype=torch.float64)
    seconds = median_seconds(lambda: torch.autograd.grad(attention(X, Wq, Wk, Wv, G), (X, Wq, Wk, Wv)))
    print(json.dumps({"T": T, "seconds": seconds, "torch": torch.__version__}))
