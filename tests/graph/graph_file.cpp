// Graph files: exact decimals, every kind of bad input refused with the file, the node and the problem,
// and the same graph from a file and from C++ bit-identical in every precision.
#include "../support.hpp"

#include <tapegrad/graph/io/graph_build.hpp>

#include "../fuzz/dictionary.hpp"

#include <source_dir.hpp>

#include <fstream>
#include <set>

using namespace tapegrad;

namespace {

const std::string example1_file = std::string(tapegrad_source_dir) + "/examples/graphs/example1.json";

/// Parses and records `text` in double: the first error's message, or "" when it is valid. A value outside an
/// op's domain stays a DomainError (the checker's differences take it as a NaN there), named like the rest.
std::string error_of(const std::string& text) {
  try {
    const FileGraph<double> g(parse_graph(text, "bad.json"));
    Tape<double> tape;
    g.output_of(g.record(tape, g.record_inputs(tape)));
    return "";
  } catch (const GraphFileError& e) {
    return e.what();
  } catch (const DomainError& e) {
    return e.what();
  }
}

std::string graph(const std::string& inputs, const std::string& nodes, const std::string& output = "J") {
  return R"({"inputs": )" + inputs + R"(, "nodes": )" + nodes + R"(, "output": ")" + output + R"("})";
}
const std::string X = R"({"X": [[1, 2], [3, 4]]})";

} // namespace

