// Space files, sampling and encodings (docs/nas.md "Space files").
#include "tilewave/search_space.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tilewave/text.h"
#include "tilewave/error.h"
#include "tilewave/json_input.h"

namespace tilewave::space {

namespace {

using nlohmann::json;

// A choice a family needs: its file key, its token in encodings, its range.
struct ChoiceRule {
  const char* name;
  const char* token;
  double min, max;
  bool integer;
};

const std::vector<ChoiceRule>& rules_of(Family f) {
  static const std::vector<ChoiceRule> mbconv = {
      {"depth", "d", 1, 16, true},   {"width", "w", 1, 4096, true}, {"expansion", "e", 1, 16, false},
      {"kernel", "k", 1, 9, true},   {"se", "se", 0, 1, true},      {"stride", "s", 1, 2, true}};
  static const std::vector<ChoiceRule> regnet = {
      {"depth", "d", 1, 64, true},          {"w0", "w", 8, 1024, true},  {"wa", "a", 1, 512, false},
      {"wm", "m", 1.5, 4, false},          {"group_width", "g", 1, 1024, true},
      {"bottleneck", "b", 0.25, 4, false},  {"se", "se", 0, 1, true}};
  static const std::vector<ChoiceRule> resnet = {{"depth", "d", 1, 64, true},
                                                 {"width", "w", 8, 4096, true},
                                                 {"bottleneck", "b", 0, 1, true},
                                                 {"stride", "s", 1, 2, true}};
  return f == Family::mbconv ? mbconv : f == Family::regnet ? regnet : resnet;
}

// splitmix64: a small, portable generator, so that a seed gives the same
// candidates on every machine and standard library.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The shortest text that reads back as the same double (fmt's default), so
// that an encoding decodes to exactly its candidate ("{:g}" kept 6 digits);
// -0 is written 0, since '-' separates choices.
std::string number_text(double v) { return fmt::format("{}", v == 0 ? 0.0 : v); }

int64_t make_divisible(double v, int64_t divisor) {
  // torchvision's _make_divisible: round to the multiple, never 10% below.
  int64_t out = std::max<int64_t>(divisor, int64_t(v + divisor / 2.0) / divisor * divisor);
  if (double(out) < 0.9 * v) out += divisor;
  return out;
}

// RegNet's generator (Radosavovic et al. 2020; torchvision's
// BlockParams.from_init_params): per-block widths on a quantized linear
// ramp, grouped into stages of equal width, then made group-compatible.
struct RegnetStage {
  int64_t width, depth, group_width;
};
std::vector<RegnetStage> regnet_stages(double depth, double w0, double wa, double wm, double group_width,
                                       double bottleneck) {
  const int64_t quant = 8;
  std::vector<int64_t> widths;
  for (int64_t j = 0; j < int64_t(depth); ++j) {
    const double u = w0 + wa * double(j);
    const double s = std::nearbyint(std::log(u / w0) / std::log(wm));  // half to even, as torch.round
    widths.push_back(int64_t(std::nearbyint(w0 * std::pow(wm, s) / quant)) * quant);
  }
  std::vector<RegnetStage> stages;
  for (int64_t w : widths) {
    if (stages.empty() || stages.back().width != w) stages.push_back({w, 0, int64_t(group_width)});
    ++stages.back().depth;
  }
  for (auto& st : stages) {
    const double w_bot = std::floor(double(st.width) * bottleneck);
    const int64_t g = std::min<int64_t>(st.group_width, int64_t(w_bot));
    const int64_t ws_bot = make_divisible(w_bot, std::max<int64_t>(g, 1));
    st.group_width = std::max<int64_t>(g, 1);
    st.width = int64_t(double(ws_bot) / bottleneck);
  }
  return stages;
}

}  // namespace

const Choice* Stage::find(const std::string& name) const {
  for (const auto& c : choices)
    if (c.name == name) return &c;
  return nullptr;
}

double SearchSpace::size() const {
  double n = 1;
  for (const auto& st : stages)
    for (const auto& c : st.choices) n = std::min(1e300, n * double(c.options.size()));
  return n;
}

SearchSpace load_space(const std::string& path) {
  const std::string text = read_regular_file(path, "a search space", uintmax_t(64) << 20);
  return space_from_text(text, path);
}

SearchSpace space_from_text(const std::string& text, const std::string& path) {
  const json j = parse_json_text(text, path);
  if (!j.is_object()) throw InputError(path, "a search space is a JSON object");
  for (const auto& item : j.items()) {
    static const std::set<std::string> known = {"name",      "family",     "description", "input", "classes",
                                                "activation", "stem_width", "head_width",  "stages"};
    if (!known.count(item.key())) throw InputError(path, fmt::format("unknown field '{}'", item.key()));
  }
  SearchSpace s;
  s.source_file = path;
  auto str = [&](const char* key, const std::string& fallback) {
    if (!j.contains(key)) return fallback;
    if (!j.at(key).is_string()) throw InputError(path, fmt::format("field '{}' must be a string", key));
    return j.at(key).get<std::string>();
  };
  auto integer = [&](const char* key, int64_t fallback, int64_t lo, int64_t hi) {
    if (!j.contains(key)) return fallback;
    const json& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      throw InputError(path, fmt::format("field '{}' must be an integer in [{}, {}]", key, lo, hi));
    return v.get<int64_t>();
  };
  s.name = str("name", "space");
  require_display_name(path, "name", s.name);
  const std::string family = str("family", "");
  if (family == "mbconv") s.family = Family::mbconv;
  else if (family == "regnet") s.family = Family::regnet;
  else if (family == "resnet") s.family = Family::resnet;
  else throw InputError(path, fmt::format("field 'family' is '{}'; known: mbconv, regnet, resnet", family));
  s.activation = str("activation", s.family == Family::mbconv ? "relu6" : "relu");
  if (s.activation != "relu" && s.activation != "relu6" && s.activation != "silu")
    throw InputError(path, fmt::format("activation '{}' is not relu, relu6 or silu", s.activation));
  s.classes = integer("classes", 1000, 1, 1000000);
  s.stem_width = integer("stem_width", s.family == Family::resnet ? 64 : 32, 1, 4096);
  s.head_width = integer("head_width", 0, 0, 16384);
  if (j.contains("input")) {
    const json& in = j.at("input");
    if (!in.is_array() || in.size() != 3 || !in[0].is_number_integer() || !in[1].is_number_integer() ||
        !in[2].is_number_integer())
      throw InputError(path, "field 'input' must be [channels, height, width]");
    s.channels = in[0].get<int64_t>(), s.height = in[1].get<int64_t>(), s.width = in[2].get<int64_t>();
    if (s.channels < 1 || s.channels > 64 || s.height < 8 || s.height > 4096 || s.width < 8 || s.width > 4096)
      throw InputError(path, "field 'input' is outside [1..64, 8..4096, 8..4096]");
  }
  if (!j.contains("stages") || !j.at("stages").is_array() || j.at("stages").empty())
    throw InputError(path, "field 'stages' must be a non-empty list");
  if (j.at("stages").size() > 32) throw InputError(path, "more than 32 stages");
  if (s.family == Family::regnet && j.at("stages").size() != 1)
    throw InputError(path, "a regnet space has one entry in 'stages': the generator's choices");
  const auto& rules = rules_of(s.family);
  for (size_t i = 0; i < j.at("stages").size(); ++i) {
    const json& st = j.at("stages")[i];
    const std::string where = fmt::format("{}: stages[{}]", path, i);
    if (!st.is_object()) throw InputError(where, "a stage is an object of choices");
    Stage stage;
    for (const auto& rule : rules) {
      if (!st.contains(rule.name)) throw InputError(where, fmt::format("missing choice '{}'", rule.name));
      const json& opts = st.at(rule.name);
      if (!opts.is_array() || opts.empty() || opts.size() > 64)
        throw InputError(where, fmt::format("choice '{}' must be a list of 1 to 64 options", rule.name));
      Choice c{rule.name, {}, {}};
      for (const auto& o : opts) {
        if (!o.is_number()) throw InputError(where, fmt::format("choice '{}' has a non-number option", rule.name));
        const double v = o.get<double>();
        if (!(v >= rule.min && v <= rule.max) || (rule.integer && v != std::floor(v)))
          throw InputError(where, fmt::format("choice '{}' has option {}, outside [{}, {}]{}", rule.name, v, rule.min,
                                              rule.max, rule.integer ? " (integers)" : ""));
        c.options.push_back(v);
        c.texts.push_back(rule.token + number_text(v));
      }
      stage.choices.push_back(std::move(c));
    }
    for (auto& [k, v] : st.items())
      if (!stage.find(k)) throw InputError(where, fmt::format("unknown choice '{}' for family {}", k, family));
    s.stages.push_back(std::move(stage));
  }
  return s;
}

void sample(const SearchSpace& s, uint64_t seed, uint64_t index, Candidate& c) {
  uint64_t state = seed * 0xd1b54a32d192ed03ULL ^ index;
  splitmix64(state);
  c.index = index;
  c.values.resize(s.stages.size());
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const auto& choices = s.stages[i].choices;
    auto& values = c.values[i];
    values.resize(choices.size());
    for (size_t k = 0; k < choices.size(); ++k)
      values[k] = choices[k].options[splitmix64(state) % choices[k].options.size()];
  }
}

