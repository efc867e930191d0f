#pragma once
// Shapes of tensors of rank 0 to 8 (PyTorch's sizes, outermost first, row-major), the matrix a tensor's
// storage is viewed as, dims counted from the end, and NumPy's broadcasting rule: the shape arithmetic every
// op shares, in one place.
//
// Storage view: a tensor of shape (d0, ..., d(r-1)) is stored contiguously, row-major, in a Matrix<T> of
// (d0 ... d(r-2)) rows and d(r-1) columns: its trailing dim is a row, every leading dim is folded into the
// rows. A matrix (rank 2) is itself; a vector of n entries (rank 1) is 1 x n; a scalar (rank 0) is 1 x 1. So
// an op along the last dim (softmax, layer_norm) runs on the rows of the view, whatever the rank.

#include "error.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tapegrad {

/// The highest rank a value may have.
inline constexpr std::size_t max_rank = 8;

/// a b, or the largest Eigen::Index when that overflows (sizes are >= 0): a shape too large to hold is refused as
/// too large (Tape::check_entries), never wrapped around to a small one.
inline Eigen::Index saturating_product(Eigen::Index a, Eigen::Index b) {
  Eigen::Index out = 0;
  return __builtin_mul_overflow(a, b, &out) ? std::numeric_limits<Eigen::Index>::max() : out;
}

/// The sizes of a tensor, outermost first: rank 0 (a scalar) to max_rank. Sizes are >= 0 here; ops refuse a
/// size of 0 where they make a value.
class Shape {
public:
  /// Rank 0: one entry.
  Shape() = default;
  /// Shape{2, 3, 4}; Shape{rows, cols} is a matrix. More than max_rank sizes is a ShapeError.
  Shape(std::initializer_list<Eigen::Index> sizes)
      : Shape(std::span<const Eigen::Index>(sizes.begin(), sizes.size())) {}
  explicit Shape(std::span<const Eigen::Index> sizes) {
    if (sizes.size() > max_rank)
      throw ShapeError("a shape of rank " + std::to_string(sizes.size()) + " (at most " + std::to_string(max_rank) +
                       " dims)");
    for (Eigen::Index s : sizes)
      d_[rank_++] = s;
  }
  explicit Shape(const std::vector<Eigen::Index>& sizes) : Shape(std::span<const Eigen::Index>(sizes)) {}

  std::size_t rank() const { return rank_; }
  Eigen::Index operator[](std::size_t k) const {
    assert(k < rank_);
    return d_[k];
  }
  Eigen::Index& operator[](std::size_t k) {
    assert(k < rank_);
    return d_[k];
  }
  const Eigen::Index* begin() const { return d_.data(); }
  const Eigen::Index* end() const { return d_.data() + rank_; }
  std::span<const Eigen::Index> sizes() const { return {d_.data(), rank_}; }

  /// The number of entries: the product of the sizes (1 for rank 0; the largest Eigen::Index when it overflows).
  Eigen::Index numel() const {
    Eigen::Index n = 1;
    for (std::size_t k = 0; k < rank_; ++k)
      n = saturating_product(n, d_[k]);
    return n;
  }
  /// The storage view's rows: the product of every size but the last (1 for ranks 0 and 1; saturating as numel).
  Eigen::Index rows() const {
    Eigen::Index n = 1;
    for (std::size_t k = 0; k + 1 < rank_; ++k)
      n = saturating_product(n, d_[k]);
    return n;
  }
  /// The storage view's columns: the last size (1 for rank 0).
  Eigen::Index cols() const { return rank_ == 0 ? 1 : d_[rank_ - 1]; }
  bool is_matrix() const { return rank_ == 2; }

  /// The shape with a size appended (UsageError past max_rank).
  Shape& push_back(Eigen::Index size) {
    if (rank_ == max_rank) throw ShapeError("a shape of rank " + std::to_string(max_rank + 1));
    d_[rank_++] = size;
    return *this;
  }
  /// The sizes from k on (k <= rank), or before k.
  Shape drop_front(std::size_t k) const { return Shape(sizes().subspan(k)); }
  Shape take_front(std::size_t k) const { return Shape(sizes().first(k)); }
  /// Row-major strides: stride(k) = product of the sizes after k.
  std::array<Eigen::Index, max_rank> strides() const {
    std::array<Eigen::Index, max_rank> s{};
    Eigen::Index n = 1;
    for (std::size_t k = rank_; k-- > 0;) {
      s[k] = n;
      n *= d_[k];
    }
    return s;
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.rank_ == b.rank_ && std::equal(a.begin(), a.end(), b.begin());
  }

private:
  std::array<Eigen::Index, max_rank> d_{};
  std::size_t rank_ = 0;
};

/// "3x4" for a matrix, "2x3x4" for rank 3, "[5]" for a vector, "[]" for a scalar: how messages show shapes.
inline std::string shape_string(const Shape& s) {
  if (s.rank() == 0) return "[]";
  if (s.rank() == 1) return "[" + std::to_string(s[0]) + "]";
  std::string out;
  for (std::size_t k = 0; k < s.rank(); ++k)
    out += (k ? "x" : "") + std::to_string(s[k]);
  return out;
}

/// "(1, 0, 2)": a multi-index as messages show it ("(0, 1)" for a matrix entry).
inline std::string index_string(std::span<const Eigen::Index> index) {
  std::string out = "(";
  for (std::size_t k = 0; k < index.size(); ++k)
    out += (k ? ", " : "") + std::to_string(index[k]);
  return out + ")";
}

