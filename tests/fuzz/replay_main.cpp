// Without libFuzzer (g++ builds): runs a harness once over each file named,
// directories recursively, as `harness -runs=0 DIR...` does under libFuzzer.
// Flags (-...) are ignored but for -seed_inputs=FILE,FILE, so that both
// builds take the same command line.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int run_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "replay: cannot open %s\n", p.string().c_str());
    return 1;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int files = 0, failed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const std::string seed_flag = "-seed_inputs=";
    if (arg.rfind(seed_flag, 0) == 0) {
      std::stringstream list(arg.substr(seed_flag.size()));
      for (std::string file; std::getline(list, file, ',');) failed += run_file(file), ++files;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;
    const std::filesystem::path p(arg);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file()) failed += run_file(e.path()), ++files;
    } else {
      failed += run_file(p), ++files;
    }
  }
  std::printf("replay: %d inputs, all within the contract\n", files - failed);
  return failed == 0 && files > 0 ? 0 : 1;
}
