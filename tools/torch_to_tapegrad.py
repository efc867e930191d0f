#!/usr/bin/python3
"""A PyTorch function as a tapegrad graph file, with PyTorch's own gradients in float32 and float64.

    tools/torch_to_tapegrad.py FUNCTION.py OUT

FUNCTION.py defines `f(**inputs)`, a function of torch tensors (rank 0 to 8) made of ops graph files have,
returning one entry, and `inputs()`, a dict of input name -> tensor. The tool traces f with torch.fx, writes
the graph as OUT.json (graph format v3, the inputs as exact decimals), and runs f forward and backward in
PyTorch in float64 and in float32, writing the gradients as OUT.float64.json and OUT.float32.json in the shape
`tapegrad check FILE --gradients` reads ({"gradients": {input name: tensor}}, nested to each input's rank, each
number the exact decimal of PyTorch's value).
The inputs are rounded to float32 first, so both runs and the graph file hold the same numbers and the float32
gradients' error is PyTorch's arithmetic alone. Then

    build/tapegrad check OUT.json --gradients OUT.float32.json --claimed-precision float

measures them against a 50-digit reference. An op or argument the format has no counterpart for is an error
naming the node. Needs Debian's python3-torch (PyTorch 1.13, torch.fx).
"""

import decimal
import importlib.util
import json
import operator
import sys

import inspect

import torch
import torch.fx
import torch.fx.passes.shape_prop
import torch.nn.functional as F


class Unsupported(Exception):
    pass


def exact(x):
    """The exact decimal value of a float (a double's, or a float32's widened exactly); "nan", "inf", "-inf" as
    the format spells them."""
    d = decimal.Decimal(float(x))
    if d.is_nan():
        return "nan"
    if d.is_infinite():
        return "inf" if d > 0 else "-inf"
    return str(d)


def tensor(t):
    """t as graph files write it: nested lists to its rank, a rank-0 tensor a bare decimal string."""
    t = t.detach()
    if t.dim() > 8:
        raise Unsupported(f"a value of {t.dim()} dimensions; graph files hold ranks 0 to 8")
    if t.dim() == 0:
        return exact(t.item())

    def nest(v):
        return [nest(x) for x in v] if isinstance(v, list) else exact(v)
    return nest(t.tolist())


# Unary functions and methods: torch's name -> the graph file's op.
UNARY = {
    torch.exp: "exp", torch.log: "log", torch.tanh: "tanh", torch.sigmoid: "sigmoid", torch.relu: "relu",
    F.relu: "relu", torch.sqrt: "sqrt", torch.abs: "abs", torch.square: "square", torch.neg: "neg",
    operator.neg: "neg", torch.t: "transpose", F.softplus: "softplus", F.gelu: "gelu", F.silu: "silu",
}
UNARY_METHODS = {"exp": "exp", "log": "log", "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu", "sqrt": "sqrt",
                 "abs": "abs", "square": "square", "neg": "neg", "t": "transpose", "detach": "detach"}
BINARY = {torch.matmul: "matmul", torch.mm: "matmul", operator.matmul: "matmul", torch.add: "add",
          operator.add: "add", torch.sub: "sub", operator.sub: "sub", torch.mul: "mul", operator.mul: "mul",
          torch.div: "div", operator.truediv: "div"}
BINARY_METHODS = {"matmul": "matmul", "mm": "matmul", "add": "add", "sub": "sub", "mul": "mul", "div": "div"}


# The keyword arguments each kind of call may carry, at the values graph files agree with; any other argument
# (alpha, rounding_mode, out, ...) is refused, never dropped.
ALLOWED = {"dim", "keepdim", "approximate", "beta", "threshold", "eps", "normalized_shape", "weight", "bias",
           "dtype"}


def rank(a):
    """The rank of fx node a's value, from the shape propagation run on the inputs."""
    return len(a.meta["tensor_meta"].shape)