const char* sampling_name(Sampling m) {
  return m == Sampling::unique ? "unique" : m == Sampling::enumerate ? "enumerate" : "replacement";
}

void candidate_at(const SearchSpace& s, uint64_t rank, Candidate& c) {
  c.index = rank;
  c.values.resize(s.stages.size());
  for (size_t i = 0; i < s.stages.size(); ++i) c.values[i].resize(s.stages[i].choices.size());
  // Least significant digit last, so that the order reads as nested loops in the file's order.
  for (size_t i = s.stages.size(); i-- > 0;) {
    const auto& choices = s.stages[i].choices;
    for (size_t k = choices.size(); k-- > 0;) {
      const uint64_t radix = choices[k].options.size();
      c.values[i][k] = choices[k].options[rank % radix];
      rank /= radix;
    }
  }
}

double expected_repeats(double space_size, uint64_t samples) {
  if (!(space_size >= 1) || samples == 0) return 0;
  // expm1/log1p keep the difference exact when repeats are few among many.
  const double distinct = -space_size * std::expm1(double(samples) * std::log1p(-1.0 / space_size));
  return std::max(0.0, double(samples) - distinct);
}

Sampler::Sampler(const SearchSpace& s, Sampling mode, uint64_t seed, uint64_t samples)
    : s_(s), mode_(mode), seed_(seed), total_(samples) {
  if (mode == Sampling::replacement) return;
  // The exact count; 2^62 bounds it so that the permutation's domain (below
  // four times the size) fits 64 bits.
  const uint64_t cap = uint64_t(1) << 62;
  uint64_t size = 1;
  for (const auto& st : s.stages)
    for (const auto& c : st.choices) size = size > cap / c.options.size() ? cap + 1 : size * c.options.size();
  if (mode == Sampling::enumerate) {
    if (size > kEnumerateLimit)
      throw InputError(s.source_file, fmt::format("--enumerate: the space holds {:.4g} candidates, more than the "
                                                  "{} it enumerates; sample it with --samples N --unique",
                                                  s.size(), kEnumerateLimit));
    size_ = total_ = size;
    return;
  }
  if (size > cap)
    throw InputError(s.source_file, fmt::format("--unique: the space holds {:.4g} candidates, more than the 2^62 it "
                                                "permutes; samples drawn with replacement are almost surely distinct",
                                                s.size()));
  if (samples > size)
    throw InputError(s.source_file, fmt::format("--unique: --samples {} is more than the {} candidates the space holds "
                                                "(--enumerate takes each once)", samples, size));
  size_ = size;
  while ((uint64_t(1) << (2 * half_bits_)) < size_) ++half_bits_;
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 0x5eed;
  for (auto& k : keys_) k = splitmix64(state);
}

