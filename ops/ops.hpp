#pragma once
// Every built-in op: one header each (its descriptor, forward value and VJP side by side), listed once
// below. Graph files, `tapegrad ops` (README's op table is checked against it), the fuzz dictionary and the
// random-graph property tests all read this list: adding an op is its header, its test and one line in each
// block here.
#include "abs.hpp"
#include "add.hpp"
#include "cross_entropy.hpp"
#include "detach.hpp"
#include "div.hpp"
#include "dropout.hpp"
#include "embedding.hpp"
#include "exp.hpp"
#include "gelu.hpp"
#include "hadamard.hpp"
#include "layer_norm.hpp"
#include "layout.hpp"
#include "log.hpp"
#include "log_softmax.hpp"
#include "masks.hpp"
#include "matmul.hpp"
#include "mean.hpp"
#include "neg.hpp"
#include "pow.hpp"
#include "relu.hpp"
#include "rms_norm.hpp"
#include "scale.hpp"
#include "sigmoid.hpp"
#include "silu.hpp"
#include "slice.hpp"
#include "softmax_rows.hpp"
#include "softplus.hpp"
#include "sqrt.hpp"
#include "square.hpp"
#include "sub.hpp"
#include "sum.hpp"
#include "tanh.hpp"
#include "transpose.hpp"
#include "where.hpp"

namespace tapegrad {

/// The built-in ops, in the order listings show them.
using BuiltinOps =
    OpList<MatMulOp, TransposeOp, ScaleOp, SoftmaxRowsOp, SumOp, AddOp, SubOp, HadamardOp, ExpOp, LogOp, CausalMaskOp,
           PaddingMaskOp, SliceRowsOp, SliceColsOp, ConcatColsOp, CrossEntropyOp, DropoutOp, NegOp, DivOp, SquareOp,
           SqrtOp, PowOp, AbsOp, ReluOp, TanhOp, SigmoidOp, SoftplusOp, GeluOp, MeanOp, LogSoftmaxOp, LayerNormOp,
           RmsNormOp, ConcatRowsOp, ReshapeOp, PermuteOp, UnsqueezeOp, SqueezeOp, ExpandOp, SliceOp, SelectOp, CatOp,
           StackOp, SiluOp, DetachOp, WhereOp, MaskedFillOp, NllLossOp, EmbeddingOp>;

} // namespace tapegrad
