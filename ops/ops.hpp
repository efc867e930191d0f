#pragma once
// Every primitive op: one header each, forward value and VJP side by side.
#include "add.hpp"
#include "causal_mask.hpp"
#include "exp.hpp"
#include "hadamard.hpp"
#include "log.hpp"
#include "matmul.hpp"
#include "scale.hpp"
#include "softmax_rows.hpp"
#include "sub.hpp"
#include "sum.hpp"
#include "transpose.hpp"