TEST_CASE("every kind of bad input is refused, naming the file, the node and the problem") {
  struct Case {
    const char* what;
    std::string text, message;
  };
  const std::vector<Case> cases{
      {"malformed JSON, with line and column", "{\"inputs\": {\n  \"X\": [[1, 2],\n}",
       "bad.json: malformed JSON: parse error at line 3, column 1"},
      {"not an object", "[1, 2]", "bad.json: a graph file is one JSON object, not an array"},
      {"unknown key", R"({"inputs": {"X": [[1]]}, "nodes": [], "output": "X", "comment": 1})",
       "bad.json: unknown key 'comment'"},
      {"missing key", R"({"inputs": {"X": [[1]]}, "nodes": []})", "bad.json: missing key 'output'"},
      {"duplicate key", R"({"inputs": {"X": [[1]]}, "nodes": [], "output": "X", "output": "X"})",
       "bad.json: key 'output' appears twice"},
      {"unknown op", graph(X, R"([{"name": "J", "op": "relu6", "args": ["X"]}])"),
       "bad.json: node 'J': unknown op 'relu6'"},
      {"wrong arity", graph(X, R"([{"name": "J", "op": "matmul", "args": ["X"]}])"),
       "bad.json: node 'J' (matmul): takes 2 arguments, got 1"},
      {"missing op field", graph(X, R"([{"name": "J", "op": "scale", "args": ["X"]}])"),
       "bad.json: node 'J' (scale): needs \"factor\""},
      {"extra op field", graph(X, R"([{"name": "J", "op": "sum", "args": ["X"], "factor": 2}])"),
       "bad.json: node 'J' (sum): has \"factor\", which sum does not take"},
      {"unknown node key", graph(X, R"([{"name": "J", "op": "sum", "args": ["X"], "colour": 2}])"),
       "bad.json: node 0: unknown key 'colour'"},
      {"offset not an integer", graph(X, R"([{"name": "J", "op": "causal_mask", "args": ["X"], "offset": 1.5}])"),
       "bad.json: node 'J' (causal_mask): \"offset\" must be an integer"},
      {"undefined name", graph(X, R"([{"name": "J", "op": "sum", "args": ["Y"]}])"),
       "bad.json: node 'J' (sum): argument 'Y' is not an input or an earlier node"},
      {"later name",
       graph(X, R"([{"name": "A", "op": "sum", "args": ["J"]}, {"name": "J", "op": "sum", "args": ["X"]}])"),
       "bad.json: node 'A' (sum): argument 'J' is not an input or an earlier node"},
      {"duplicate name", graph(X, R"([{"name": "X", "op": "sum", "args": ["X"]}])", "X"),
       "bad.json: node 'X' (sum): the name 'X' is already used"},
      {"duplicate input", R"({"inputs": {"X": [[1]], "X": [[2]]}, "nodes": [], "output": "X"})",
       "bad.json: inputs: input 'X' is defined twice"},
      {"ragged matrix", graph(R"({"X": [[1, 2], [3]]})", "[]", "X"),
       "bad.json: input 'X' at (1): ragged: this list has 1 entries but the first at its depth has 2"},
      {"empty matrix", graph(R"({"X": []})", "[]", "X"),
       "bad.json: input 'X': an empty list (every size must be at least 1)"},
      {"empty row", graph(R"({"X": [[]]})", "[]", "X"),
       "bad.json: input 'X': an empty list at depth 1 (every size must be at least 1)"},
      {"ragged rank", graph(R"({"X": [[1, 2], 3]})", "[]", "X"),
       "bad.json: input 'X' at (1): a list of 2 was expected (as its first sibling holds), not a number"},
      {"ragged depth", graph(R"({"X": [[[1], [2]], [3, [4]]]})", "[]", "X"),
       "bad.json: input 'X' at (1, 0): a list of 1 was expected (as its first sibling holds), not a number"},
      {"rank 9", graph(R"({"X": [[[[[[[[[1]]]]]]]]]})", "[]", "X"), "bad.json: input 'X': nested deeper than rank 8"},
      {"an empty list in a tensor", graph(R"({"X": [[[1]], [[]]]})", "[]", "X"),
       "bad.json: input 'X' at (1, 0): ragged: this list has 0 entries but the first at its depth has 1"},
      {"non-numeric entry", graph(R"({"X": [[1, "two"]]})", "[]", "X"),
       "bad.json: input 'X' entry (0, 1): 'two' is not a decimal number, inf, -inf or nan"},
      {"boolean entry", graph(R"({"X": [[1, true]]})", "[]", "X"),
       "bad.json: input 'X' entry (0, 1): an entry is a number or a decimal string, not a boolean"},
      {"shape mismatch",
       graph(R"({"X": [[1, 2, 3]], "Y": [[1, 2]]})", R"([{"name": "J", "op": "matmul", "args": ["X", "Y"]}])"),
       "bad.json: node 'J' (matmul): matmul(X, Y): X is 1x3 but Y is 1x2; columns of the left must equal rows of the "
       "right"},
      {"non-1x1 output", graph(X, R"([{"name": "J", "op": "exp", "args": ["X"]}])"),
       "bad.json: output: 'J' is 2x2; the output must hold one entry"},
      {"log of a non-positive entry",
       graph(R"({"X": [[1, "0.5"], ["-0.25", 2]]})",
             R"([{"name": "L", "op": "log", "args": ["X"]}, {"name": "J", "op": "sum", "args": ["L"]}])"),
       "bad.json: node 'L' (log): log(X) for 'L': entry (1, 0) of X is -0.25; log needs entries > 0"},
      {"output undefined", graph(X, "[]", "Z"), "bad.json: output: 'Z' is not an input or a node"},
      {"slice without count", graph(X, R"([{"name": "J", "op": "slice_rows", "args": ["X"], "begin": 0}])"),
       "bad.json: node 'J' (slice_rows): needs \"count\""},
      {"slice out of range", graph(X, R"([{"name": "J", "op": "slice_cols", "args": ["X"], "begin": 1, "count": 2}])"),
       "bad.json: node 'J' (slice_cols): slice_cols(X, begin 1, count 2): X is 2x2; a slice needs count >= 1 and "
       "columns begin..begin+count-1 within 0..1"},
      {"concat without arguments", graph(X, R"([{"name": "J", "op": "concat_cols", "args": []}])"),
       "bad.json: node 'J' (concat_cols): takes one or more arguments, got 0"},
      {"concat with unequal rows",
       graph(R"({"X": [[1, 2], [3, 4]], "Y": [[1]]})", R"([{"name": "J", "op": "concat_cols", "args": ["X", "Y"]}])"),
       "bad.json: node 'J' (concat_cols): concat_cols(X, Y): X is 2x2 but Y is 1x1; every operand needs the same "
       "number of rows"},
      {"padding flags not 0 or 1", graph(X, R"([{"name": "J", "op": "padding_mask", "args": ["X"], "keys": [1, 2]}])"),
       "bad.json: node 'J' (padding_mask): \"keys\" entries must be 1 or 0, not 2"},
      {"padding flags of the wrong length",
       graph(X, R"([{"name": "J", "op": "padding_mask", "args": ["X"], "keys": [1, 0, 1]}])"),
       "bad.json: node 'J' (padding_mask): padding_mask(X): X is 2x2 but the key mask has 3 flags"},
      {"negative target", graph(X, R"([{"name": "J", "op": "cross_entropy", "args": ["X"], "targets": [0, -1]}])"),
       "bad.json: node 'J' (cross_entropy): \"targets\" entries are indices >= 0, not -1"},
      {"target out of range", graph(X, R"([{"name": "J", "op": "cross_entropy", "args": ["X"], "targets": [0, 2]}])"),
       "bad.json: node 'J' (cross_entropy): cross_entropy(X): target 1 is 2 but X is 2x2"},
      {"targets not integers",
       graph(X, R"([{"name": "J", "op": "cross_entropy", "args": ["X"], "targets": [0, 0.5]}])"),
       "bad.json: node 'J' (cross_entropy): \"targets\" entries must be an integer"},
      {"a key another op takes", graph(X, R"([{"name": "J", "op": "sum", "args": ["X"], "targets": [0]}])"),
       "bad.json: node 'J' (sum): has \"targets\", which sum does not take"},
      {"axis as a string", graph(X, R"([{"name": "J", "op": "sum", "args": ["X"], "axis": "1"}])"),
       "bad.json: node 'J' (sum): \"axis\" must be an integer"},
      {"axis as 1.0", graph(X, R"([{"name": "J", "op": "mean", "args": ["X"], "axis": 1.0}])"),
       "bad.json: node 'J' (mean): \"axis\" must be an integer"},
      {"axis out of range", graph(X, R"([{"name": "J", "op": "sum", "args": ["X"], "axis": 2}])"),
       "bad.json: node 'J' (sum): sum(X, axis 2): axis is 0 (each column summed over the rows) or 1"},
      {"axis on tanh", graph(X, R"([{"name": "J", "op": "tanh", "args": ["X"], "axis": 0}])"),
       "bad.json: node 'J' (tanh): has \"axis\", which tanh does not take"},
      {"offset on softmax", graph(X, R"([{"name": "J", "op": "softmax", "args": ["X"], "offset": 0}])"),
       "bad.json: node 'J' (softmax): has \"offset\", which softmax does not take"},
      {"shapes that do not broadcast",
       graph(R"({"X": [[1, 2], [3, 4]], "Y": [[1, 2, 3]]})", R"([{"name": "J", "op": "add", "args": ["X", "Y"]}])"),
       "bad.json: node 'J' (add): add(X, Y): X is 2x2 but Y is 1x3; aligned at their last dims, per dim the sizes must "
       "be equal or one of them 1 (broadcasting)"},
      {"a zero divisor",
       graph(R"({"X": [[1, 2]], "Y": [[3, "0"]]})", R"([{"name": "Q", "op": "div", "args": ["X", "Y"]}])", "Q"),
       "bad.json: node 'Q' (div): div(X, Y) for 'Q': entry (0, 1) of Y is 0; div needs entries != 0"},
      {"sqrt of 0", graph(R"({"X": [[4, 0]]})", R"([{"name": "R", "op": "sqrt", "args": ["X"]}])", "R"),
       "bad.json: node 'R' (sqrt): sqrt(X) for 'R': entry (0, 1) of X is 0; sqrt needs entries > 0"},
      {"pow of a negative entry with an exponent that only rounds to a whole number",
       graph(R"({"X": [[-2]]})", R"([{"name": "P", "op": "pow", "args": ["X"], "exponent": "2.0000000000000000001"}])",
             "P"),
       "bad.json: node 'P' (pow): pow(X) for 'P': entry (0, 0) of X is -2; pow with exponent 2.0000000000000000001 "
       "(not "
       "a whole number) needs entries > 0"},
      {"pow without exponent", graph(X, R"([{"name": "P", "op": "pow", "args": ["X"]}])", "P"),
       "bad.json: node 'P' (pow): needs \"exponent\""},
      {"log_softmax of a row that is entirely -inf",
       graph(R"({"X": [[0, 1], ["-inf", "-inf"]]})", R"([{"name": "L", "op": "log_softmax", "args": ["X"]}])", "L"),
       "bad.json: node 'L' (log_softmax): log_softmax(X) for 'L': row 1 of X is entirely -inf"},
      {"concat_rows with unequal columns",
       graph(R"({"X": [[1, 2], [3, 4]], "Y": [[1]]})", R"([{"name": "J", "op": "concat_rows", "args": ["X", "Y"]}])"),
       "bad.json: node 'J' (concat_rows): concat_rows(X, Y): X is 2x2 but Y is 1x1; every operand needs the same "
       "number of columns"},
      {"deep nesting", std::string(200, '[') + std::string(200, ']'), "bad.json: JSON nested deeper than 64 levels"},
  };
  for (const Case& c : cases) {
    const std::string what = c.what; // CAPTURE of the pointer would print its address
    CAPTURE(what);
    const std::string message = error_of(c.text);
    CHECK(message.rfind(c.message, 0) == 0);
    CHECK(message.find('\n') == std::string::npos); // one line
    if (message.rfind(c.message, 0) != 0) MESSAGE("got: " << message);
  }
  CHECK(error_of(graph(X, R"([{"name": "J", "op": "sum", "args": ["X"]}])")).empty()); // and a valid one passes
  CHECK_THROWS_WITH_AS(read_graph_file("/no/such/file.json"), "/no/such/file.json: cannot open the file",
                       GraphFileError);
}

