#pragma once
// Readable text of matrices and tapes: what the CLI and the examples print.

#include "tape.hpp"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace tapegrad {

/// The matrix as aligned rows, "[ a  b ]" per row, entries with `digits` significant digits (all of T's
/// when 0). `indent` starts every row.
template <Real T> std::string format_matrix(const Matrix<T>& m, int digits = 0, const std::string& indent = "") {
  std::vector<std::string> cells;
  std::size_t width = 0;
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      cells.push_back(to_string(m(i, j), digits));
      width = std::max(width, cells.back().size());
    }
  std::ostringstream out;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    out << indent << "[";
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      out << " " << std::setw(static_cast<int>(width)) << cells[static_cast<std::size_t>(i * m.cols() + j)];
    out << " ]\n";
  }
  return out.str();
}

/// One line per node: index, label, node type, shape, parents.
template <Real T> std::string format_tape(const Tape<T>& tape) {
  std::ostringstream out;
  out << std::left << std::setw(4) << "#" << std::setw(8) << "label" << std::setw(13) << "op" << std::setw(7) << "shape"
      << "parents\n";
  for (std::size_t i = 0; i < tape.size(); ++i) {
    const auto& n = tape.node(i);
    std::string parents;
    for (std::size_t p : n.parents)
      parents += (parents.empty() ? "" : ", ") + tape.node_name(p);
    out << std::setw(4) << i << std::setw(8) << (n.label.empty() ? "-" : n.label) << std::setw(13)
        << std::string(n.op->node) << std::setw(7) << shape_string(n.shape) << parents << "\n";
  }
  return out.str();
}

} // namespace tapegrad
