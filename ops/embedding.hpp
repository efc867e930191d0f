#pragma once
#include "../autodiff/operands.hpp"

namespace tapegrad {

/// embedding(weight, indices): rows of a table looked up (torch.nn.functional.embedding).
///                                   weight: V x D real, indices: int of any shape, result: indices' shape + (D)
///   forward  result[p][j] = weight[indices[p]][j]
///   VJP      dweight[v][j] += sum over the positions p holding v of grad[p][j]   (repeated indices ADD)
/// An index outside [0, V) is an error naming its position.
struct EmbeddingOp {
  static constexpr ParamSpec params[] = {
      {"indices", ParamType::constant, {}, "the int indices (a graph file's second argument)", false}};
  static constexpr ConstOperand constants[] = {{.position = 1, .param = "indices", .boolean = false}};
  static constexpr OpInfo info{.name = "embedding",
                               .call = "embedding(weight, indices)",
                               .node = "Embedding",
                               .file = "embedding.hpp",
                               .params = params,
                               .formula = "result[p][j] = weight[indices[p]][j]",
                               .shapes = "weight: V x D, indices (int): any shape -> indices' shape x D",
                               .const_operands = constants};
  template <class A, Real T> static Shape shape(std::span<const A> in, const Params<T>& p) {
    const A& w = in[0];
    const Tensor<long>& idx = p.ints("indices");
    const std::string what = "embedding(" + w.name() + ")";
    if (w.shape().rank() != 2)
      throw ShapeError(what + ": the weight " + w.name() + " is " + shape_string(w.shape()) +
                       "; it is a table of rank 2 (V x D)");
    const Eigen::Index V = w.shape()[0];
    for (Eigen::Index e = 0; e < idx.numel(); ++e)
      if (idx[e] < 0 || idx[e] >= V)
        throw ShapeError(what + ": index " + std::to_string(idx[e]) + " at " + entry_string(idx.shape(), e) +
                         " is outside [0, " + std::to_string(V) + ") (" + w.name() + " has " + std::to_string(V) +
                         " rows)");
    Shape out = idx.shape();
    if (out.rank() == max_rank) throw ShapeError(what + ": the result would have rank " + std::to_string(max_rank + 1));
    out.push_back(w.shape()[1]);
    return out;
  }
  template <Real T> static Var<T> apply(std::span<const Var<T>> in, const Params<T>& p, std::string label);
};

template <Real T> Var<T> EmbeddingOp::apply(std::span<const Var<T>> in, const Params<T>& p, std::string label) {
  Tape<T>& tape = common_tape(info, in);
  const Shape s = shape(in, p);
  const std::shared_ptr<const Tensor<long>> idx = p.ints_shared("indices");
  const Matrix<T>& w = in[0].value();
  Matrix<T> result = tape.buffer(s);
  for (Eigen::Index e = 0; e < idx->numel(); ++e)
    result.row(e) = w.row((*idx)[e]); // the result's view has one row per position
  return tape.template record<EmbeddingOp>(
      in, s, std::move(result),
      [idx](Backprop<T>& bp) {
        bp.accumulate_with(0, [&](Matrix<T>& dw) {
          dw.setZero();
          const Matrix<T>& g = bp.grad();
          for (Eigen::Index e = 0; e < idx->numel(); ++e)
            dw.row((*idx)[e]) += g.row(e); // a row looked up twice receives both
        });
      },
      std::move(label), p);
}
#define TAPEGRAD_INSTANCE(prefix, T) TAPEGRAD_OP_INSTANCE(prefix, EmbeddingOp, T)
#include "../autodiff/instances.hpp"

template <Real T> Var<T> embedding(const Var<T>& weight, const Tensor<long>& indices, std::string label = {}) {
  return EmbeddingOp::apply<T>(
      operands(weight), Params<T>().set("indices", std::make_shared<const Tensor<long>>(indices)), std::move(label));
}

} // namespace tapegrad