TEST_CASE("entries are the exact decimal they spell, rounded once into the target precision") {
  const GraphSpec spec = parse_graph(graph(R"({"X": [[0.1, "0.1", "1.5e-3", "-inf"]]})", "[]", "X"), "exact.json");
  const Matrix<float50> x50 = FileGraph<float50>(spec).inputs()[0];
  CHECK(x50(0, 0) == float50(1) / float50(10)); // a JSON number: 0.1 to 50 digits, not the double nearest 0.1
  CHECK(x50(0, 1) == float50(1) / float50(10));
  CHECK(x50(0, 0) != float50(0.1));
  CHECK(x50(0, 2) == float50(3) / float50(2000));
  CHECK(x50(0, 3) == -infinity<float50>());
  const Matrix<double> xd = FileGraph<double>(spec).inputs()[0];
  CHECK(xd(0, 0) == 0.1);
  CHECK(xd(0, 2) == 1.5e-3);
  MpfrDigits digits(300);
  const Matrix<mpfr_real> x300 = FileGraph<mpfr_real>(spec).inputs()[0];
  CHECK(x300(0, 0) * mpfr_real(10) == mpfr_real(1));
}

TEST_CASE("output spellings and digits: inf, -inf, nan; max_digits10 of each type") {
  CHECK(to_decimal(infinity<double>()) == "inf");
  CHECK(to_decimal(-infinity<float50>()) == "-inf");
  CHECK(to_decimal(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(to_decimal(0.1) == "0.10000000000000001");
  CHECK(max_digits10<float>() == 9);
  CHECK(max_digits10<double>() == 17);
  CHECK(max_digits10<long double>() == 21);
  CHECK(max_digits10<float128>() == 36);
  CHECK(max_digits10<float50>() >= 50);
  MpfrDigits digits(300);
  CHECK(max_digits10<mpfr_real>() >= 300);
}

namespace {

/// Example 1 built from C++ with the values the file holds: the same graph, so the same bits.
template <Real T> void same_bits_from_file_and_cpp() {
  const FileGraph<T> file(read_graph_file(example1_file));
  Tape<T> ft;
  const std::vector<Var<T>> fin = file.record_inputs(ft);
  const Var<T> fJ = file.output_of(file.record(ft, fin));
  ft.backward(fJ);

  Tape<T> tape;
  const Var<T> X = tape.input(file.inputs()[0]), WQ = tape.input(file.inputs()[1]), WK = tape.input(file.inputs()[2]),
               WV = tape.input(file.inputs()[3]), G = tape.input(file.inputs()[4]);
  const T factor = from_decimal<T>("0.70710678118654752440084436210484903928483593768847");
  const Var<T> Q = matmul(X, WQ), K = matmul(X, WK), V = matmul(X, WV);
  const Var<T> A = softmax_rows(scale(matmul(Q, transpose(K)), factor));
  const Var<T> J = sum(hadamard(matmul(A, V), G));
  tape.backward(J);

  CHECK(fJ.value() == J.value());
  for (std::size_t k = 0; k < 5; ++k)
    CHECK(fin[k].grad() == tape.grad(tape.var(k)));
}

} // namespace

TEST_CASE_TEMPLATE("the same graph from a file and from C++ is bit-identical", T, float, double, long double, float128,
                   float50, float100) {
  same_bits_from_file_and_cpp<T>();
}

TEST_CASE("the same graph from a file and from C++ is bit-identical in MPFR at 300 digits") {
  MpfrDigits digits(300);
  same_bits_from_file_and_cpp<mpfr_real>();
}

TEST_CASE("the fuzz dictionary: every op name and parameter key from the op list, none written by hand") {
  const std::vector<std::string> entries = fuzz::op_dictionary_entries();
  const std::set<std::string> generated(entries.begin(), entries.end());
  std::size_t checked = 0;
  for (const OpInfo* op : BuiltinOps::infos) {
    CHECK_MESSAGE(generated.count("\"\\\"" + std::string(op->name) + "\\\"\""), "op " << op->name);
    for (const ParamSpec& p : op->params)
      if (p.in_files) {
        CHECK_MESSAGE(generated.count("\"\\\"" + std::string(p.name) + "\\\"\""), "parameter " << p.name);
        ++checked;
      }
    ++checked;
  }
  // The format's own words stay in tests/fuzz/graph_file.dict; an op name there would be a second list to keep.
  std::ifstream in(std::string(tapegrad_source_dir) + "/tests/fuzz/graph_file.dict");
  REQUIRE(in);
  std::size_t base = 0;
  for (std::string line; std::getline(in, line);) {
    CHECK_MESSAGE(generated.count(line) == 0, "tests/fuzz/graph_file.dict repeats " << line << " from the op list");
    base += !line.empty() && line[0] != '#';
  }
  CHECK(base > 0);
  MESSAGE(checked << " op names and parameter keys generated, " << base << " format words in graph_file.dict");
}

TEST_CASE_TEMPLATE("a two-layer MLP with broadcast biases, tanh and mean: the file and C++ agree bit for bit", T,
                   double, float50) {
  const std::string text = graph(
      R"({"X": [[1, "0.5"], [-2, 3], ["0.25", 1]], "W1": [[1, -1, "0.5"], ["0.25", 2, -1]], "b1": [["0.1", 0, -1]],
               "W2": [[1], [-2], ["0.5"]], "b2": [["0.3"]]})",
      R"([{"name": "Z1", "op": "matmul", "args": ["X", "W1"]}, {"name": "A1", "op": "add", "args": ["Z1", "b1"]},
                {"name": "H", "op": "tanh", "args": ["A1"]}, {"name": "Z2", "op": "matmul", "args": ["H", "W2"]},
                {"name": "Y", "op": "add", "args": ["Z2", "b2"]}, {"name": "Q", "op": "square", "args": ["Y"]},
                {"name": "J", "op": "mean", "args": ["Q"]}])");
  const FileGraph<T> g(parse_graph(text, "mlp.json"));
  Tape<T> ft;
  const std::vector<Var<T>> fin = g.record_inputs(ft);
  const Var<T> fj = g.output_of(g.record(ft, fin));
  ft.backward(fj);
  // the same in C++, from the same inputs (as the file rounded them)
  Tape<T> ct;
  const std::vector<Var<T>> cin = g.record_inputs(ct);
  const Var<T>&x = cin[0], &w1 = cin[1], &b1 = cin[2], &w2 = cin[3], &b2 = cin[4];
  const Var<T> cj = mean(square(matmul(tanh(matmul(x, w1) + b1), w2) + b2));
  ct.backward(cj);
  CHECK(fj.value() == cj.value());
  for (std::size_t k = 0; k < cin.size(); ++k) {
    CAPTURE(g.names()[k]);
    CHECK(fin[k].grad() == cin[k].grad());
  }
  // a broadcast bias's gradient has the bias's own shape: the upstream gradient summed over the batch rows
  CHECK(fin[2].grad().rows() == 1);
  CHECK(fin[2].grad().cols() == 3);
  CHECK(fin[4].grad().rows() == 1);
}

