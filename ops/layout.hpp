#pragma once
// Layout ops: values rearranged, never computed. Each is its index map, a StridedMap: the entry at multi-index i
// of the result is the operand's entry at offset + sum_k i[k] stride[k] (a stride 0 repeats, as expand does).
// The VJP is the inverse map: the upstream gradient's entry at i is ADDED into the operand's gradient at that
// offset, so an entry read several times (expand) receives the sum of its reads. One forward and one backward
// (record_layout) serve reshape, permute, transpose, unsqueeze, squeeze and expand; each op below is its shape
// rule and its map.
#include "../autodiff/operands.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace tapegrad {

/// The index map of a layout op: the result's shape, and where each of its entries is read in the operand's
/// row-major storage.
struct StridedMap {
  Shape out;
  Eigen::Index offset = 0;
  std::array<Eigen::Index, max_rank> stride{};

  /// f(o, s) for every entry of the result in row-major order: o its position, s the operand's position read.
  template <class F> void run(F&& f) const {
    const std::size_t r = out.rank();
    const Eigen::Index n = out.numel();
    std::array<Eigen::Index, max_rank> index{};
    Eigen::Index at = offset;
    for (Eigen::Index o = 0; o < n; ++o) {
      f(o, at);
      for (std::size_t k = r; k-- > 0;) { // the last dim moves fastest
        at += stride[k];
        if (++index[k] < out[k]) break;
        at -= stride[k] * index[k];
        index[k] = 0;
      }
    }
  }
};

/// Whether every entry is read at its own position (the map of a reshape): no offset, and along every dim of size > 1
/// the stride a row-major walk of the result takes.
inline bool reads_in_order(const StridedMap& m) {
  const auto out_strides = m.out.strides();
  if (m.offset != 0) return false;
  for (std::size_t k = 0; k < m.out.rank(); ++k)
    if (m.out[k] > 1 && m.stride[k] != out_strides[k]) return false;
  return true;
}

/// Whether the map reads every entry of an operand of shape `operand` exactly once, so that its inverse writes every
/// entry of the operand's gradient: as many entries, no offset, and the map either reads in row-major order (a
/// reshape's) or walks the operand's own dims in another order (a permutation's strides).
inline bool reads_each_once(const StridedMap& m, const Shape& operand) {
  if (m.out.numel() != operand.numel() || m.offset != 0) return false;
  if (reads_in_order(m)) return true;
  std::vector<std::pair<Eigen::Index, Eigen::Index>> walked, dims; // (size, stride) of each dim of size > 1
  const auto strides = operand.strides();
  for (std::size_t k = 0; k < m.out.rank(); ++k)
    if (m.out[k] > 1) walked.emplace_back(m.out[k], m.stride[k]);
  for (std::size_t k = 0; k < operand.rank(); ++k)
    if (operand[k] > 1) dims.emplace_back(operand[k], strides[k]);
  std::sort(walked.begin(), walked.end());
  std::sort(dims.begin(), dims.end());
  return walked == dims;
}

/// The map that reads a tensor of shape `in` in its own order, as shape `out` (same count): reshape's.
inline StridedMap row_major_map(const Shape& out) {
  StridedMap m{out};
  m.stride = out.strides();
  return m;
}

/// Records layout op `Op` on in[0] with index map `map` (its params kept for replay).
///   forward  result[i] = a[map(i)]
///   VJP      da[map(i)] += grad[i]
template <class Op, Real T>
Var<T> record_layout(std::span<const Var<T>> in, const Params<T>& p, std::string label, const StridedMap& map) {
  Tape<T>& tape = common_tape(Op::info, in);
  tape.check_entries(map.out.rows(), map.out.cols(),
                     [&] { return std::string(Op::info.name) + "(" + in[0].name() + "): the result"; });
  Matrix<T> result = tape.buffer(map.out);
  const T* a = in[0].value().data();
  T* r = result.data();
  map.run([&](Eigen::Index o, Eigen::Index s) { r[o] = a[s]; });
  // Every operand entry read exactly once (reshape, permute, transpose, unsqueeze, squeeze; an expand, slice or
  // select that changes nothing): a first contribution writes each and needs no zeroing.
  const bool each_once = reads_each_once(map, in[0].shape());
  return tape.template record<Op>(
      in, map.out, std::move(result),
      [map, each_once](Backprop<T>& bp) {
        bp.accumulate_in_place(0, [&](Matrix<T>& da, Into into) {
          const T* g = bp.grad().data();
          T* d = da.data();
          if (into == Into::assign && each_once) return map.run([&](Eigen::Index o, Eigen::Index s) { d[s] = g[o]; });
          if (into == Into::assign) da.setZero();
          map.run([&](Eigen::Index o, Eigen::Index s) { d[s] += g[o]; });
        });
      },
      std::move(label), p);
}

