#pragma once
// What varies between attention graphs beyond the chapter's: heads, masks, the key/value cache offset and
// dropout. Shared by the graph built from ops (attention.hpp) and the one written by hand
// (attention_by_hand.hpp), so both compute the same function: the same mask, the same dropout pattern.

#include "../../ops/dropout.hpp"
#include "../../ops/softmax_rows.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tapegrad {

struct AttentionConfig {
  int heads = 1;       ///< the columns of Q and K (d) and of V (r) are split into this many equal heads
  bool causal = false; ///< query i sees key j only when j <= i + offset
  long offset = 0;     ///< positions before the first query (cached keys): query i stands at position i + offset
  std::vector<bool> key_padding; ///< empty: none; otherwise one flag per key, false = padding (never seen)
  double dropout = 0;            ///< drop probability on the attention weights (0: no dropout)
  std::uint64_t dropout_seed = 1;
  MaskedRows masked_rows = MaskedRows::zero; ///< a query that sees no key: output 0, or an error

  bool masked() const { return causal || !key_padding.empty(); }

  /// Whether query i may see key j.
  bool sees(Eigen::Index i, Eigen::Index j) const {
    return (!causal || j <= i + offset) && (key_padding.empty() || key_padding[static_cast<std::size_t>(j)]);
  }

  /// Refuses shapes the configuration cannot split or mask: m queries, n keys, d columns of Q and K, r of V.
  void validate(Eigen::Index m, Eigen::Index n, Eigen::Index d, Eigen::Index r) const {
    const std::string where = "attention(heads " + std::to_string(heads) + ", Q " + shape_string(m, d) + ", K " +
                              shape_string(n, d) + ", V " + shape_string(n, r) + "): ";
    if (heads < 1) throw UsageError(where + "heads must be at least 1");
    if (d % heads != 0 || r % heads != 0)
      throw ShapeError(where + "the heads must divide d = " + std::to_string(d) + " and r = " + std::to_string(r));
    if (!key_padding.empty() && static_cast<Eigen::Index>(key_padding.size()) != n)
      throw ShapeError(where + "the padding mask has " + std::to_string(key_padding.size()) + " flags for " +
                       std::to_string(n) + " keys");
    if (!(dropout >= 0 && dropout < 1))
      throw UsageError(where + "dropout " + std::to_string(dropout) + " must be in [0, 1)");
  }

  /// One dropout pattern per head (m x n each), head h's drawn from head_seed(h); none without dropout.
  std::vector<DropoutMask> dropout_masks(Eigen::Index m, Eigen::Index n) const {
    std::vector<DropoutMask> masks;
    if (dropout == 0) return masks;
    // head h's seed: dropout_seed and h mixed (splitmix64), so that no head of one seed repeats a head of
    // another, and below 2^63 (a node's integer parameter)
    const auto head_seed = [this](int h) {
      std::uint64_t z = dropout_seed + 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(h + 1);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      return (z ^ (z >> 31)) >> 1;
    };
    for (int h = 0; h < heads; ++h)
      masks.push_back(dropout_mask(m, n, dropout, head_seed(h)));
    return masks;
  }
};

} // namespace tapegrad
