// Replays every file of a fuzz corpus (tests/fuzz/corpus for the graph-file target, tests/fuzz/corpus_ops for
// the structure-aware one: what scripts/fuzz found) through its fuzz target, so a ctest run re-checks each input
// libFuzzer kept: no crash, no exception other than tapegrad::Error, and no sanitizer report in the sanitizer
// build (scripts/test --sanitize).
//   fuzz_replay graph_file|graph_ops DIR   prints how many inputs were valid graphs (graph_ops: reached
//                                          backward) and how many were refused with an error
#include "graph_file_target.hpp"
#include "graph_ops_target.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string target = argc == 3 ? argv[1] : "";
  if (target != "graph_file" && target != "graph_ops") {
    std::cerr << "usage: fuzz_replay graph_file|graph_ops CORPUS_DIR\n";
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(argv[2]))
    if (e.is_regular_file()) files.push_back(e.path());
  if (files.empty()) {
    std::cerr << "fuzz_replay: no files in " << argv[2] << "\n";
    return 1;
  }
  std::size_t valid = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    valid += target == "graph_file" ? tapegrad::fuzz::run_graph_file(data, bytes.size())
                                    : tapegrad::fuzz::run_graph_ops(data, bytes.size());
  }
  std::cout << target << ": replayed " << files.size() << " corpus inputs: " << valid
            << (target == "graph_file" ? " valid graphs, " : " reached backward, ") << files.size() - valid
            << " refused with a tapegrad error, no crash\n";
  return 0;
}