/// The index map that moves dim d of shape s to the end (the others keep their order): a tensor read through it
/// has every slice along d as a row of its storage view, for the ops that work along a dim (softmax, log_softmax,
/// layer_norm, ...), which run their row kernel on those rows.
inline StridedMap dim_last_map(const Shape& s, std::size_t d) {
  StridedMap m;
  const auto strides = s.strides();
  std::size_t k = 0;
  for (std::size_t j = 0; j < s.rank(); ++j)
    if (j != d) {
      m.out.push_back(s[j]);
      m.stride[k++] = strides[j];
    }
  m.out.push_back(s[d]);
  m.stride[k] = strides[d];
  return m;
}

/// Runs the row kernel f(out, x1, ...) along dim d of tensors of shape s (out and every x_i in their storage
/// views): directly on the views when d is the last dim, else on copies with d moved last (dim_last_map) and the
/// result moved back into out. f sees matrices whose rows are the slices along d.
template <Real T, class F, class... X>
void rows_along(const Shape& s, std::size_t d, Matrix<T>& out, F&& f, const X&... x) {
  if (d + 1 == s.rank() || s.rank() == 0) return f(out, x...);
  const StridedMap m = dim_last_map(s, d);
  const auto moved = [&](const Matrix<T>& v) {
    Matrix<T> r(m.out.rows(), m.out.cols());
    m.run([&](Eigen::Index o, Eigen::Index at) { r.data()[o] = v.data()[at]; });
    return r;
  };
  Matrix<T> y(m.out.rows(), m.out.cols());
  f(y, moved(x)...);
  m.run([&](Eigen::Index o, Eigen::Index at) { out.data()[at] = y.data()[o]; });
}

/// The dim an op along a dim works on: its "dim" parameter (default: the last), normalised; a ShapeError names the
/// op and the operand when it is out of range (a rank-0 operand has none).
template <class A, Real T> std::size_t op_dim(std::string_view op, const A& a, const Params<T>& p) {
  const long dim = p.has("dim") ? p.integer("dim") : -1;
  return normalize_dim(dim, a.shape().rank(), std::string(op) + "(" + a.name() + ")");
}

/// "(1, 0, :)": slice `row` of the rows along dim d of shape s, as messages name it (a matrix's row i along its
/// last dim is "row i").
inline std::string slice_string(const Shape& s, std::size_t d, Eigen::Index row) {
  if (s.rank() == 2 && d == 1) return "row " + std::to_string(row);
  const StridedMap m = dim_last_map(s, d);
  const std::vector<Eigen::Index> index = unravel(m.out.take_front(m.out.rank() - 1), row);
  std::string out = "slice (";
  for (std::size_t j = 0, k = 0; j < s.rank(); ++j)
    out += (j ? ", " : "") + (j == d ? std::string(":") : std::to_string(index[k++]));
  return out + ")";
}

namespace detail {
/// "op(a)": how layout ops name themselves in messages.
template <class A> std::string call_of(std::string_view op, const A& a) {
  return std::string(op) + "(" + a.name() + ")";
}
} // namespace detail

