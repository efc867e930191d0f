#pragma once
// conv1d and conv2d (torch.nn.functional.conv1d / conv2d with groups 1): one implementation on two spatial dims,
// conv1d being the case of height 1 (a kernel of height 1, stride, padding and dilation 1 along it).
#include "../autodiff/operands.hpp"

#include <array>
#include <string>
#include <vector>

namespace tapegrad {

/// The parameters of conv1d and conv2d (ConvParams<1>, ConvParams<2>): each an integer or a list of one entry per
/// spatial dim (in C++ a list of one is used for every spatial dim).
template <std::size_t Spatial> struct ConvParams {
  static constexpr ParamSpec specs[] = {
      {"stride", ParamType::dims, {}, "the step between windows, >= 1 (absent: 1)", true, true, {}, Spatial},
      {"padding", ParamType::dims, {}, "zeros added on each side, >= 0 (absent: 0)", true, true, {}, Spatial},
      {"dilation", ParamType::dims, {}, "the spacing of kernel entries, >= 1 (absent: 1)", true, true, {}, Spatial}};
};

namespace detail {

/// Sizes of one convolution, as two spatial dims (height first; conv1d's height is 1).
struct ConvGeometry {
  Eigen::Index batch = 1, channels = 0, out_channels = 0;
  std::array<Eigen::Index, 2> in{}, kernel{}, out{}; ///< per spatial dim: input, kernel and result sizes
  std::array<long, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  bool biased = false;
  Shape result;

  /// Reads and checks the shapes and parameters of conv1d (spatial 1) or conv2d (spatial 2), else a ShapeError
  /// naming the op, the operands, their shapes and the parameter that does not fit.
  template <class A, Real T>
  static ConvGeometry of(std::string_view op, std::size_t spatial, std::span<const A> in, const Params<T>& p) {
    const A &x = in[0], &w = in[1];
    const Shape &xs = x.shape(), &ws = w.shape();
    const std::string what = std::string(op) + "(" + x.name() + ", " + w.name() + ")";
    const std::string dims = spatial == 1 ? "(N, C, L) or (C, L)" : "(N, C, H, W) or (C, H, W)";
    if (xs.rank() != spatial + 2 && xs.rank() != spatial + 1)
      throw ShapeError(what + ": " + x.name() + " is " + shape_string(xs) + "; it takes " + dims);
    if (ws.rank() != spatial + 2)
      throw ShapeError(what + ": " + w.name() + " is " + shape_string(ws) + "; the weight is " +
                       (spatial == 1 ? "(O, C, k)" : "(O, C, kh, kw)"));
    ConvGeometry g;
    const bool batched = xs.rank() == spatial + 2;
    const std::size_t lead = batched ? 1 : 0; // the dim of C in x
    g.batch = batched ? xs[0] : 1;
    g.channels = xs[lead];
    g.out_channels = ws[0];
    if (ws[1] != g.channels)
      throw ShapeError(what + ": " + x.name() + " " + shape_string(xs) + " has " + std::to_string(g.channels) +
                       " channels but the weight " + w.name() + " " + shape_string(ws) + " takes " +
                       std::to_string(ws[1]));
    if (in.size() > 2) {
      g.biased = true;
      if (in[2].shape() != Shape{g.out_channels})
        throw ShapeError(what + ": the bias " + in[2].name() + " is " + shape_string(in[2].shape()) + "; it must be [" +
                         std::to_string(g.out_channels) + "], one per output channel");
    }
    const auto read = [&](std::string_view name, long absent, long least) {
      std::array<long, 2> v{absent, absent}; // conv1d's height keeps the absent value: stride 1, padding 0, ...
      if (!p.has(name)) return v;
      const std::vector<long>& list = p.dims(name);
      if (list.empty()) throw ShapeError(what + ": " + std::string(name) + " is an empty list");
      if (list.size() > spatial)
        throw ShapeError(what + ": " + std::string(name) + " has " + std::to_string(list.size()) + " entries; " +
                         std::string(op) + " takes " +
                         (spatial == 1 ? "an integer or a list of one" : "an integer or a pair"));
      for (std::size_t k = 0; k < spatial; ++k) {
        const long e = list[list.size() == 1 ? 0 : k];
        if (e < least)
          throw ShapeError(what + ": " + std::string(name) + " " + std::to_string(e) +
                           "; it must be >= " + std::to_string(least));
        v[2 - spatial + k] = e;
      }
      return v;
    };
    g.stride = read("stride", 1, 1);
    g.padding = read("padding", 0, 0);
    g.dilation = read("dilation", 1, 1);
    g.result = batched ? Shape{g.batch, g.out_channels} : Shape{g.out_channels};
    for (std::size_t k = 0; k < 2; ++k) {
      const bool given = k >= 2 - spatial;
      g.in[k] = given ? xs[lead + 1 + k - (2 - spatial)] : 1;
      g.kernel[k] = given ? ws[2 + k - (2 - spatial)] : 1;
      long span = 0, room = 0; // dilation (kernel - 1) + 1 and in + 2 padding - span, refused where they overflow
      if (__builtin_mul_overflow(g.dilation[k], static_cast<long>(g.kernel[k]) - 1, &span) ||
          __builtin_add_overflow(span, 1L, &span) || __builtin_mul_overflow(g.padding[k], 2L, &room) ||
          __builtin_add_overflow(room, static_cast<long>(g.in[k]), &room) || __builtin_sub_overflow(room, span, &room))
        throw LimitError(what + ": padding " + std::to_string(g.padding[k]) + " and dilation " +
                         std::to_string(g.dilation[k]) + " give sizes beyond 2^63");
      if (room < 0)
        throw ShapeError(what + ": the kernel spans " + std::to_string(span) + " entries (dilation included) but " +
                         x.name() + " " + shape_string(xs) + " has " + std::to_string(g.in[k]) + " along spatial dim " +
                         std::to_string(k - (2 - spatial)) + " with padding " + std::to_string(g.padding[k]) +
                         ": the result would be empty");
      g.out[k] = room / g.stride[k] + 1;
      if (given) g.result.push_back(g.out[k]);
    }
    return g;
  }