TEST_CASE("layer_norm's default eps in a file is the decimal 1e-5 rounded once, to every digit at 50 digits") {
  const std::string text =
      graph(R"({"X": [[1, 2, 4], [3, 3, 3]]})", R"([{"name": "N", "op": "layer_norm", "args": ["X"]},
                                    {"name": "J", "op": "sum", "args": ["N"]}])");
  const FileGraph<float50> g(parse_graph(text, "ln.json"));
  Tape<float50> tape;
  std::vector<Var<float50>> in{tape.input(g.inputs()[0], "X")};
  const Var<float50> n = g.record(tape, in)[1]; // inputs first, then the nodes
  CHECK(tape.node(n.index()).params.number("eps") == float50("1e-5"));
  CHECK(tape.node(n.index()).params.number_text("eps") == "1e-5");
  CHECK(n.value().row(1) == Matrix<float50>::Zero(1, 3)); // a constant row is finite, 0
}

TEST_CASE("dropout in a graph file: p and seed, the same pattern as dropout_mask draws, refused without them") {
  const std::string text = graph(R"({"X": [[1, 2, 3, 4], [5, 6, 7, 8]]})",
                                 R"([{"name": "D", "op": "dropout", "args": ["X"], "p": "0.5", "seed": 3},
                                     {"name": "J", "op": "sum", "args": ["D"]}])");
  const FileGraph<double> g(parse_graph(text, "dropout.json"));
  Tape<double> tape;
  std::vector<Var<double>> in{tape.input(g.inputs()[0], "X")};
  const std::vector<Var<double>> all = g.record(tape, in);
  const DropoutMask mask = dropout_mask(2, 4, 0.5, 3);
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 4; ++j)
      CHECK(all[1].value()(i, j) == (mask.keep(i, j) ? 2 * g.inputs()[0](i, j) : 0.0));
  CHECK(error_of(graph(X, R"([{"name": "J", "op": "dropout", "args": ["X"], "p": 0.5}])")) ==
        "bad.json: node 'J' (dropout): needs \"seed\"");
  CHECK(error_of(graph(X, R"([{"name": "J", "op": "dropout", "args": ["X"], "p": 1, "seed": 0}])"))
            .rfind("bad.json: node 'J' (dropout): dropout(X): p = 1; it must be in [0, 1)", 0) == 0);
  CHECK(error_of(graph(X, R"([{"name": "J", "op": "softmax", "args": ["X"], "strict": 1}])")) ==
        "bad.json: node 0: unknown key 'strict'"); // a C++-only option is not a file key
}

