#pragma once
// Tensor<T>: a value of rank 0 to 8 for inputs and results, in any scalar type: its shape and its entries,
// contiguous and row-major, held in a Matrix<T> viewed as autodiff/shape.hpp says (every leading dim folded
// into the rows, the last dim a row), so a rank-2 tensor IS its matrix and kernels hand the view to Eigen.
//
//   Tensor<double> x{{1, 2, 3}, {4, 5, 6}};             // nested lists: rank 2, 2x3
//   Tensor<double> b{T(1), T(2)};                       // rank 1, [2]
//   Tensor<T> y(Shape{2, 3, 4}, entries);               // a shape and its entries, row-major
//   Tensor<T> m(eigen_matrix);                          // an Eigen matrix: rank 2
//   Tensor<T> s(T(3));                                  // rank 0

#include "real.hpp"
#include "shape.hpp"

#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

namespace detail {
/// Nested initializer lists of depth N: the entries of a rank-N tensor.
template <class T, std::size_t N> struct NestedList {
  using type = std::initializer_list<typename NestedList<T, N - 1>::type>;
};
template <class T> struct NestedList<T, 0> { using type = T; };
} // namespace detail

template <class T> class Tensor {
  template <std::size_t N> using Nested = detail::NestedList<T, N>;

public:
  using Scalar = T;

  /// Rank 0 holding 0.
  Tensor() : data_(Matrix<T>::Zero(1, 1)) {}
  /// Rank 0 holding x.
  explicit Tensor(const T& x) : data_(Matrix<T>::Constant(1, 1, x)) {}
  /// A matrix: rank 2, rows x cols.
  Tensor(const Matrix<T>& m) : shape_{m.rows(), m.cols()}, data_(m) {}
  Tensor(Matrix<T>&& m) : shape_{m.rows(), m.cols()}, data_(std::move(m)) {}
  /// Any Eigen matrix expression (a fixed-size matrix, a block, a column-major matrix): rank 2.
  template <class Derived>
  requires(!std::same_as<Derived, Matrix<T>>) explicit Tensor(const Eigen::MatrixBase<Derived>& m)
      : shape_{m.rows(), m.cols()}, data_(m) {}
  /// A shape and its entries, row-major; ShapeError when their counts differ.
  Tensor(const Shape& shape, std::span<const T> entries) : shape_(shape), data_(shape.rows(), shape.cols()) {
    require_count(static_cast<Eigen::Index>(entries.size()), "entries");
    std::copy(entries.begin(), entries.end(), data_.data());
  }
  Tensor(const Shape& shape, const std::vector<T>& entries) : Tensor(shape, std::span<const T>(entries)) {}
  /// A shape and its entries as a matrix of any rows x cols holding them row-major (the storage of a tensor
  /// of that shape, or a matrix with as many entries): taken over without a copy.
  Tensor(const Shape& shape, Matrix<T> entries) : shape_(shape), data_(std::move(entries)) {
    require_count(data_.size(), "entries");
    data_.resize(shape.rows(), shape.cols()); // same count: Eigen keeps the entries in place
  }
  /// Nested lists, ranks 1 to 4 (a ragged list is a ShapeError). Higher ranks: a shape and its entries. A list
  /// whose innermost lists hold one entry each ({{x}}, {{{a}, {b}}}) reads two ways in C++ (brace elision), so it
  /// does not compile: write its shape (Tensor(Shape{1, 1}, ...), Tensor::constant).
  Tensor(typename Nested<1>::type l) { from_nested<1>(l); }
  Tensor(typename Nested<2>::type l) { from_nested<2>(l); }
  Tensor(typename Nested<3>::type l) { from_nested<3>(l); }
  Tensor(typename Nested<4>::type l) { from_nested<4>(l); }

  /// A tensor of `shape` with every entry x.
  static Tensor constant(const Shape& shape, const T& x) {
    return Tensor(shape, Matrix<T>::Constant(shape.rows(), shape.cols(), x));
  }
  static Tensor zeros(const Shape& shape) { return constant(shape, T(0)); }

  const Shape& shape() const { return shape_; }
  std::size_t rank() const { return shape_.rank(); }
  Eigen::Index numel() const { return shape_.numel(); }
  /// The storage view (rank 2: the matrix itself).
  const Matrix<T>& matrix() const { return data_; }
  Matrix<T>& matrix() { return data_; }
  const T* data() const { return data_.data(); }
  T* data() { return data_.data(); }
  /// The entry at row-major position k.
  const T& operator[](Eigen::Index k) const { return data_.data()[k]; }
  T& operator[](Eigen::Index k) { return data_.data()[k]; }
  /// The entry at a multi-index, one index per dim (ShapeError when the count or a range is wrong).
  const T& at(std::span<const Eigen::Index> index) const { return data_.data()[flat(index)]; }
  T& at(std::span<const Eigen::Index> index) { return data_.data()[flat(index)]; }
  const T& at(std::initializer_list<Eigen::Index> index) const { return at(std::span(index.begin(), index.size())); }
  T& at(std::initializer_list<Eigen::Index> index) { return at(std::span(index.begin(), index.size())); }

  /// The same entries with another shape of as many entries (a copy; ShapeError otherwise).
  Tensor reshaped(const Shape& shape) const { return Tensor(shape, data_); }

  /// Equal shapes and equal entries (NaN is unequal, as for numbers).
  friend bool operator==(const Tensor& a, const Tensor& b) { return a.shape_ == b.shape_ && a.data_ == b.data_; }

  /// Nested lists, as graph files write them: "[[1, 2], [3, 4]]"; a rank-0 tensor is its number.
  friend std::ostream& operator<<(std::ostream& os, const Tensor& t) {
    Eigen::Index k = 0;
    t.print(os, 0, k);
    return os;
  }

private:
  void require_count(Eigen::Index n, std::string_view what) const {
    if (n != shape_.numel())
      throw ShapeError("Tensor: shape " + shape_string(shape_) + " holds " + std::to_string(shape_.numel()) +
                       " entries but " + std::to_string(n) + " " + std::string(what) + " were given");
  }
  Eigen::Index flat(std::span<const Eigen::Index> index) const {
    if (index.size() != rank())
      throw ShapeError("Tensor::at: " + std::to_string(index.size()) + " indices for a tensor of rank " +
                       std::to_string(rank()));
    Eigen::Index f = 0;
    for (std::size_t k = 0; k < rank(); ++k) {
      if (index[k] < 0 || index[k] >= shape_[k])
        throw ShapeError("Tensor::at: index " + index_string(index) + " is outside shape " + shape_string(shape_));
      f = f * shape_[k] + index[k];
    }
    return f;
  }
  template <std::size_t N, class List> static void sizes_of(const List& l, Shape& s, std::size_t depth) {
    if (depth == s.rank())
      s.push_back(static_cast<Eigen::Index>(l.size()));
    else if (s[depth] != static_cast<Eigen::Index>(l.size()))
      throw ShapeError("Tensor: ragged nested list (a list of " + std::to_string(l.size()) + " beside one of " +
                       std::to_string(s[depth]) + " at depth " + std::to_string(depth) + ")");
    if (l.size() == 0) throw ShapeError("Tensor: an empty list (every size must be at least 1)");
    if constexpr (N > 1)
      for (const auto& inner : l)
        sizes_of<N - 1>(inner, s, depth + 1);
  }
  template <std::size_t N, class List> static void fill(const List& l, T*& out) {
    for (const auto& x : l) {
      if constexpr (N > 1)
        fill<N - 1>(x, out);
      else
        *out++ = x;
    }
  }
  template <std::size_t N> void from_nested(typename Nested<N>::type l) {
    Shape s;
    sizes_of<N>(l, s, 0);
    shape_ = s;
    data_.resize(s.rows(), s.cols());
    T* out = data_.data();
    fill<N>(l, out);
  }
  void print(std::ostream& os, std::size_t depth, Eigen::Index& k) const {
    if (depth == rank()) {
      if constexpr (Real<T>)
        os << to_decimal(data_.data()[k++]);
      else if constexpr (std::same_as<T, bool>)
        os << (data_.data()[k++] ? "true" : "false");
      else
        os << data_.data()[k++];
      return;
    }
    os << '[';
    for (Eigen::Index i = 0; i < shape_[depth]; ++i) {
      if (i) os << ", ";
      print(os, depth + 1, k);
    }
    os << ']';
  }

  Shape shape_;
  Matrix<T> data_;
};

} // namespace tapegrad
