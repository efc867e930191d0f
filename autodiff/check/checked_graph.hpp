#pragma once
// A graph function as the driver takes it: the user's callable, generic in its scalar, held once and callable
// on the three tapes a check records it on (the engine's Tape<T>, the reference's Tape<R>, and Tape<Dual<T>>
// for forward mode). The driver's code then depends on T and R only, not on the graph's type: it is
// compiled once per pair however many graphs are checked, and ahead of time in our own builds
// (check_gradient.hpp, autodiff/instances.hpp).

#include "../dual.hpp"
#include "../tape.hpp"

#include <concepts>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace tapegrad {

template <Real T, Real R> class CheckedGraph {
public:
  /// `f(Tape<U>&, const std::vector<Var<U>>&) -> Var<U>` for U = T, R and Dual<T>; kept (moved) once and
  /// shared by the three entry points. Calls are concurrent when `f`'s are safe to make concurrently.
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, CheckedGraph> &&
           std::invocable<const F&, Tape<T>&, const std::vector<Var<T>>&> &&
           std::invocable<const F&, Tape<R>&, const std::vector<Var<R>>&> &&
           std::invocable<const F&, Tape<Dual<T>>&, const std::vector<Var<Dual<T>>>&>) explicit CheckedGraph(F f) {
    const auto held = std::make_shared<const F>(std::move(f));
    engine_ = [held](Tape<T>& t, const std::vector<Var<T>>& in) -> Var<T> { return (*held)(t, in); };
    reference_ = [held](Tape<R>& t, const std::vector<Var<R>>& in) -> Var<R> { return (*held)(t, in); };
    dual_ = [held](Tape<Dual<T>>& t, const std::vector<Var<Dual<T>>>& in) -> Var<Dual<T>> { return (*held)(t, in); };
  }

  template <Real U> Var<U> operator()(Tape<U>& tape, const std::vector<Var<U>>& in) const {
    if constexpr (std::same_as<U, T>)
      return engine_(tape, in);
    else if constexpr (std::same_as<U, R>)
      return reference_(tape, in);
    else {
      static_assert(std::same_as<U, Dual<T>>, "a checked graph is recorded on Tape<T>, Tape<R> and Tape<Dual<T>> only");
      return dual_(tape, in);
    }
  }

private:
  template <Real U> using Function = std::function<Var<U>(Tape<U>&, const std::vector<Var<U>>&)>;
  Function<T> engine_;
  Function<R> reference_;
  Function<Dual<T>> dual_;
};

} // namespace tapegrad