// A balanced Feistel network on 2 * half_bits_ bits is a bijection whatever
// its round function; walking the cycle until the value falls below size_
// makes it one of [0, size_) (Black and Rogaway's cycle walking). The domain
// is under 4 * size_, so a draw takes a few rounds on average.
uint64_t Sampler::permute(uint64_t x) const {
  const uint64_t mask = (uint64_t(1) << half_bits_) - 1;
  do {
    uint64_t left = x >> half_bits_, right = x & mask;
    for (uint64_t key : keys_) {
      uint64_t z = right ^ key;
      const uint64_t f = splitmix64(z) & mask;
      const uint64_t next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << half_bits_) | right;
  } while (x >= size_);
  return x;
}

void Sampler::draw(uint64_t index, Candidate& out) const {
  if (mode_ == Sampling::replacement) return sample(s_, seed_, index, out);
  candidate_at(s_, mode_ == Sampling::unique ? permute(index) : index, out);
  out.index = index;
}

Candidate sample(const SearchSpace& s, uint64_t seed, uint64_t index) {
  Candidate c;
  sample(s, seed, index, c);
  return c;
}

void encode(const SearchSpace& s, const Candidate& c, std::string& out) {
  const auto& rules = rules_of(s.family);
  out.clear();
  for (size_t i = 0; i < c.values.size(); ++i) {
    if (i) out += '_';
    for (size_t k = 0; k < c.values[i].size(); ++k) {
      if (k) out += '-';
      // The option's text made at load; a decoded value the file lacks is formatted here.
      const Choice& choice = s.stages[i].choices[k];
      const auto at = std::find(choice.options.begin(), choice.options.end(), c.values[i][k]);
      if (at != choice.options.end()) {
        out += choice.texts[size_t(at - choice.options.begin())];
      } else {
        out += rules[k].token;
        out += number_text(c.values[i][k]);
      }
    }
  }
}

std::string encode(const SearchSpace& s, const Candidate& c) {
  std::string out;
  encode(s, c, out);
  return out;
}

