// Search spaces as data (docs/nas.md): a JSON file names a family of
// networks and, per stage, the options of each choice. A candidate is one
// option per choice; it becomes a chain of blocks, each written as a small
// ONNX graph once (the same form torch.onnx exports: BatchNorm folded into
// the conv's bias) and lowered by the runtime profile's own rules, so that a
// search costs candidates with the rules analysis uses and no ONNX per
// candidate (space_cost.h).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tilewave {
namespace onnx { class ModelProto; }

namespace space {

enum class Family { mbconv, regnet, resnet };

// One choice of a stage (or of the whole network, for regnet): its options.
struct Choice {
  std::string name;
  std::vector<double> options;
  std::vector<std::string> texts;  // each option as encodings write it ("d2"), made once
};

struct Stage {
  std::vector<Choice> choices;
  const Choice* find(const std::string& name) const;
};

struct SearchSpace {
  std::string name;
  std::string source_file;
  Family family = Family::mbconv;
  int64_t channels = 3, height = 224, width = 224;  // the input image
  int64_t classes = 1000;
  int64_t stem_width = 32;
  int64_t head_width = 0;   // mbconv: the 1x1 conv before pooling (0: none)
  std::string activation = "relu";  // relu | relu6 | silu
  std::vector<Stage> stages;        // regnet: one stage holding the generator's choices
  // Options multiplied out: how many distinct encodings the space holds (capped at 1e300).
  double size() const;
};

// Reads and checks a space file; InputError naming the file and field.
SearchSpace load_space(const std::string& path);
// The same from text in memory; `path` names it in errors.
SearchSpace space_from_text(const std::string& text, const std::string& path);

// One option per choice, stage by stage, in the file's order.
struct Candidate {
  uint64_t index = 0;                       // position in the sampling sequence
  std::vector<std::vector<double>> values;  // [stage][choice]
};

// Deterministic for (seed, index), whatever the thread or shard that draws it.
Candidate sample(const SearchSpace& s, uint64_t seed, uint64_t index);
// The same into `out`, reusing its storage (a search's hot loop allocates nothing).
void sample(const SearchSpace& s, uint64_t seed, uint64_t index, Candidate& out);
// How `nas` picks its candidates (docs/nas.md "Sampling"): replacement is
// the default (sample() above: a candidate may come twice); unique draws
// without replacement, through a seeded permutation of the whole space;
// enumerate takes every candidate once, in the space's fixed order.
enum class Sampling { replacement, unique, enumerate };
const char* sampling_name(Sampling m);

// Samples expected to repeat an earlier one when `samples` are drawn with
// replacement from `space_size` equally likely candidates: samples less the
// expected distinct ones, size·(1 − (1 − 1/size)^samples).
double expected_repeats(double space_size, uint64_t samples);

// --enumerate refuses larger spaces: their tables would not be read whole.
inline constexpr uint64_t kEnumerateLimit = 10'000'000;

// Candidate `index` of a sampling, from (mode, seed, index) alone, so that
// threads and shards draw the same candidates. The constructor throws
// InputError naming the space file when the mode cannot give `samples`
// candidates (unique: more than the space holds; enumerate: a space over
// kEnumerateLimit). total(): the candidates of the whole sampling
// (enumerate: the space's size, whatever `samples` says).
class Sampler {
 public:
  Sampler(const SearchSpace& s, Sampling mode, uint64_t seed, uint64_t samples);
  void draw(uint64_t index, Candidate& out) const;
  uint64_t total() const { return total_; }

 private:
  uint64_t permute(uint64_t index) const;  // a bijection of [0, size_)
  const SearchSpace& s_;
  Sampling mode_;
  uint64_t seed_, total_, size_ = 0;
  std::array<uint64_t, 6> keys_{};  // Feistel round keys, from the seed
  unsigned half_bits_ = 1;
};

// The candidate at position `rank` of the space's fixed order: mixed radix
// over the choices, the last choice of the last stage varying fastest.
void candidate_at(const SearchSpace& s, uint64_t rank, Candidate& out);

// "d2-w24-e6-k5-se0-s2_..." : stages joined by '_', choices by '-'.
std::string encode(const SearchSpace& s, const Candidate& c);
void encode(const SearchSpace& s, const Candidate& c, std::string& out);
Candidate decode(const SearchSpace& s, const std::string& encoding);  // InputError if it does not fit

// A block of the candidate's chain: its kind and integer parameters. The
// parameters with the input shape make the block's memo key.
struct Block {
  enum class Kind { stem, mbconv, xblock, bottleneck, basic, resnet_stem, head } kind;
  std::array<int64_t, 5> params{};  // fixed size: a candidate's blocks are made without allocating
};
std::vector<Block> blocks_of(const SearchSpace& s, const Candidate& c);
void blocks_of(const SearchSpace& s, const Candidate& c, std::vector<Block>& out);

// The input shape a block reads: N, C, H, W.
struct Shape4 {
  int64_t n = 1, c = 0, h = 0, w = 0;
  bool operator==(const Shape4& o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
};

// Writes blocks as one ONNX graph (a whole candidate, or one block with the
// input shape given). `params` gets the weights' element count.
struct WrittenModel {
  std::shared_ptr<onnx::ModelProto> proto;
  std::string input_name, output_name;
  Shape4 output;
  int64_t params = 0;
};
WrittenModel write_blocks(const SearchSpace& s, const std::vector<Block>& blocks, const Shape4& input);

}  // namespace space
}  // namespace tilewave
