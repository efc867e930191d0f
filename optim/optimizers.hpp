#pragma once
// Optimisers over tape parameters. Parameters live outside the tape (a tape is re-recorded every step);
// each step records them as inputs, runs backward, and hands the optimiser the Vars whose gradients it reads:
//
//   Parameters<double> params;  params.add("W", W0);
//   Adam<double> adam(params, {.learning_rate = 0.01});
//   for (...) { Tape<double> tape; auto vars = params.record(tape); tape.backward(loss(tape, vars));
//               adam.step(params, vars); }

#include "../autodiff/tape.hpp"

#include <string>
#include <vector>

namespace tapegrad {

/// Named matrices that training updates in place.
template <Real T> class Parameters {
public:
  void add(std::string name, Matrix<T> value) {
    for (const std::string& n : names_)
      if (n == name) throw UsageError("Parameters::add: '" + name + "' is already a parameter");
    names_.push_back(std::move(name));
    values_.push_back(std::move(value));
  }
  std::size_t size() const { return values_.size(); }
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<Matrix<T>>& values() const { return values_; }
  Matrix<T>& value(std::size_t k) { return values_.at(k); }

  /// Every parameter as a labelled input of `tape`, in order.
  std::vector<Var<T>> record(Tape<T>& tape) const {
    std::vector<Var<T>> vars;
    for (std::size_t k = 0; k < values_.size(); ++k)
      vars.push_back(tape.input(values_[k], names_[k]));
    return vars;
  }

  /// The gradients held by `vars` (as record() made them), after backward; shapes checked against ours.
  std::vector<Matrix<T>> gradients(const std::string& who, const std::vector<Var<T>>& vars) const {
    if (vars.size() != values_.size())
      throw UsageError(who + ": " + std::to_string(vars.size()) + " Vars for " + std::to_string(values_.size()) +
                       " parameters; pass what Parameters::record returned");
    std::vector<Matrix<T>> grads;
    for (std::size_t k = 0; k < vars.size(); ++k) {
      const Matrix<T>& g = vars[k].grad();
      if (g.rows() != values_[k].rows() || g.cols() != values_[k].cols())
        throw ShapeError(who + ": parameter " + names_[k] + " is " +
                         shape_string(values_[k].rows(), values_[k].cols()) + " but the gradient of " + vars[k].name() +
                         " is " + shape_string(g.rows(), g.cols()));
      grads.push_back(g);
    }
    return grads;
  }

private:
  std::vector<std::string> names_;
  std::vector<Matrix<T>> values_;
};

/// Stochastic gradient descent with momentum (PyTorch's form, no dampening):
///   v <- momentum v + g,   p <- p - learning_rate v.
template <Real T> class Sgd {
public:
  struct Options {
    T learning_rate;
    T momentum = T(0);
  };
  Sgd(const Parameters<T>& params, Options options) : options_(options) {
    for (const Matrix<T>& p : params.values())
      velocity_.push_back(Matrix<T>::Zero(p.rows(), p.cols()));
  }
  void step(Parameters<T>& params, const std::vector<Var<T>>& vars) {
    const std::vector<Matrix<T>> grads = params.gradients("Sgd::step", vars);
    for (std::size_t k = 0; k < grads.size(); ++k) {
      velocity_.at(k) = options_.momentum * velocity_[k] + grads[k];
      params.value(k) -= options_.learning_rate * velocity_[k];
    }
  }

private:
  Options options_;
  std::vector<Matrix<T>> velocity_;
};

/// Adam (Kingma and Ba), bias-corrected:
///   m <- b1 m + (1 - b1) g,   v <- b2 v + (1 - b2) g^2,
///   p <- p - learning_rate (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
/// The defaults b1 = 9/10, b2 = 999/1000, eps = 1e-8 are made in T.
template <Real T> class Adam {
public:
  struct Options {
    T learning_rate;
    T beta1 = T(9) / T(10);
    T beta2 = T(999) / T(1000);
    T eps = T(1) / T(100000000);
  };
  Adam(const Parameters<T>& params, Options options) : options_(options) {
    for (const Matrix<T>& p : params.values()) {
      m_.push_back(Matrix<T>::Zero(p.rows(), p.cols()));
      v_.push_back(Matrix<T>::Zero(p.rows(), p.cols()));
    }
  }
  void step(Parameters<T>& params, const std::vector<Var<T>>& vars) {
    using std::pow;
    using std::sqrt;
    const std::vector<Matrix<T>> grads = params.gradients("Adam::step", vars);
    ++t_;
    const T c1 = T(1) - pow(options_.beta1, t_), c2 = T(1) - pow(options_.beta2, t_);
    for (std::size_t k = 0; k < grads.size(); ++k) {
      Matrix<T>&m = m_.at(k), &v = v_.at(k), &p = params.value(k);
      for (Eigen::Index i = 0; i < p.size(); ++i) {
        const T g = grads[k].data()[i];
        m.data()[i] = options_.beta1 * m.data()[i] + (T(1) - options_.beta1) * g;
        v.data()[i] = options_.beta2 * v.data()[i] + (T(1) - options_.beta2) * g * g;
        p.data()[i] -= options_.learning_rate * (m.data()[i] / c1) / (sqrt(v.data()[i] / c2) + options_.eps);
      }
    }
  }

private:
  Options options_;
  std::vector<Matrix<T>> m_, v_;
  long t_ = 0;
};

} // namespace tapegrad
