#pragma once
// tapegrad: reverse-mode automatic differentiation on a tape, for small matrix graphs, built to verify
// gradients. Include this header for everything.
#include "autodiff/tape.hpp"
#include "graph/models/attention.hpp"
#include "graph/verification/chapter.hpp"
#include "ops/ops.hpp"
#include "optim/optimizers.hpp"
