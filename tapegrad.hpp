#pragma once
// tapegrad: reverse-mode automatic differentiation on a tape, for small matrix graphs, built to verify
// gradients. Include this header for everything.
#include "autodiff/tape.hpp"
#include "graph/attention.hpp"
#include "graph/chapter.hpp"
#include "ops/ops.hpp"
#include "optim/optimizers.hpp"
