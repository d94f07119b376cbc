// The corpus as a regression test without libFuzzer (g++ builds): feeds every file of the directories (or
// files) named on the command line to LLVMFuzzerTestOneInput once. A crash or sanitizer report fails the
// test like a failed assertion would; an empty corpus is an error, so a mistyped path cannot pass silently.
//
// `-mutate=SECONDS` (first argument) then keeps going for that long with random mutations of the corpus
// (byte flips, inserts, deletions, duplicated ranges, splices, boundary tokens): blind fuzzing without
// coverage feedback, for compilers without libFuzzer. Each input is written to ./mutation-current before it
// runs, so the input of a crash is on disk.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::string mutate(const std::vector<std::string>& corpus, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  std::string s = corpus[pick(corpus.size())];
  static const char* tokens[] = {"\n",
                                 "\r\n",
                                 "{",
                                 "}",
                                 "[",
                                 "]",
                                 "\"",
                                 ":",
                                 ",",
                                 "0",
                                 "-1",
                                 "1e999",
                                 "99999999999999999999",
                                 "null",
                                 "true",
                                 "\\u0000",
                                 "\xff",
                                 "%00",
                                 "\t",
                                 "Content-Length: 0\r\n",
                                 "\r\n\r\n",
                                 "- ",
                                 ": &a",
                                 "*a",
                                 "!!binary "};
  const int rounds = 1 + static_cast<int>(pick(4));
  for (int r = 0; r < rounds; ++r) {
    const std::size_t at = pick(s.size() + 1);
    switch (pick(6)) {
      case 0:
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:
        s.insert(at, 1, static_cast<char>(rng()));
        break;
      case 2:
        s.erase(at, pick(16) + 1);
        break;
      case 3:
        if (at < s.size()) s.insert(pick(s.size() + 1), s.substr(at, pick(64) + 1));
        break;
      case 4: {
        const std::string& other = corpus[pick(corpus.size())];
        s = s.substr(0, at) + other.substr(pick(other.size() + 1));
        break;
      }
      default:
        s.insert(at, tokens[pick(std::size(tokens))]);
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  double mutate_seconds = 0;
  if (argc > 1 && std::string_view(argv[1]).rfind("-mutate=", 0) == 0) {
    mutate_seconds = std::stod(argv[1] + 8);
    ++argv;
    --argc;
  }
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else if (fs::is_regular_file(arg)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "no such corpus file or directory: %s\n", argv[i]);
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE... (found no input)\n", argv[0]);
    return 2;
  }
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replaying %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "%zu inputs replayed\n", inputs.size());
  if (mutate_seconds <= 0) return 0;

  std::vector<std::string> corpus;
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    corpus.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  const auto seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(mutate_seconds);
  std::uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    const std::string input = mutate(corpus, rng);
    {
      std::ofstream out("mutation-current", std::ios::binary | std::ios::trunc);
      out << input;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
    ++runs;
  }
  std::fprintf(stderr, "%llu mutated inputs run (seed %llu)\n", static_cast<unsigned long long>(runs),
               static_cast<unsigned long long>(seed));
  return 0;
}
