"""Single-head attention with a weighted sum, as a PyTorch function for tools/torch_to_tapegrad.py."""
import torch


def f(X, Wq, Wk, Wv, C):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    A = torch.softmax(Q @ K.t() / 2.0, dim=-1)  # d = 4: 1/sqrt(d) = 1/2
    return (torch.tanh(A @ V) * C).sum()


def inputs():
    g = torch.Generator().manual_seed(1)
    shapes = {"X": (4, 3), "Wq": (3, 4), "Wk": (3, 4), "Wv": (3, 2), "C": (4, 2)}
    return {name: torch.randn(*shape, generator=g) for name, shape in shapes.items()}
