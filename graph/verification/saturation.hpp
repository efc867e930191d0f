#pragma once
// The chapter's warning about saturated softmax: where a row of A is one-hot, its Jacobian
// A_j (delta_jk - A_k) is nearly zero, both sides of a difference quotient agree at ~0, and a wrong softmax
// VJP there passes. This guard finds such rows on a recorded tape and says so.

#include "../../autodiff/tape.hpp"

#include <string>
#include <vector>

namespace tapegrad {

/// For every node of a row-normalising op (its descriptor's row_normaliser: softmax, or a variant of it), the rows
/// whose weight outside the largest entry, 1 - max_j A[i][j], is at most `resolution` (the check's relative threshold):
/// every Jacobian entry of that row is then below what the check can see. One warning per row, naming node and row.
/// Rows where masks leave at most one key visible are not warned about.
template <Real T> std::vector<std::string> saturated_softmax_rows(const Tape<T>& tape, const T& resolution) {
  std::vector<std::string> warnings;
  for (std::size_t n = 0; n < tape.size(); ++n) {
    if (!tape.node(n).op->row_normaliser) continue;
    const Matrix<T>& A = tape.node(n).value;
    const Matrix<T>& S = tape.node(tape.node(n).parents.at(0)).value;
    for (Eigen::Index i = 0; i < A.rows(); ++i) {
      const T rest = T(1) - A.row(i).maxCoeff();
      // A row with at most one visible key (the others masked to -inf) has a Jacobian that is exactly 0 by
      // construction, which finite differences see exactly: not saturation.
      long visible = 0;
      for (Eigen::Index j = 0; j < S.cols(); ++j)
        visible += S(i, j) != -infinity<T>();
      if (visible <= 1 || rest > resolution) continue;
      warnings.push_back("saturated softmax: " + tape.node_name(n) + " row " + std::to_string(i) +
                         " is one-hot to within " + to_string(rest, 3) + " (1 - max; threshold " +
                         to_string(resolution, 3) +
                         "): its Jacobian is below what finite differences can resolve, so a wrong softmax VJP in "
                         "this row would pass; this is a poor test point, check an unsaturated one");
    }
  }
  return warnings;
}

} // namespace tapegrad