class Converter:
    def __init__(self, fx_names):
        self.nodes = []
        self.fx_names = set(fx_names)

    def fresh(self, name):
        """A node name no fx node and no earlier node has (for ops written as several graph-file nodes)."""
        taken = {node["name"] for node in self.nodes} | self.fx_names
        while name in taken:
            name += "_"
        return name

    def emit(self, name, op, args, **params):
        node = {"name": name, "op": op, "args": args}
        node.update(params)
        self.nodes.append(node)
        return name

    @staticmethod
    def dim_of(args, kwargs, position):
        return kwargs.get("dim", args[position] if len(args) > position else None)

    def convert(self, n, names):
        """Appends the graph-file nodes of fx node n; returns the name of its value."""
        where = f"node '{n.name}' ({n.op} {getattr(n.target, '__name__', n.target)})"
        target, args, kwargs = n.target, n.args, dict(n.kwargs)
        is_method = n.op == "call_method"  # then args[0] is the tensor the method is called on
        # What PyTorch's functional forms pass on their own when traced: F.softmax's _stacklevel and dtype=None,
        # F.relu's inplace=False (inplace=True is refused before this, by refuse_in_place).
        kwargs.pop("_stacklevel", None)
        for key, default in (("inplace", False), ("dtype", None)):
            if key in kwargs and kwargs[key] is default:
                del kwargs[key]
        for key, value in kwargs.items():
            if key not in ALLOWED or (key == "dtype" and value is not None):
                raise Unsupported(f"{where}: argument {key}={value!r}, which graph files have no counterpart for")

        def positional(count):  # at most `count` positional arguments
            if len(args) > count:
                raise Unsupported(f"{where}: {len(args)} positional arguments where graph files take {count}")

        def ref(a):
            if isinstance(a, torch.fx.Node):
                return names[a.name]
            raise Unsupported(f"{where}: argument {a!r} where a tensor is expected")

        def constant(a):
            if isinstance(a, (int, float)) and not isinstance(a, bool):
                return a
            return None

        if is_method and target == "contiguous":  # the same values: no node
            positional(1)
            return ref(args[0])
        if (not is_method and target in UNARY) or (is_method and target in UNARY_METHODS):
            op = UNARY[target] if not is_method else UNARY_METHODS[target]
            positional(1)
            params = {}
            if op == "gelu":
                approximate = kwargs.pop("approximate", "none")
                if approximate != "none":
                    params["approximate"] = approximate  # "tanh"; anything else the reader names
            if op == "softplus" and (kwargs.pop("beta", 1) != 1 or kwargs.pop("threshold", 20) != 20):
                raise Unsupported(f"{where}: softplus with beta or threshold other than 1 and 20")
            if kwargs:
                raise Unsupported(f"{where}: arguments {sorted(kwargs)} that {op} does not take")
            if op == "transpose" and rank(args[0]) < 2:  # torch.t of a vector is the vector itself
                raise Unsupported(f"{where}: t() of a rank-{rank(args[0])} tensor, which is the tensor itself")
            return self.emit(n.name, op, [ref(args[0])], **params)
        if (not is_method and target in BINARY) or (is_method and target in BINARY_METHODS):
            op = BINARY[target] if not is_method else BINARY_METHODS[target]
            positional(2)
            if kwargs or len(args) != 2:
                raise Unsupported(f"{where}: {op} takes two operands and no other argument here ({sorted(kwargs)})")
            a, b = args[0], args[1]
            ca, cb = constant(a), constant(b)
            if op == "mul" and (ca is not None or cb is not None):  # a tensor times a number: scale
                c, t = (ca, b) if ca is not None else (cb, a)
                return self.emit(n.name, "scale", [ref(t)], factor=exact(c))
            if op == "div" and cb is not None:  # a tensor over a number: scale by its reciprocal, to 400 digits
                if float(cb) == 0:
                    raise Unsupported(f"{where}: division by the number 0")
                quotient = decimal.Context(prec=400).divide(decimal.Decimal(1), decimal.Decimal(float(cb)))
                return self.emit(n.name, "scale", [ref(a)], factor=str(quotient))
            if ca is not None or cb is not None:
                raise Unsupported(f"{where}: a number where graph files need a tensor (make it an input)")
            return self.emit(n.name, op, [ref(a), ref(b)])
        if (not is_method and target is torch.transpose) or (is_method and target == "transpose"):
            positional(3)
            if kwargs or len(args) != 3:
                raise Unsupported(f"{where}: transpose(x, dim0, dim1) with both dimensions given positionally")
            return self.emit(n.name, "transpose", [ref(args[0])], dim0=args[1], dim1=args[2])
        if (not is_method and target is torch.permute) or (is_method and target == "permute"):
            dims = args[1] if len(args) == 2 and isinstance(args[1], (tuple, list)) else args[1:]
            if kwargs or not dims:
                raise Unsupported(f"{where}: permute with its dims given positionally")
            return self.emit(n.name, "permute", [ref(args[0])], dims=list(dims))
        if (not is_method and target is torch.reshape) or (is_method and target in ("reshape", "view")):
            shape = args[1] if len(args) == 2 and isinstance(args[1], (tuple, list)) else args[1:]
            if kwargs or any(not isinstance(k, int) for k in shape):
                raise Unsupported(f"{where}: {target} with its sizes given positionally as integers")
            return self.emit(n.name, "reshape", [ref(args[0])], shape=list(shape))
        if (not is_method and target is torch.unsqueeze) or (is_method and target == "unsqueeze"):
            positional(2)
            dim = self.dim_of(args, kwargs, 1)
            if not isinstance(dim, int):
                raise Unsupported(f"{where}: unsqueeze needs one integer dim")
            return self.emit(n.name, "unsqueeze", [ref(args[0])], dim=dim)
        softmax = {torch.softmax: "softmax", F.softmax: "softmax", torch.log_softmax: "log_softmax",
                   F.log_softmax: "log_softmax"}
        if (not is_method and target in softmax) or (is_method and target in ("softmax", "log_softmax")):
            op = softmax[target] if not is_method else target
            positional(2)
            if set(kwargs) - {"dim"}:
                raise Unsupported(f"{where}: arguments {sorted(set(kwargs) - {'dim'})} that {op} does not take")
            dim = self.dim_of(args, kwargs, 1)
            if not isinstance(dim, int):
                raise Unsupported(f"{where}: {op} without a dim (PyTorch's implicit dim is deprecated): give dim=")
            if rank(args[0]) == 0:  # torch takes it (softmax 1, log_softmax 0); graph files have no dim there
                raise Unsupported(f"{where}: {op} of a rank-0 tensor, which is a constant (1 or 0)")
            return self.emit(n.name, op, [ref(args[0])], dim=dim)
        if (not is_method and target in (torch.sum, torch.mean)) or (is_method and target in ("sum", "mean")):
            op = ("sum" if target is torch.sum else "mean") if not is_method else target
            positional(2)
            if set(kwargs) - {"dim", "keepdim"}:
                raise Unsupported(f"{where}: arguments {sorted(set(kwargs) - {'dim', 'keepdim'})} that {op} does not take")
            dim = self.dim_of(args, kwargs, 1)
            keepdim = kwargs.get("keepdim", False)
            if isinstance(dim, (tuple, list)) and len(dim) == 0:  # torch: an empty dim list reduces every dim
                dim = None
            if rank(args[0]) == 0 or (dim is None and keepdim):
                # Graph files' form without keys: every entry, A's rank kept with every size 1 (torch's keepdim
                # result; a rank-0 operand stays rank 0, where torch takes a dim of 0 or -1 and does the same).
                return self.emit(n.name, op, [ref(args[0])])
            if dim is None:  # every entry: torch gives rank 0, as does a dim list of every dim
                dim = list(range(rank(args[0])))
            params = {"dim": list(dim) if isinstance(dim, (tuple, list)) else dim}
            if keepdim:
                params["keepdim"] = True
            return self.emit(n.name, op, [ref(args[0])], **params)
        if (not is_method and target in (torch.pow, operator.pow)) or (is_method and target == "pow"):
            positional(2)
            if kwargs or len(args) != 2:
                raise Unsupported(f"{where}: pow(x, exponent) with the exponent given positionally")
            e = constant(args[1])
            if e is None:
                raise Unsupported(f"{where}: pow with a tensor exponent")
            return self.emit(n.name, "pow", [ref(args[0])], exponent=exact(e))
        if not is_method and target is F.layer_norm:
            positional(5)
            shape = args[1] if len(args) > 1 else kwargs.get("normalized_shape")
            if not isinstance(shape, (tuple, list)):
                raise Unsupported(f"{where}: layer_norm's normalized_shape must be a tuple or list, such as (n,)")
            weight = kwargs.get("weight", args[2] if len(args) > 2 else None)
            bias = kwargs.get("bias", args[3] if len(args) > 3 else None)
            eps = kwargs.get("eps", args[4] if len(args) > 4 else 1e-5)
            if bias is not None and weight is None:
                raise Unsupported(f"{where}: layer_norm with a bias and no weight (give a weight of ones)")
            operands = [ref(args[0])] + [ref(w) for w in (weight, bias) if w is not None]
            return self.emit(n.name, "layer_norm", operands, normalized_shape=list(shape), eps=exact(eps))
        if not is_method and target is F.linear:  # x W^T + b, as nn.Linear
            positional(3)
            weight = kwargs.get("weight", args[1] if len(args) > 1 else None)
            bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
            if weight is None or rank(weight) != 2:
                raise Unsupported(f"{where}: linear needs a weight of rank 2")
            wt = self.emit(self.fresh(n.name + "_weight_t"), "transpose", [ref(weight)])
            if bias is None:
                return self.emit(n.name, "matmul", [ref(args[0]), wt])
            product = self.emit(self.fresh(n.name + "_matmul"), "matmul", [ref(args[0]), wt])
            return self.emit(n.name, "add", [product, ref(bias)])
        raise Unsupported(f"{where}: no graph-file op for it (graph files have: matmul, linear, transpose, permute, "
                          "reshape, unsqueeze, scale, softmax, sum, add, sub, mul, div, exp, log, tanh, sigmoid, "
                          "relu, gelu, silu, softplus, sqrt, abs, square, neg, pow, mean, log_softmax, layer_norm, "
                          "...; see tapegrad ops)")


