#pragma once
// The chapter's warning about saturated softmax: where a row of A is one-hot, its Jacobian
// A_j (delta_jk - A_k) is nearly zero, both sides of a difference quotient agree at ~0, and a wrong softmax
// VJP there passes. This guard finds such rows on a recorded tape and says so.

#include "../../autodiff/tape.hpp"
#include "../../ops/layout.hpp"

#include <string>
#include <vector>

namespace tapegrad {

/// For every node of a row-normalising op (its descriptor's row_normaliser: softmax, or a variant of it), the slices
/// along its dim (its "dim" parameter, else the last: a matrix's rows) whose weight outside the largest entry,
/// 1 - max_j A[i][j], is at most `resolution` (the check's relative threshold): every Jacobian entry of that slice
/// is then below what the check can see. One warning per slice, naming node and slice. Slices where masks leave
/// at most one key visible are not warned about.
template <Real T> std::vector<std::string> saturated_softmax_rows(const Tape<T>& tape, const T& resolution) {
  std::vector<std::string> warnings;
  for (std::size_t n = 0; n < tape.size(); ++n) {
    const auto& node = tape.node(n);
    if (!node.op->row_normaliser || node.shape.rank() == 0) continue;
    const auto& parent = tape.node(node.parents.at(0));
    const std::size_t d = node.params.has("dim")
                              ? normalize_dim(node.params.integer("dim"), node.shape.rank(), node.op->name)
                              : node.shape.rank() - 1;
    // The slices along d as rows (a copy only when d is not the last dim).
    const StridedMap m = dim_last_map(node.shape, d);
    Matrix<T> A(m.out.rows(), m.out.cols()), S(m.out.rows(), m.out.cols());
    m.run([&](Eigen::Index o, Eigen::Index at) {
      A.data()[o] = node.value.data()[at];
      S.data()[o] = parent.value.data()[at];
    });
    for (Eigen::Index i = 0; i < A.rows(); ++i) {
      const T rest = T(1) - A.row(i).maxCoeff();
      // A slice with at most one visible key (the others masked to -inf) has a Jacobian that is exactly 0 by
      // construction, which finite differences see exactly: not saturation.
      long visible = 0;
      for (Eigen::Index j = 0; j < S.cols(); ++j)
        visible += S(i, j) != -infinity<T>();
      if (visible <= 1 || rest > resolution) continue;
      warnings.push_back("saturated softmax: " + tape.node_name(n) + " " + slice_string(node.shape, d, i) +
                         " is one-hot to within " + to_string(rest, 3) + " (1 - max; threshold " +
                         to_string(resolution, 3) +
                         "): its Jacobian is below what finite differences can resolve, so a wrong softmax VJP in "
                         "this row would pass; this is a poor test point, check an unsaturated one");
    }
  }
  return warnings;
}

} // namespace tapegrad