  /// f(x_flat, w_flat, out_flat) for every product the convolution adds (positions in the padding skipped).
  template <class F> void each_product(F&& f) const {
    for (Eigen::Index n = 0; n < batch; ++n)
      for (Eigen::Index o = 0; o < out_channels; ++o)
        for (Eigen::Index y = 0; y < out[0]; ++y)
          for (Eigen::Index z = 0; z < out[1]; ++z) {
            const Eigen::Index r = ((n * out_channels + o) * out[0] + y) * out[1] + z;
            for (Eigen::Index c = 0; c < channels; ++c)
              for (Eigen::Index i = 0; i < kernel[0]; ++i) {
                const Eigen::Index iy = y * stride[0] - padding[0] + i * dilation[0];
                if (iy < 0 || iy >= in[0]) continue;
                for (Eigen::Index j = 0; j < kernel[1]; ++j) {
                  const Eigen::Index ix = z * stride[1] - padding[1] + j * dilation[1];
                  if (ix < 0 || ix >= in[1]) continue;
                  f(((n * channels + c) * in[0] + iy) * in[1] + ix,
                    ((o * channels + c) * kernel[0] + i) * kernel[1] + j, r);
                }
              }
          }
  }
  /// The output channel of result entry r.
  Eigen::Index channel_of(Eigen::Index r) const { return (r / (out[0] * out[1])) % out_channels; }
};

/// Records conv1d or conv2d (Op) on x, w and the optional bias b.
template <class Op, Real T>
Var<T> record_conv(std::span<const Var<T>> in, const Params<T>& p, std::string label, std::size_t spatial) {
  Tape<T>& tape = common_tape(Op::info, in);
  const ConvGeometry geo = ConvGeometry::of(Op::info.name, spatial, in, p);
  Matrix<T> result = tape.buffer(geo.result);
  T* out = result.data();
  for (Eigen::Index r = 0; r < geo.result.numel(); ++r)
    out[r] = geo.biased ? in[2].value().data()[geo.channel_of(r)] : T(0);
  const T *x = in[0].value().data(), *w = in[1].value().data();
  geo.each_product([&](Eigen::Index xi, Eigen::Index wi, Eigen::Index r) { out[r] += w[wi] * x[xi]; });
  return tape.template record<Op>(
      in, geo.result, std::move(result),
      [geo](Backprop<T>& bp) {
        const T *x = bp.input(0).data(), *w = bp.input(1).data(), *g = bp.grad().data();
        bp.accumulate_with(0, [&](Matrix<T>& dx) {
          dx.setZero();
          geo.each_product([&](Eigen::Index xi, Eigen::Index wi, Eigen::Index r) { dx.data()[xi] += g[r] * w[wi]; });
        });
        bp.accumulate_with(1, [&](Matrix<T>& dw) {
          dw.setZero();
          geo.each_product([&](Eigen::Index xi, Eigen::Index wi, Eigen::Index r) { dw.data()[wi] += g[r] * x[xi]; });
        });
        if (geo.biased)
          bp.accumulate_with(2, [&](Matrix<T>& db) {
            db.setZero();
            for (Eigen::Index r = 0; r < geo.result.numel(); ++r)
              db.data()[geo.channel_of(r)] += g[r];
          });
      },
      std::move(label), p);
}

} // namespace detail

/// conv2d(x, w, b): torch.nn.functional.conv2d with groups 1, zero padding.
///   forward  result[n][o][y][z] = b[o] + sum_{c,i,j} w[o][c][i][j] x[n][c][y s0 - p0 + i d0][z s1 - p1 + j d1]
///            (entries outside x are the padding's zeros); x (N, C, H, W) or (C, H, W), w (O, C, kh, kw), b (O)
///   VJP      dx[n][c][..] += grad[n][o][y][z] w[o][c][i][j] and dw[o][c][i][j] += grad[n][o][y][z] x[n][c][..] for
///            every product above; db[o] += sum of grad[n][o][y][z]
struct Conv2dOp {
  static constexpr OpInfo info{.name = "conv2d",
                               .call = "conv2d(x, w, b, options)",
                               .node = "Conv2d",
                               .file = "conv.hpp",
                               .arity = 2,
                               .optional_operands = 1,
                               .params = ConvParams<2>::specs,
                               .formula = "result[n][o][y][z] = b[o] + sum_{c,i,j} w[o][c][i][j] x[n][c][y s0 - p0 + "
                                          "i d0][z s1 - p1 + j d1]",
                               .shapes = "x: (N, C, H, W) or (C, H, W), w: (O, C, kh, kw), b: (O) -> (N, O, H', W') "
                                         "or (O, H', W')"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return detail::ConvGeometry::of("conv2d", 2, in, p).result;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> Conv2dOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return detail::record_conv<Conv2dOp>(in, p, std::move(label), 2);
}

/// conv1d(x, w, b): torch.nn.functional.conv1d with groups 1, zero padding.
///   forward  result[n][o][z] = b[o] + sum_{c,j} w[o][c][j] x[n][c][z s - p + j d]
///            (entries outside x are the padding's zeros); x (N, C, L) or (C, L), w (O, C, k), b (O)
///   VJP      dx[n][c][z s - p + j d] += grad[n][o][z] w[o][c][j], dw[o][c][j] += grad[n][o][z] x[n][c][..],
///            db[o] += sum of grad[n][o][z]
struct Conv1dOp {
  static constexpr OpInfo info{.name = "conv1d",
                               .call = "conv1d(x, w, b, options)",
                               .node = "Conv1d",
                               .file = "conv.hpp",
                               .arity = 2,
                               .optional_operands = 1,
                               .params = ConvParams<1>::specs,
                               .formula = "result[n][o][z] = b[o] + sum_{c,j} w[o][c][j] x[n][c][z s - p + j d]",
                               .shapes = "x: (N, C, L) or (C, L), w: (O, C, k), b: (O) -> (N, O, L') or (O, L')"};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    return detail::ConvGeometry::of("conv1d", 1, in, p).result;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> Conv1dOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  return detail::record_conv<Conv1dOp>(in, p, std::move(label), 1);
}

#define TAPEGRAD_INSTANCE(prefix, T)                                                                                   \
  TAPEGRAD_OP_INSTANCE(prefix, Conv2dOp, T)                                                                            \
  TAPEGRAD_OP_INSTANCE(prefix, Conv1dOp, T)
#include "../autodiff/instances.hpp"

/// Stride, padding and dilation of a C++ call: per spatial dim (a list of one is used for every dim), as torch.
struct ConvOptions {
  std::vector<long> stride = {1}, padding = {0}, dilation = {1};
};

namespace detail {
template <Real T> Params<T> conv_params_of(const ConvOptions& o) {
  return Params<T>().set("stride", o.stride).set("padding", o.padding).set("dilation", o.dilation);
}
} // namespace detail

template <Real T>
Var<T> conv2d(const Var<T>& x, const Var<T>& w, const Var<T>& b, const ConvOptions& o = {}, std::string label = {}) {
  return Conv2dOp::apply<T>(operands(x, w, b), detail::conv_params_of<T>(o), std::move(label));
}
template <Real T> Var<T> conv2d(const Var<T>& x, const Var<T>& w, const ConvOptions& o = {}, std::string label = {}) {
  return Conv2dOp::apply<T>(operands(x, w), detail::conv_params_of<T>(o), std::move(label));
}
template <Real T>
Var<T> conv1d(const Var<T>& x, const Var<T>& w, const Var<T>& b, const ConvOptions& o = {}, std::string label = {}) {
  return Conv1dOp::apply<T>(operands(x, w, b), detail::conv_params_of<T>(o), std::move(label));
}
template <Real T> Var<T> conv1d(const Var<T>& x, const Var<T>& w, const ConvOptions& o = {}, std::string label = {}) {
  return Conv1dOp::apply<T>(operands(x, w), detail::conv_params_of<T>(o), std::move(label));
}

} // namespace tapegrad