/// reshape(a, shape): the same entries in row-major order with another shape (torch.reshape / view). One size may
/// be -1, inferred from the entry count; [] makes a one-entry tensor rank 0.
///   forward  result (flat k) = a (flat k)            VJP  da (flat k) += grad (flat k)
struct ReshapeOp {
  static constexpr ParamSpec params[] = {
      {"shape", ParamType::integer_list, {}, "the new sizes (each >= 1, or one -1: inferred)"}};
  static constexpr OpInfo info{.name = "reshape",
                               .call = "reshape(a, shape)",
                               .node = "Reshape",
                               .file = "layout.hpp",
                               .params = params,
                               .formula = "result (flat k) = a (flat k), row-major",
                               .shapes = "a: any -> shape (as many entries)"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const std::vector<long>& sizes = p.integer_list("shape");
    const std::string what = detail::call_of("reshape", in[0]);
    if (sizes.size() > max_rank)
      throw ShapeError(what + ": shape has " + std::to_string(sizes.size()) + " sizes (at most " +
                       std::to_string(max_rank) + ")");
    const Eigen::Index n = in[0].shape().numel();
    Eigen::Index known = 1;
    std::size_t inferred = sizes.size();
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      if (sizes[k] == -1 && inferred == sizes.size()) {
        inferred = k;
        continue;
      }
      if (sizes[k] < 1)
        throw ShapeError(what + ": size " + std::to_string(sizes[k]) + " in shape (sizes are >= 1, or one -1)");
      known = saturating_product(known, sizes[k]); // a product past the Index range stays there: never == n
    }
    Shape out;
    for (std::size_t k = 0; k < sizes.size(); ++k)
      out.push_back(k == inferred ? (known > 0 && n % known == 0 ? n / known : -1) : sizes[k]);
    if (out.rank() > 0 && inferred < sizes.size() && out[inferred] < 1)
      throw ShapeError(what + ": " + std::to_string(n) + " entries (" + shape_string(in[0].shape()) +
                       ") do not fill sizes with product " + std::to_string(known) + " and a -1");
    if (out.numel() != n)
      throw ShapeError(what + ": " + in[0].name() + " has " + std::to_string(n) + " entries (" +
                       shape_string(in[0].shape()) + "), shape " + shape_string(out) + " holds " +
                       std::to_string(out.numel()));
    return out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> ReshapeOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  return record_layout<ReshapeOp>(in, p, std::move(label), row_major_map(shape(in, p)));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, ReshapeOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> reshape(const Var<T>& a, std::vector<long> shape, std::string label = {}) {
  return ReshapeOp::apply<T>(operands(a), Params<T>().set("shape", std::move(shape)), std::move(label));
}

/// permute(a, dims): result dim k is a's dim dims[k] (torch.permute).
///   forward  result[i] = a[j] with j[dims[k]] = i[k]          VJP  da[j] += grad[i]  (the inverse permutation)
struct PermuteOp {
  static constexpr ParamSpec params[] = {
      {"dims", ParamType::integer_list, {}, "a permutation of the dims (negative counts from the end)"}};
  static constexpr OpInfo info{.name = "permute",
                               .call = "permute(a, dims)",
                               .node = "Permute",
                               .file = "layout.hpp",
                               .params = params,
                               .formula = "result[i] = a[j], j[dims[k]] = i[k]",
                               .shapes = "a: any rank r, dims: a permutation of 0..r-1 -> a's sizes permuted"};
  /// The permutation, normalised and checked.
  template <class A, Real T> static std::vector<std::size_t> order(const A& a, const Params<T>& p) {
    const std::vector<long>& dims = p.integer_list("dims");
    const std::string what = detail::call_of("permute", a);
    if (dims.size() != a.shape().rank())
      throw ShapeError(what + ": dims has " + std::to_string(dims.size()) + " entries for " + a.name() + " of rank " +
                       std::to_string(a.shape().rank()) + " (" + shape_string(a.shape()) + ")");
    dim_set(dims, a.shape().rank(), what); // each in range, none twice
    std::vector<std::size_t> out;
    for (long d : dims)
      out.push_back(normalize_dim(d, a.shape().rank(), what));
    return out;
  }
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    Shape out;
    for (std::size_t d : order(in[0], p))
      out.push_back(in[0].shape()[d]);
    return out;
  }
  /// The index map of permuting a tensor of shape s by dims (normalised).
  static StridedMap map(const Shape& s, const std::vector<std::size_t>& dims) {
    StridedMap m;
    const auto strides = s.strides();
    for (std::size_t k = 0; k < dims.size(); ++k) {
      m.out.push_back(s[dims[k]]);
      m.stride[k] = strides[dims[k]];
    }
    return m;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> PermuteOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  return record_layout<PermuteOp>(in, p, std::move(label), map(in[0].shape(), order(in[0], p)));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, PermuteOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> permute(const Var<T>& a, std::vector<long> dims, std::string label = {}) {
  return PermuteOp::apply<T>(operands(a), Params<T>().set("dims", std::move(dims)), std::move(label));
}

/// unsqueeze(a, dim): a new dim of size 1 at `dim`, in [-rank - 1, rank] (torch.unsqueeze).
///   forward  result (flat k) = a (flat k)            VJP  da (flat k) += grad (flat k)
struct UnsqueezeOp {
  static constexpr ParamSpec params[] = {
      {"dim", ParamType::integer, {}, "where the new dim goes, in [-rank - 1, rank]"}};
  static constexpr OpInfo info{.name = "unsqueeze",
                               .call = "unsqueeze(a, dim)",
                               .node = "Unsqueeze",
                               .file = "layout.hpp",
                               .params = params,
                               .formula = "result (flat k) = a (flat k), a size 1 inserted at dim",
                               .shapes = "a: rank r -> rank r + 1"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const Shape& s = in[0].shape();
    const std::size_t d = normalize_dim(p.integer("dim"), s.rank() + 1, detail::call_of("unsqueeze", in[0]));
    if (s.rank() == max_rank)
      throw ShapeError(detail::call_of("unsqueeze", in[0]) + ": the result would have rank " +
                       std::to_string(max_rank + 1));
    Shape out;
    for (std::size_t k = 0; k <= s.rank(); ++k)
      out.push_back(k == d ? 1 : s[k < d ? k : k - 1]);
    return out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> UnsqueezeOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  return record_layout<UnsqueezeOp>(in, p, std::move(label), row_major_map(shape(in, p)));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, UnsqueezeOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> unsqueeze(const Var<T>& a, long dim, std::string label = {}) {
  return UnsqueezeOp::apply<T>(operands(a), Params<T>().set("dim", dim), std::move(label));
}

/// squeeze(a, dim): that dim removed if its size is 1, else a unchanged (torch.squeeze(x, dim)).
///   forward  result (flat k) = a (flat k)            VJP  da (flat k) += grad (flat k)
struct SqueezeOp {
  static constexpr ParamSpec params[] = {{"dim", ParamType::integer, {}, "the dim removed when its size is 1"}};
  static constexpr OpInfo info{.name = "squeeze",
                               .call = "squeeze(a, dim)",
                               .node = "Squeeze",
                               .file = "layout.hpp",
                               .params = params,
                               .formula = "result (flat k) = a (flat k), dim removed when its size is 1",
                               .shapes = "a: rank r -> rank r - 1 (size 1 at dim), else a's shape"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const Shape& s = in[0].shape();
    const std::size_t d = normalize_dim(p.integer("dim"), s.rank(), detail::call_of("squeeze", in[0]));
    if (s[d] != 1) return s;
    Shape out;
    for (std::size_t k = 0; k < s.rank(); ++k)
      if (k != d) out.push_back(s[k]);
    return out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SqueezeOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  return record_layout<SqueezeOp>(in, p, std::move(label), row_major_map(shape(in, p)));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SqueezeOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> squeeze(const Var<T>& a, long dim, std::string label = {}) {
  return SqueezeOp::apply<T>(operands(a), Params<T>().set("dim", dim), std::move(label));
}

/// expand(a, shape): a's size-1 dims repeated to `shape` (torch.expand): new leading dims allowed (sizes >= 1), -1
/// keeps a size, any other change is an error.
///   forward  result[i] = a[i with each repeated dim at 0]     VJP  da = sum_to(grad, a's shape)
struct ExpandOp {
  static constexpr ParamSpec params[] = {
      {"shape", ParamType::integer_list, {}, "the sizes; -1 keeps a size, a size 1 may become any"}};
  static constexpr OpInfo info{.name = "expand",
                               .call = "expand(a, shape)",
                               .node = "Expand",
                               .file = "layout.hpp",
                               .params = params,
                               .formula = "result[i] = a[i, repeated dims at 0]",
                               .shapes = "a: rank r -> shape (rank >= r; a's sizes 1 may grow)"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const std::vector<long>& sizes = p.integer_list("shape");
    const Shape& s = in[0].shape();
    const std::string what = detail::call_of("expand", in[0]);
    if (sizes.size() < s.rank() || sizes.size() > max_rank)
      throw ShapeError(what + ": shape has " + std::to_string(sizes.size()) + " sizes for " + in[0].name() + " of " +
                       shape_string(s) + " (rank " + std::to_string(s.rank()) + "; at most " +
                       std::to_string(max_rank) + ")");
    const std::size_t lead = sizes.size() - s.rank();
    Shape out;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const long want = sizes[k];
      if (k < lead) {
        if (want < 1)
          throw ShapeError(what + ": new leading dim " + std::to_string(k) + " has size " + std::to_string(want) +
                           " (a new dim needs a size >= 1)");
        out.push_back(want);
        continue;
      }
      const Eigen::Index have = s[k - lead];
      if (want == -1 || want == have) {
        out.push_back(have);
      } else if (have == 1 && want >= 1) {
        out.push_back(want);
      } else {
        throw ShapeError(what + ": dim " + std::to_string(k) + " of size " + std::to_string(have) + " cannot become " +
                         std::to_string(want) + " (only a size 1 grows; -1 keeps it)");
      }
    }
    return out;
  }
  /// The index map of expanding a tensor of shape s to shape `out` (which shape() has checked).
  static StridedMap map(const Shape& s, const Shape& out) {
    StridedMap m{out};
    const auto strides = s.strides();
    const std::size_t lead = out.rank() - s.rank();
    for (std::size_t k = lead; k < out.rank(); ++k)
      m.stride[k] = s[k - lead] == 1 ? 0 : strides[k - lead];
    return m;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> ExpandOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  return record_layout<ExpandOp>(in, p, std::move(label), map(in[0].shape(), shape(in, p)));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, ExpandOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> expand(const Var<T>& a, std::vector<long> shape, std::string label = {}) {
  return ExpandOp::apply<T>(operands(a), Params<T>().set("shape", std::move(shape)), std::move(label));
}

/// slice(a, dim, start, end, step): Python's a[..., start:end:step, ...] along dim (torch's narrowing slice): start
/// and end negative from the end, then clamped to [0, size]; step >= 1; an empty result is an error.
///   forward  result[i] = a[i with i[dim] -> start + step i[dim]]      VJP  da at those entries += grad[i]
struct SliceOp {
  static constexpr ParamSpec params[] = {{"dim", ParamType::integer, {}, "the dim sliced"},
                                         {"start", ParamType::integer, {}, "the first index (negative from the end)"},
                                         {"end", ParamType::integer, {}, "one past the last (negative from the end)"},
                                         {"step", ParamType::integer, "1", "the stride, >= 1"}};
  static constexpr OpInfo info{.name = "slice",
                               .call = "slice(a, dim, start, end, step)",
                               .node = "Slice",
                               .file = "layout.hpp",
                               .params = params,
                               .formula = "result[.., i, ..] = a[.., start + step i, ..] along dim",
                               .shapes = "a: any rank >= 1 -> a's, ceil((end - start) / step) along dim"};
  struct Range {
    std::size_t dim;
    Eigen::Index start, count, step;
  };
  template <class A, Real T> static Range range(const A& a, const Params<T>& p) {
    const Shape& s = a.shape();
    const std::string what = detail::call_of("slice", a);
    const std::size_t d = normalize_dim(p.integer("dim"), s.rank(), what);
    const long step = p.integer("step");
    if (step < 1) throw ShapeError(what + ": step " + std::to_string(step) + " (a step is >= 1)");
    const long n = s[d];
    const auto clamp = [n](long i) { return std::clamp(i < 0 ? i + n : i, 0L, n); };
    const long start = clamp(p.integer("start")), end = clamp(p.integer("end"));
    const long count = end > start ? (end - start - 1) / step + 1 : 0;
    if (count == 0)
      throw ShapeError(what + ": start " + std::to_string(p.integer("start")) + ", end " +
                       std::to_string(p.integer("end")) + " along dim " + std::to_string(p.integer("dim")) +
                       " of size " + std::to_string(n) + " select nothing (an empty result)");
    // A single entry takes any step; as 1 its stride cannot overflow (step * stride for a step near LONG_MAX).
    return {d, start, count, count == 1 ? 1 : step};
  }
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const Range r = range(in[0], p);
    Shape out = in[0].shape();
    out[r.dim] = r.count;
    return out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SliceOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  const Range r = range(in[0], p);
  StridedMap map{shape(in, p)};
  map.stride = in[0].shape().strides();
  map.offset = r.start * map.stride[r.dim];
  map.stride[r.dim] *= r.step;
  return record_layout<SliceOp>(in, p, std::move(label), map);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SliceOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> slice(const Var<T>& a, long dim, long start, long end, long step = 1, std::string label = {}) {
  return SliceOp::apply<T>(
      operands(a), Params<T>().set("dim", dim).set("start", start).set("end", end).set("step", step), std::move(label));
}

/// select(a, dim, index): the entries at `index` along dim, that dim removed (a[:, i]); a negative index counts
/// from the end.
///   forward  result[i] = a[i with index inserted at dim]      VJP  da at those entries += grad[i]
struct SelectOp {
  static constexpr ParamSpec params[] = {
      {"dim", ParamType::integer, {}, "the dim indexed (removed)"},
      {"index", ParamType::integer, {}, "the index along it (negative from the end)"}};
  static constexpr OpInfo info{.name = "select",
                               .call = "select(a, dim, index)",
                               .node = "Select",
                               .file = "layout.hpp",
                               .params = params,
                               .formula = "result[.., ..] = a[.., index, ..] along dim",
                               .shapes = "a: rank r >= 1 -> rank r - 1"};
  template <class A, Real T> static std::pair<std::size_t, Eigen::Index> at(const A& a, const Params<T>& p) {
    const Shape& s = a.shape();
    const std::string what = detail::call_of("select", a);
    const std::size_t d = normalize_dim(p.integer("dim"), s.rank(), what);
    const long index = p.integer("index"), n = s[d];
    if (index < -n || index >= n)
      throw ShapeError(what + ": index " + std::to_string(index) + " is out of range for dim " +
                       std::to_string(p.integer("dim")) + " of size " + std::to_string(n));
    return {d, index < 0 ? index + n : index};
  }
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const std::size_t d = at(in[0], p).first;
    Shape out;
    for (std::size_t k = 0; k < in[0].shape().rank(); ++k)
      if (k != d) out.push_back(in[0].shape()[k]);
    return out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> SelectOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  const auto [d, index] = at(in[0], p);
  StridedMap map{shape(in, p)};
  const auto strides = in[0].shape().strides();
  for (std::size_t k = 0, j = 0; k < in[0].shape().rank(); ++k)
    if (k != d) map.stride[j++] = strides[k];
  map.offset = index * strides[d];
  return record_layout<SelectOp>(in, p, std::move(label), map);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, SelectOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> select(const Var<T>& a, long dim, long index, std::string label = {}) {
  return SelectOp::apply<T>(operands(a), Params<T>().set("dim", dim).set("index", index), std::move(label));
}

/// Records a joining layout op (cat, stack): operand k's entry at position o lands at maps[k]'s position for o in
/// the result (each map has operand k's shape as its `out`; together they cover the result once).
///   forward  result[map_k(o)] = a_k[o]       VJP  da_k[o] += grad[map_k(o)]
template <class Op, Real T> Var<T> record_join(std::span<const Var<T>> in, const Params<T>& p, std::string label,
                                               const Shape& out, std::vector<StridedMap> maps) {
  Tape<T>& tape = common_tape(Op::info, in);
  tape.check_entries(out.rows(), out.cols(),
                     [&] { return std::string(Op::info.name) + "(" + in[0].name() + ", ...): the result"; });
  Matrix<T> result = tape.buffer(out);
  for (std::size_t k = 0; k < in.size(); ++k) {
    const T* a = in[k].value().data();
    maps[k].run([&](Eigen::Index o, Eigen::Index at) { result.data()[at] = a[o]; });
  }
  return tape.template record<Op>(
      in, out, std::move(result),
      [maps = std::move(maps)](Backprop<T>& bp) {
        const T* g = bp.grad().data();
        for (std::size_t k = 0; k < maps.size(); ++k)
          bp.accumulate_with(
              k, [&](Matrix<T>& da) { maps[k].run([&](Eigen::Index o, Eigen::Index at) { da.data()[o] = g[at]; }); });
      },
      std::move(label), p);
}

/// cat(a, b, ...): the operands joined along dim (torch.cat): equal shapes except along dim.
///   forward  result[.., offset_k + i, ..] = a_k[.., i, ..]      VJP  da_k = the matching block of grad
struct CatOp {
  static constexpr ParamSpec params[] = {{"dim", ParamType::integer, {}, "the dim joined along"}};
  static constexpr OpInfo info{.name = "cat",
                               .call = "cat({a, b, ...}, dim)",
                               .node = "Cat",
                               .file = "layout.hpp",
                               .arity = 1,
                               .variadic = true,
                               .params = params,
                               .formula = "result[.., offset_k + i, ..] = a_k[.., i, ..] along dim",
                               .shapes = "a_k: equal but along dim -> their sizes along dim added"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    if (in.empty()) throw ShapeError("cat: needs at least one operand");
    const Shape& s0 = in[0].shape();
    const std::size_t d = normalize_dim(p.integer("dim"), s0.rank(), "cat(" + in[0].name() + ", ...)");
    Shape out = s0;
    out[d] = 0;
    for (const A& a : in) {
      bool fits = a.shape().rank() == s0.rank();
      for (std::size_t k = 0; fits && k < s0.rank(); ++k)
        fits = k == d || a.shape()[k] == s0[k];
      if (!fits)
        shape_mismatch("cat", in[0], a,
                       "every operand needs the same shape except along dim " + std::to_string(p.integer("dim")));
      out[d] += a.shape()[d];
    }
    return out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> CatOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  const Shape out = shape(in, p);
  const std::size_t d = normalize_dim(p.integer("dim"), out.rank(), "cat");
  const auto strides = out.strides();
  std::vector<StridedMap> maps;
  Eigen::Index along = 0;
  for (const Var<T>& a : in) {
    StridedMap m{a.shape(), along * strides[d], strides};
    maps.push_back(m);
    along += a.shape()[d];
  }
  return record_join<CatOp>(in, p, std::move(label), out, std::move(maps));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, CatOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> cat(const std::vector<Var<T>>& in, long dim, std::string label = {}) {
  return CatOp::apply<T>(std::span<const Var<T>>(in), Params<T>().set("dim", dim), std::move(label));
}

/// stack(a, b, ...): operands of equal shape joined along a new dim, in [-rank - 1, rank] (torch.stack).
///   forward  result[.., k, ..] = a_k      VJP  da_k = grad[.., k, ..]
struct StackOp {
  static constexpr ParamSpec params[] = {
      {"dim", ParamType::integer, {}, "where the new dim goes, in [-rank - 1, rank]"}};
  static constexpr OpInfo info{.name = "stack",
                               .call = "stack({a, b, ...}, dim)",
                               .node = "Stack",
                               .file = "layout.hpp",
                               .arity = 1,
                               .variadic = true,
                               .params = params,
                               .formula = "result[.., k, ..] = a_k, k along the new dim",
                               .shapes = "a_k: equal shapes, rank r -> rank r + 1"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    if (in.empty()) throw ShapeError("stack: needs at least one operand");
    const Shape& s0 = in[0].shape();
    const std::size_t d = normalize_dim(p.integer("dim"), s0.rank() + 1, "stack(" + in[0].name() + ", ...)");
    for (const A& a : in)
      if (!(a.shape() == s0)) shape_mismatch("stack", in[0], a, "every operand needs the same shape");
    if (s0.rank() == max_rank) throw ShapeError("stack: the result would have rank " + std::to_string(max_rank + 1));
    Shape out;
    for (std::size_t k = 0; k <= s0.rank(); ++k)
      out.push_back(k == d ? static_cast<Eigen::Index>(in.size()) : s0[k < d ? k : k - 1]);
    return out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> StackOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  common_tape(info, in);
  const Shape out = shape(in, p);
  const std::size_t d = normalize_dim(p.integer("dim"), out.rank(), "stack");
  const auto strides = out.strides();
  std::vector<StridedMap> maps;
  for (std::size_t k = 0; k < in.size(); ++k) {
    StridedMap m{in[k].shape(), static_cast<Eigen::Index>(k) * strides[d]};
    for (std::size_t j = 0, i = 0; j < out.rank(); ++j)
      if (j != d) m.stride[i++] = strides[j];
    maps.push_back(m);
  }
  return record_join<StackOp>(in, p, std::move(label), out, std::move(maps));
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, StackOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> stack(const std::vector<Var<T>>& in, long dim, std::string label = {}) {
  return StackOp::apply<T>(std::span<const Var<T>>(in), Params<T>().set("dim", dim), std::move(label));
}

} // namespace tapegrad
