#pragma once
// Every built-in op: one header each (its descriptor, forward value and VJP side by side), listed once
// below. Graph files, `tapegrad ops` (README's op table is checked against it), the fuzz dictionary and the
// random-graph property tests all read this list: adding an op is its header, its test and one line in each
// block here.
#include "abs.hpp"
#include "add.hpp"
#include "amax.hpp"
#include "conv.hpp"
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
#include "logsumexp.hpp"
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
           StackOp, SiluOp, DetachOp, WhereOp, MaskedFillOp, NllLossOp, EmbeddingOp, AmaxOp, LogsumexpOp, Conv1dOp,
           Conv2dOp>;

/// Whether the ops of `List` have distinct names and node types (a graph file finds an op by its name).
template <class List> constexpr bool distinct_names() {
  for (std::size_t i = 0; i < List::size; ++i)
    for (std::size_t j = i + 1; j < List::size; ++j)
      if (List::infos[i]->name == List::infos[j]->name || List::infos[i]->node == List::infos[j]->node) return false;
  return true;
}
static_assert(distinct_names<BuiltinOps>(), "two built-in ops share a name or a node type");

} // namespace tapegrad
