// The same attention (forward + gradient of J with respect to X, Wq, Wk, Wv; D = d = r = 64) on ADOL-C's
// scalar tape: every multiply-add of every product is one taped operation. Built only when ADOL-C
// (libadolc-dev) is found; bench/compare runs it beside ours.
#include <tapegrad/graph/verification/attention_check.hpp>

#include <adolc/adolc.h>
#include <benchmark/benchmark.h>

#include <vector>

namespace {

void BM_AdolcAttention(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0)), D = 64;
  const tapegrad::AttentionInputs<double> in = tapegrad::random_attention<double>(42, n, D, D, D); // seed 42
  std::vector<double> x;
  for (const auto* m : {&in.X, &in.Wq, &in.Wk, &in.Wv})
    x.insert(x.end(), m->data(), m->data() + m->size());
  std::vector<double> grad(x.size());
  const short tag = 1;
  for (auto _ : state) {
    trace_on(tag);
    std::vector<adouble> a(x.size());
    for (std::size_t k = 0; k < x.size(); ++k)
      a[k] <<= x[k];
    const auto X = [&](int i, int b) -> adouble& { return a[static_cast<std::size_t>(i * D + b)]; };
    const auto W = [&](int w, int b, int c) -> adouble& {
      return a[static_cast<std::size_t>(n * D + w * D * D + b * D + c)];
    };
    std::vector<adouble> Q(n * D), K(n * D), V(n * D), S(n * n), O(n * D);
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < D; ++c) {
        adouble q = 0, k = 0, v = 0;
        for (int b = 0; b < D; ++b) {
          q += X(i, b) * W(0, b, c);
          k += X(i, b) * W(1, b, c);
          v += X(i, b) * W(2, b, c);
        }
        Q[i * D + c] = q;
        K[i * D + c] = k;
        V[i * D + c] = v;
      }
    const double scale = 1 / std::sqrt(static_cast<double>(D));
    for (int i = 0; i < n; ++i) {
      adouble mx = -1e300, z = 0;
      for (int j = 0; j < n; ++j) {
        adouble s = 0;
        for (int c = 0; c < D; ++c)
          s += Q[i * D + c] * K[j * D + c];
        S[i * n + j] = s * scale;
        mx = fmax(mx, S[i * n + j]);
      }
      for (int j = 0; j < n; ++j) {
        S[i * n + j] = exp(S[i * n + j] - mx);
        z += S[i * n + j];
      }
      for (int c = 0; c < D; ++c) {
        adouble o = 0;
        for (int j = 0; j < n; ++j)
          o += S[i * n + j] * V[j * D + c];
        O[i * D + c] = o / z;
      }
    }
    adouble J = 0;
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < D; ++c)
        J += O[i * D + c] * in.G(i, c);
    double y = 0;
    J >>= y;
    trace_off();
    gradient(tag, static_cast<int>(x.size()), x.data(), grad.data());
    benchmark::DoNotOptimize(grad.data());
  }
}

} // namespace

BENCHMARK(BM_AdolcAttention)->Arg(2)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
