// Replays every file of the fuzz corpus (tests/fuzz/corpus, what scripts/fuzz found) through the fuzz
// target, so a ctest run re-checks each input libFuzzer kept: no crash, no exception other than
// tapegrad::Error, and no sanitizer report in the sanitizer build (scripts/test --sanitize).
//   fuzz_replay DIR   prints how many inputs were valid graphs and how many were refused with an error
#include "graph_file_target.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_replay CORPUS_DIR\n";
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(argv[1]))
    if (e.is_regular_file()) files.push_back(e.path());
  if (files.empty()) {
    std::cerr << "fuzz_replay: no files in " << argv[1] << "\n";
    return 1;
  }
  std::size_t valid = 0;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    valid += tapegrad::fuzz::run_graph_file(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << "replayed " << files.size() << " corpus inputs: " << valid << " valid graphs, " << files.size() - valid
            << " refused with a tapegrad error, no crash\n";
  return 0;
}
