// Writes the fuzzer's dictionary: the format's words (BASE, tests/fuzz/graph_file.dict) and then the op list's
// names and parameter keys (tests/fuzz/dictionary.hpp).
//   fuzz_dictionary BASE OUT
#include "dictionary.hpp"

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: fuzz_dictionary BASE OUT\n";
    return 2;
  }
  std::ifstream base(argv[1]);
  if (!base) {
    std::cerr << "fuzz_dictionary: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::ofstream out(argv[2]);
  std::size_t lines = 0;
  for (std::string line; std::getline(base, line); ++lines)
    out << line << "\n";
  out << "# from the op list (ops/ops.hpp)\n";
  const std::vector<std::string> entries = tapegrad::fuzz::op_dictionary_entries();
  for (const std::string& entry : entries)
    out << entry << "\n";
  out.close();
  if (!out) {
    std::cerr << "fuzz_dictionary: cannot write " << argv[2] << "\n";
    return 2;
  }
  std::cout << "fuzz_dictionary: " << argv[2] << ": " << lines << " lines of " << argv[1] << " and " << entries.size()
            << " op names and parameter keys\n";
  return 0;
}