/// "[2, 0, 1]": a list of dims or sizes as messages show it (a parameter's list as the file writes it).
template <class I> std::string list_string(const std::vector<I>& v) {
  std::string out;
  for (const I& x : v)
    out += (out.empty() ? "" : ", ") + std::to_string(x);
  return "[" + out + "]";
}

/// The multi-index of the entry at row-major position `flat` of a tensor of shape s.
inline std::vector<Eigen::Index> unravel(const Shape& s, Eigen::Index flat) {
  std::vector<Eigen::Index> index(s.rank());
  for (std::size_t k = s.rank(); k-- > 0;) {
    index[k] = flat % s[k];
    flat /= s[k];
  }
  return index;
}

/// "(1, 0, 2)" for the entry at row-major position `flat` of shape s ("()" for rank 0).
inline std::string entry_string(const Shape& s, Eigen::Index flat) { return index_string(unravel(s, flat)); }

/// A dim counted from the front: `dim` in [-rank, rank - 1] (negative counts from the end, as PyTorch), else a
/// ShapeError "what: dim 3 is out of range for rank 2 (dims are -2 to 1)". `rank` is the rank the dim indexes
/// (for unsqueeze and stack, one more than the operand's).
inline std::size_t normalize_dim(long dim, std::size_t rank, std::string_view what) {
  const long r = static_cast<long>(rank);
  if (dim < -r || dim >= r)
    throw ShapeError(std::string(what) + ": dim " + std::to_string(dim) + " is out of range for rank " +
                     std::to_string(rank) +
                     (rank == 0 ? " (a rank-0 value has no dims)"
                                : " (dims are " + std::to_string(-r) + " to " + std::to_string(r - 1) + ")"));
  return static_cast<std::size_t>(dim < 0 ? dim + r : dim);
}

/// Per dim of a rank-`rank` tensor, whether `dims` names it (each normalised; a dim named twice is a ShapeError).
inline std::array<bool, max_rank> dim_set(std::span<const long> dims, std::size_t rank, std::string_view what) {
  std::array<bool, max_rank> chosen{};
  for (long d : dims) {
    const std::size_t k = normalize_dim(d, rank, what);
    if (chosen[k]) throw ShapeError(std::string(what) + ": dim " + std::to_string(d) + " is named twice");
    chosen[k] = true;
  }
  return chosen;
}

/// The broadcast of shapes a and b (NumPy/PyTorch): aligned at their trailing end, a missing leading dim counts
/// as 1, per dim the sizes are equal or one of them is 1, the result takes the larger. Empty when they do not
/// broadcast (the caller names the op and operands).
inline bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out) {
  const std::size_t r = std::max(a.rank(), b.rank());
  std::array<Eigen::Index, max_rank> d{};
  for (std::size_t k = 0; k < r; ++k) {
    const Eigen::Index x = k < r - a.rank() ? 1 : a[k - (r - a.rank())];
    const Eigen::Index y = k < r - b.rank() ? 1 : b[k - (r - b.rank())];
    if (x != y && x != 1 && y != 1) return false;
    d[k] = x == 1 ? y : x;
  }
  out = Shape(std::span<const Eigen::Index>(d.data(), r));
  return true;
}

/// Walks every entry of a tensor of shape `out` in row-major order together with the entries of tensors of
/// shape `in[j]` that broadcast to it: f(o, i0, i1, ...) with o the flat position in `out` and i_j the flat
/// position the broadcast reads in operand j. Each operand's shape must broadcast to `out`.
template <std::size_t N> class BroadcastWalk {
public:
  BroadcastWalk(const Shape& out, const std::array<Shape, N>& in) : out_(out) {
    const std::size_t r = out.rank();
    for (std::size_t j = 0; j < N; ++j) {
      assert(in[j].rank() <= r);
      const auto s = in[j].strides();
      for (std::size_t k = 0; k < r; ++k) {
        const std::size_t lead = r - in[j].rank();
        stride_[j][k] = k < lead || in[j][k - lead] == 1 ? 0 : s[k - lead];
        assert(k < lead || in[j][k - lead] == 1 || in[j][k - lead] == out[k]);
      }
    }
  }
  template <class F> void run(F&& f) const {
    const std::size_t r = out_.rank();
    const Eigen::Index n = out_.numel();
    std::array<Eigen::Index, max_rank> index{};
    std::array<Eigen::Index, N> at{};
    for (Eigen::Index o = 0; o < n; ++o) {
      call(f, o, at, std::make_index_sequence<N>{});
      for (std::size_t k = r; k-- > 0;) { // the odometer: the last dim moves fastest
        ++index[k];
        for (std::size_t j = 0; j < N; ++j)
          at[j] += stride_[j][k];
        if (index[k] < out_[k]) break;
        for (std::size_t j = 0; j < N; ++j)
          at[j] -= stride_[j][k] * index[k];
        index[k] = 0;
      }
    }
  }

private:
  template <class F, std::size_t... J>
  static void call(F& f, Eigen::Index o, const std::array<Eigen::Index, N>& at, std::index_sequence<J...>) {
    f(o, at[J]...);
  }
  Shape out_;
  std::array<std::array<Eigen::Index, max_rank>, N> stride_{};
};

} // namespace tapegrad