def refuse_in_place(graph):
    """An op that writes into a tensor (x.add_(y), x[0] = v, relu(x, inplace=True), out=) changes a value that
    graph files hold fixed, and dead-code elimination would drop it silently: refused, naming the node."""
    for n in graph.nodes:
        if n.op not in ("call_function", "call_method"):
            continue
        name = n.target if n.op == "call_method" else getattr(n.target, "__name__", str(n.target))
        inplace_argument = n.kwargs.get("inplace", False)
        if n.op == "call_function" and not inplace_argument:
            try:  # inplace given by position: F.relu(x, True)
                bound = inspect.signature(n.target).bind(*n.args, **n.kwargs)
                inplace_argument = bound.arguments.get("inplace", False) is True
            except (TypeError, ValueError):  # a builtin without a signature, or arguments it does not take
                pass
        in_place = (name.endswith("_") and not name.startswith("__")) \
            or n.target is operator.setitem or inplace_argument or "out" in n.kwargs
        if in_place:
            raise Unsupported(f"node '{n.name}' ({n.op} {name}): an in-place operation; graph files hold each value "
                              "once, so write it out of place (x = x + y, not x.add_(y))")


def dumps(v, depth=0):
    """JSON with one matrix row, and one node, per line."""
    pad, inner = " " * depth, " " * (depth + 1)
    if isinstance(v, dict) and not (depth > 0 and "op" in v):
        items = [f"{inner}{json.dumps(k)}: {dumps(x, depth + 1)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list) and v and isinstance(v[0], (list, dict)):
        return "[\n" + ",\n".join(inner + dumps(x, depth + 1) for x in v) + "\n" + pad + "]"
    return json.dumps(v)


def write(path, obj):
    with open(path, "w") as out:
        out.write(dumps(obj) + "\n")


def gradients(f, inputs, dtype):
    xs = {k: v.detach().to(dtype).clone().requires_grad_(True) for k, v in inputs.items()}
    out = f(**xs)
    if out.numel() != 1:
        raise Unsupported(f"f returns {tuple(out.shape)}; graph files' output is one number")
    out.reshape(()).backward()
    return {k: tensor(x.grad if x.grad is not None else torch.zeros_like(x)) for k, x in xs.items()}, out.item()


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    path, prefix = argv[1], argv[2]
    spec = importlib.util.spec_from_file_location("function", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    inputs = {k: v.detach().to(torch.float32).to(torch.float64) for k, v in module.inputs().items()}
    for k, v in inputs.items():
        if v.dim() > 8:
            raise Unsupported(f"input '{k}' has {v.dim()} dimensions; graph files hold ranks 0 to 8")

    parameters = list(inspect.signature(module.f).parameters)
    if sorted(parameters) != sorted(inputs):
        raise Unsupported(f"f takes {parameters} but inputs() gives {sorted(inputs)}: they must be the same names")
    traced = torch.fx.symbolic_trace(module.f)
    refuse_in_place(traced.graph)  # before dead code goes: an in-place op's own result is often unused
    traced.graph.eliminate_dead_code()  # fx keeps values f computes but does not use
    traced.recompile()
    # The trace must compute what f does: `y += 1` traces as y = y + 1, so an alias of y taken before (z = y)
    # keeps the old value in the trace but not in PyTorch. Compared in float64 on the inputs themselves.
    args = [inputs[k] for k in parameters]
    traced_value, direct_value = traced(*args), module.f(**{k: v.clone() for k, v in inputs.items()})
    if not torch.allclose(torch.as_tensor(traced_value), torch.as_tensor(direct_value), rtol=0, atol=0,
                          equal_nan=True):
        raise Unsupported(f"the traced graph gives {torch.as_tensor(traced_value).tolist()} where f gives "
                          f"{torch.as_tensor(direct_value).tolist()}: f does something tracing does not see (an "
                          "in-place op on an alias, z = y; y += 1; or random numbers); write it out of place")
    # Every value's shape, from a run on the inputs (the converter reads ranks from it).
    torch.fx.passes.shape_prop.ShapeProp(traced).propagate(*args)
    for n in traced.graph.nodes:
        meta = n.meta.get("tensor_meta")
        if n.op in ("call_function", "call_method") and meta is not None and len(meta.shape) > 8:
            raise Unsupported(f"node '{n.name}': a value of shape {tuple(meta.shape)}; graph files hold ranks 0 to 8")
    conv, names, output = Converter([n.name for n in traced.graph.nodes] + list(inputs)), {}, None
    for n in traced.graph.nodes:
        if n.op == "placeholder":
            if n.target not in inputs:
                raise Unsupported(f"f takes '{n.target}' but inputs() has no such input")
            names[n.name] = n.target
        elif n.op in ("call_function", "call_method"):
            names[n.name] = conv.convert(n, names)
        elif n.op == "output":
            if not isinstance(n.args[0], torch.fx.Node):
                raise Unsupported("f must return one tensor")
            output = names[n.args[0].name]
        else:
            raise Unsupported(f"node '{n.name}': fx op '{n.op}' (modules and attributes are not graph-file ops)")
    graph = {"description": f"traced from {path} by tools/torch_to_tapegrad.py (torch {torch.__version__})",
             "inputs": {k: tensor(v) for k, v in inputs.items()}, "nodes": conv.nodes, "output": output}
    write(prefix + ".json", graph)
    for dtype, tag in ((torch.float64, "float64"), (torch.float32, "float32")):
        grads, value = gradients(module.f, inputs, dtype)
        write(f"{prefix}.{tag}.json", {"precision": f"torch {tag}", "value": exact(value), "gradients": grads})
    print(f"torch_to_tapegrad: {prefix}.json ({len(conv.nodes)} nodes), {prefix}.float64.json, {prefix}.float32.json")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Unsupported as e:
        print(f"torch_to_tapegrad: {e}", file=sys.stderr)
        sys.exit(2)
    except Exception as e:  # tracing, shapes, the function itself: one line, and the code of a bad input
        print(f"torch_to_tapegrad: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
