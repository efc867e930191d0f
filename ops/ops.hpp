#pragma once
// Every built-in op: one header each (its descriptor, forward value and VJP side by side), listed once
// below. Graph files, `tapegrad ops` (README's op table is checked against it), the fuzz dictionary and the
// random-graph property tests all read this list: adding an op is its header, its test and one line in each
// block here.
#include "add.hpp"
#include "cross_entropy.hpp"
#include "dropout.hpp"
#include "exp.hpp"
#include "hadamard.hpp"
#include "log.hpp"
#include "masks.hpp"
#include "matmul.hpp"
#include "neg.hpp"
#include "scale.hpp"
#include "slice.hpp"
#include "softmax_rows.hpp"
#include "sub.hpp"
#include "sum.hpp"
#include "transpose.hpp"

namespace tapegrad {

/// The built-in ops, in the order listings show them.
using BuiltinOps =
    OpList<MatMulOp, TransposeOp, ScaleOp, SoftmaxRowsOp, SumOp, AddOp, SubOp, HadamardOp, ExpOp, LogOp, CausalMaskOp,
           PaddingMaskOp, SliceRowsOp, SliceColsOp, ConcatColsOp, CrossEntropyOp, DropoutOp, NegOp>;

} // namespace tapegrad