TEST_CASE("graph format v3 values: nested lists of rank 0 to 8, the shape kept through the graph") {
  const GraphSpec spec = parse_graph(graph(R"({"s": "0.5", "v": [1, 2, 3], "T": [[[1, 2]], [[3, 4]]],
                                                "E": [[[[[[[[7]]]]]]]]})",
                                           R"([{"name": "P", "op": "mul", "args": ["T", "s"]},
                                               {"name": "Q", "op": "reshape", "args": ["P"], "shape": [-1]},
                                               {"name": "R", "op": "sum", "args": ["Q"], "dim": 0},
                                               {"name": "J", "op": "add", "args": ["R", "E"]}])"),
                                     "v3.json");
  REQUIRE(spec.inputs.size() == 4);
  CHECK(spec.inputs[0].second.shape == Shape{});
  CHECK(spec.inputs[1].second.shape == Shape{3});
  CHECK(spec.inputs[2].second.shape == Shape{2, 1, 2});
  CHECK(spec.inputs[3].second.shape == Shape{1, 1, 1, 1, 1, 1, 1, 1});
  const FileGraph<double> g(spec);
  Tape<double> tape;
  const std::vector<Var<double>> all = g.record(tape, g.record_inputs(tape));
  const Var<double> J = g.output_of(all);
  CHECK(J.shape() == Shape{1, 1, 1, 1, 1, 1, 1, 1}); // a rank-0 sum broadcast against rank 8: one entry
  CHECK(J.value()(0, 0) == 0.5 * 10 + 7);
  tape.backward(J);
  CHECK(all[2].grad_tensor() == Tensor<double>::constant({2, 1, 2}, 0.5));
  CHECK(all[0].grad_tensor() == Tensor<double>(10.0));
  // the checker hands the inputs over as matrices; the file's shapes are set on them before any node uses them
  Tape<double> viewed;
  std::vector<Var<double>> in;
  for (std::size_t k = 0; k < g.inputs().size(); ++k)
    in.push_back(viewed.input(g.inputs()[k], g.names()[k]));
  CHECK(in[2].shape() == Shape{2, 2}); // the storage view of 2x1x2
  CHECK(g.output_of(g.record(viewed, in)).value()(0, 0) == 12);
  CHECK(in[2].shape() == Shape{2, 1, 2});
}