Candidate decode(const SearchSpace& s, const std::string& encoding) {
  const auto& rules = rules_of(s.family);
  Candidate c;
  size_t pos = 0;
  for (size_t i = 0; i < s.stages.size(); ++i) {
    if (pos > encoding.size())  // substr past the end would throw out_of_range, not say what is wrong
      throw InputError(s.source_file, fmt::format("encoding '{}' has {} of the space's {} stages", printable(encoding), i,
                                                  s.stages.size()));
    const size_t end = std::min(encoding.find('_', pos), encoding.size());
    const std::string stage = encoding.substr(pos, end - pos);
    std::vector<double> values;
    size_t p = 0;
    for (size_t k = 0; k < rules.size(); ++k) {
      const size_t e = std::min(stage.find('-', p), stage.size());
      const std::string token = p <= stage.size() ? stage.substr(p, e - p) : std::string();  // a missing choice
      const std::string want = rules[k].token;
      if (token.rfind(want, 0) != 0)
        throw InputError(s.source_file, fmt::format("encoding '{}': stage {} lacks '{}'", printable(encoding), i, want));
      double v = 0;
      if (!parse_number(token.substr(want.size()), v))  // not strtod: the C locale may be another's
        throw InputError(s.source_file, fmt::format("encoding '{}': '{}' is not a number", printable(encoding), printable(token)));
      // Only the space's own options: a value outside them (7 where the file
      // offers 3 and 5, NaN, -1) would be costed as a network the space does not hold.
      if (i < s.stages.size() && k < s.stages[i].choices.size()) {
        const auto& options = s.stages[i].choices[k].options;
        if (std::find(options.begin(), options.end(), v) == options.end())
          throw InputError(s.source_file, fmt::format("encoding '{}': stage {}'s '{}' is not one of the space's options",
                                                      printable(encoding), i, printable(token)));
      }
      values.push_back(v);
      p = e + 1;
    }
    // A token past the last choice would be dropped unread: the candidate costed would not be the one named.
    if (p < stage.size())
      throw InputError(s.source_file, fmt::format("encoding '{}': stage {} has more than its {} choices ('{}')",
                                                  printable(encoding), i, rules.size(), printable(stage.substr(p))));
    c.values.push_back(std::move(values));
    pos = end + 1;
  }
  if (pos < encoding.size())
    throw InputError(s.source_file, fmt::format("encoding '{}' has more than the space's {} stages", printable(encoding),
                                                s.stages.size()));
  // One spelling per candidate ("d2", not "d2.0" or "d02"): a row's encoding is then the space's own, and equal
  // encodings are equal candidates.
  if (const std::string own = encode(s, c); own != encoding)
    throw InputError(s.source_file, fmt::format("encoding '{}' is not as the space writes it: '{}'", printable(encoding),
                                                printable(own)));
  return c;
}

void blocks_of(const SearchSpace& s, const Candidate& c, std::vector<Block>& blocks) {
  using K = Block::Kind;
  blocks.clear();
  if (s.family == Family::mbconv) {
    blocks.push_back({K::stem, {s.stem_width}});
    for (const auto& v : c.values)  // depth, width, expansion, kernel, se, stride
      for (int64_t d = 0; d < int64_t(v[0]); ++d)
        blocks.push_back({K::mbconv, {int64_t(v[1]), int64_t(std::lround(v[2] * 100)), int64_t(v[3]),
                                      d == 0 ? int64_t(v[5]) : 1, int64_t(v[4])}});
  } else if (s.family == Family::regnet) {
    const auto& v = c.values.at(0);  // depth, w0, wa, wm, group_width, bottleneck, se
    blocks.push_back({K::stem, {s.stem_width}});
    for (const auto& st : regnet_stages(v[0], v[1], v[2], v[3], v[4], v[5]))
      for (int64_t d = 0; d < st.depth; ++d)
        blocks.push_back({K::xblock, {st.width, d == 0 ? 2 : 1, st.group_width, int64_t(std::lround(v[5] * 100)),
                                      int64_t(v[6])}});
  } else {
    blocks.push_back({K::resnet_stem, {s.stem_width}});
    for (const auto& v : c.values)  // depth, width, bottleneck, stride
      for (int64_t d = 0; d < int64_t(v[0]); ++d)
        blocks.push_back({v[2] != 0 ? K::bottleneck : K::basic, {int64_t(v[1]), d == 0 ? int64_t(v[3]) : 1}});
  }
  blocks.push_back({K::head, {s.head_width, s.classes}});
}

std::vector<Block> blocks_of(const SearchSpace& s, const Candidate& c) {
  std::vector<Block> blocks;
  blocks_of(s, c, blocks);
  return blocks;
}

}  // namespace tilewave::space