TEST_CASE("graph format v3: the new ops' keys are checked as the format says") {
  const std::string T3 = R"({"X": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]})";
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "sum", "args": ["X"], "keepdim": true}])")) ==
        "bad.json: node 'J' (sum): sum(X): keepdim is given without dim");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "sum", "args": ["X"], "dim": []}])")) ==
        "bad.json: node 'J' (sum): \"dim\" must be an integer or a non-empty list of integers (dims)");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "sum", "args": ["X"], "dim": 0, "keepdim": 1}])")) ==
        "bad.json: node 'J' (sum): \"keepdim\" must be true or false");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "sum", "args": ["X"], "dim": 3}])")) ==
        "bad.json: node 'J' (sum): sum(X): dim 3 is out of range for rank 3 (dims are -3 to 2)");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "sum", "args": ["X"], "dim": "0"}])")) ==
        "bad.json: node 'J' (sum): \"dim\" must be an integer or a non-empty list of integers (dims)");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "sum", "args": ["X"], "axis": 0}])")) ==
        "bad.json: node 'J' (sum): sum(X): axis is for matrices, X is 2x2x2 (rank 3); use dim");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "transpose", "args": ["X"], "dim0": 0}])")) ==
        "bad.json: node 'J' (transpose): transpose(X): dim0 and dim1 go together (give both or neither)");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "gelu", "args": ["X"], "approximate": "erf"}])")) ==
        "bad.json: node 'J' (gelu): \"approximate\" must be one of \"none\", \"tanh\"");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "reshape", "args": ["X"], "shape": [2, -1, -1]}])")) ==
        "bad.json: node 'J' (reshape): reshape(X): size -1 in shape (sizes are >= 1, or one -1)");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "view", "args": ["X"], "shape": [8]}])"))
            .find("bad.json: node 'J': unknown op 'view'") == 0);
  CHECK(error_of(graph(T3, R"([{"name": "S", "op": "softmax", "args": ["X"], "dim": -4},
                              {"name": "J", "op": "sum", "args": ["S"]}])")) ==
        "bad.json: node 'S' (softmax): softmax(X): dim -4 is out of range for rank 3 (dims are -3 to 2)");
  CHECK(error_of(graph(R"({"x": 2})", R"([{"name": "S", "op": "softmax", "args": ["x"]},
                                          {"name": "J", "op": "sum", "args": ["S"]}])")) ==
        "bad.json: node 'S' (softmax): softmax(x): dim -1 is out of range for rank 0 (a rank-0 value has no dims)");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "slice", "args": ["X"], "dim": 0, "start": 1}])")) ==
        "bad.json: node 'J' (slice): needs \"end\"");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "cat", "args": ["X"]}])")) ==
        "bad.json: node 'J' (cat): needs \"dim\"");
}

TEST_CASE("graph format v3: layer_norm, rms_norm, conv, amax and logsumexp refuse what the format refuses") {
  const std::string T3 = R"({"X": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], "w": [1, 2], "W": [[[1, 2], [3, 4]]]})";
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "layer_norm", "args": ["X"], "normalized_shape": 2}])")) ==
        "bad.json: node 'J' (layer_norm): \"normalized_shape\" must be a list of integers (sizes)");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "layer_norm", "args": ["X"], "normalized_shape": []}])")) ==
        "bad.json: node 'J' (layer_norm): layer_norm(X): normalized_shape is an empty list");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "layer_norm", "args": ["X", "w", "w", "w"]}])")) ==
        "bad.json: node 'J' (layer_norm): takes 1 to 3 arguments, got 4");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "rms_norm", "args": ["X", "W"]}])")) ==
        "bad.json: node 'J' (rms_norm): rms_norm(X): its weight W is 1x2x2; it must be [2], the normalized shape");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "conv1d", "args": ["X", "W"], "padding": "same"}])")) ==
        "bad.json: node 'J' (conv1d): \"padding\" must be an integer or a list of 1 integer");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "conv1d", "args": ["X", "W"], "stride": [1, 1]}])")) ==
        "bad.json: node 'J' (conv1d): \"stride\" must be an integer or a list of 1 integer");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "conv1d", "args": ["X", "W"], "padding": -1}])")) ==
        "bad.json: node 'J' (conv1d): conv1d(X, W): padding -1; it must be >= 0");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "conv2d", "args": ["X", "W"], "dilation": [1]}])")) ==
        "bad.json: node 'J' (conv2d): \"dilation\" must be an integer or a list of 2 integers");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "amax", "args": ["X"]}])")) ==
        "bad.json: node 'J' (amax): needs \"dim\"");
  CHECK(error_of(graph(T3, R"([{"name": "J", "op": "logsumexp", "args": ["X"], "keepdim": true}])")) ==
        "bad.json: node 'J' (logsumexp): needs \"dim\"");
}

TEST_CASE("graph format v3 constants: real ones are leaves without gradients, int and bool ones ride on their nodes") {
  const std::string file = std::string(tapegrad_source_dir) + "/examples/graphs/tokens_classifier.json";
  const FileGraph<double> g(read_graph_file(file));
  REQUIRE(g.constant_names() == std::vector<std::string>{"temperature"});
  Tape<double> tape;
  const std::vector<Var<double>> all = g.record(tape, g.record_inputs(tape));
  CHECK(all[2].label() == "temperature"); // inputs, then real constants, then nodes
  CHECK(all[2].shape() == Shape{});
  CHECK(all[g.index_of("X")].shape() == Shape{2, 3, 3});
  CHECK(g.output_of(all).shape() == Shape{});
  tape.backward(g.output_of(all));
  CHECK(all[g.index_of("E")].grad().cwiseAbs().maxCoeff() > 0);
  CHECK_THROWS_WITH_AS(all[2].grad(), "grad(temperature): a constant (Tape::constant); no gradient is computed for it",
                       UsageError);

  const auto with = [](const std::string& constants, const std::string& nodes, const std::string& output = "J") {
    return R"({"inputs": {"X": [[1, 2], [3, 4]]}, "constants": )" + constants + R"(, "nodes": )" + nodes +
           R"(, "output": ")" + output + R"("})";
  };
  const std::string M = R"({"M": {"dtype": "bool", "value": [[true, false], [false, true]]}})";
  const std::string fill = R"([{"name": "F", "op": "masked_fill", "args": ["X", "M"], "value": 0},
                              {"name": "J", "op": "sum", "args": ["F"]}])";
  CHECK(error_of(with(M, fill)) == "");
  CHECK(error_of(with(R"({"M": {"dtype": "int", "value": [[1, 0], [0, 1]]}})", fill)) ==
        "bad.json: node 'F' (masked_fill): argument 'M' is an int constant; masked_fill's mask is a bool constant");
  CHECK(error_of(with(R"({"M": {"dtype": "real", "value": [[1, 0], [0, 1]]}})", fill)) ==
        "bad.json: node 'F' (masked_fill): argument 'M' is a real constant; masked_fill's mask is a bool constant");
  CHECK(error_of(with(M, R"([{"name": "J", "op": "add", "args": ["X", "M"]}])")) ==
        "bad.json: node 'J' (add): argument 'M' is a bool constant, where add takes a real operand");
  CHECK(error_of(with(M, fill, "M")) == "bad.json: output: 'M' is a constant; the output is a node or an input");
  CHECK(error_of(with(R"({"M": {"dtype": "int", "value": [1, 2.0]}})", "[]", "X")) ==
        "bad.json: constant 'M' entry (1): an int constant's entries are JSON integers, not a number 2.0");
  CHECK(error_of(with(R"({"M": {"dtype": "bool", "value": [1]}})", "[]", "X")) ==
        "bad.json: constant 'M' entry (0): a bool constant's entries are true or false, not a number");
  CHECK(error_of(with(R"({"M": {"dtype": "float", "value": 1}})", "[]", "X")) ==
        "bad.json: constant 'M': \"dtype\" must be \"real\", \"int\" or \"bool\"");
  CHECK(error_of(with(R"({"M": {"dtype": "int"}})", "[]", "X")) == "bad.json: constant 'M': needs \"value\"");
  CHECK(error_of(with(R"({"X": {"dtype": "int", "value": 1}})", "[]", "X")) ==
        "bad.json: constant 'X': the name 'X' is already used (names are unique)");
  CHECK(error_of(with(R"({"T": {"dtype": "int", "value": [0, 2]}})",
                      R"([{"name": "J", "op": "cross_entropy", "args": ["X", "T"]}])")) ==
        "bad.json: node 'J' (cross_entropy): cross_entropy(X): the target of row 1 is 2, outside [0, 2)");
  CHECK(error_of(with(R"({"T": {"dtype": "int", "value": [0, 1]}})",
                      R"([{"name": "J", "op": "cross_entropy", "args": ["X", "T"], "targets": [0, 1]}])")) ==
        "bad.json: node 'J' (cross_entropy): cross_entropy(X): \"targets\" together with a target operand");
  CHECK(error_of(
            with(R"({"T": {"dtype": "int", "value": [0, 1]}})",
                 R"([{"name": "J", "op": "cross_entropy", "args": ["X"], "targets": [0, 1], "reduction": "sum"}])")) ==
        "bad.json: node 'J' (cross_entropy): cross_entropy(X): \"reduction\" and \"ignore_index\" belong to the form "
        "with a target operand");
  CHECK(error_of(with(R"({"T": {"dtype": "int", "value": [0, 1]}})",
                      R"([{"name": "J", "op": "nll_loss", "args": ["X"]}])")) ==
        "bad.json: node 'J' (nll_loss): takes 2 arguments, got 1");
  CHECK(error_of(with(
            R"({"I": {"dtype": "int", "value": [[0, 2]]}})",
            R"([{"name": "E", "op": "embedding", "args": ["X", "I"]}, {"name": "J", "op": "sum", "args": ["E"]}])")) ==
        "bad.json: node 'E' (embedding): embedding(X): index 2 at (0, 1) is outside [0, 2) (X has 2 rows)");
}
