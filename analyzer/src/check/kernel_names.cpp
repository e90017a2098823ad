// Kernel-name rules (tilewave/kernel_names.h), read once from the JSON the
// build compiles in: the same file calibrate/pair/kernel_names.py reads, so
// the two classify every name alike (tests/python/test_kernel_names.py).
#include "tilewave/kernel_names.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tilewave {

extern const char kKernelNamesJson[];

namespace {

struct Rule {
  std::string cls;
  bool fold = false;  // compare lower-cased
  std::vector<std::string> any, all, none, prefix;
};

struct Vocabulary {
  std::vector<Rule> rules;
  std::string otherwise;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

struct Rules {
  std::vector<std::string> order;
  std::map<std::string, Vocabulary> by_name;
};

const Rules& rules() {
  static const Rules parsed = [] {
    Rules out;
    const auto j = nlohmann::ordered_json::parse(kKernelNamesJson);  // the file's order of vocabularies
    for (const auto& [name, v] : j.at("vocabularies").items()) {
      Vocabulary voc;
      voc.otherwise = v.at("otherwise").get<std::string>();
      const bool fold_all = v.value("case", std::string("sensitive")) == "insensitive";
      for (const auto& r : v.at("rules")) {
        Rule rule;
        rule.cls = r.at("class").get<std::string>();
        rule.fold = r.contains("case") ? r["case"].get<std::string>() == "insensitive" : fold_all;
        for (auto [key, list] : {std::pair{"any", &rule.any}, std::pair{"all", &rule.all},
                                 std::pair{"none", &rule.none}, std::pair{"prefix", &rule.prefix}})
          if (r.contains(key))
            for (const auto& s : r[key]) list->push_back(rule.fold ? lower(s.get<std::string>()) : s.get<std::string>());
        voc.rules.push_back(std::move(rule));
      }
      out.order.push_back(name);
      out.by_name.emplace(name, std::move(voc));
    }
    return out;
  }();
  return parsed;
}

bool matches(const Rule& r, const std::string& name) {
  auto has = [&](const std::string& s) { return name.find(s) != std::string::npos; };
  if (!r.prefix.empty() &&
      std::none_of(r.prefix.begin(), r.prefix.end(), [&](const std::string& p) { return name.rfind(p, 0) == 0; }))
    return false;
  if (!r.any.empty() && std::none_of(r.any.begin(), r.any.end(), has)) return false;
  if (!std::all_of(r.all.begin(), r.all.end(), has)) return false;
  return std::none_of(r.none.begin(), r.none.end(), has);
}

}  // namespace

const std::string& kernel_class_of_name(const std::string& name, const std::string& vocabulary) {
  const auto it = rules().by_name.find(vocabulary);
  if (it == rules().by_name.end()) throw std::invalid_argument("no kernel-name vocabulary '" + vocabulary + "'");
  const std::string lowered = lower(name);
  for (const Rule& r : it->second.rules)
    if (matches(r, r.fold ? lowered : name)) return r.cls;
  return it->second.otherwise;
}

std::vector<std::string> kernel_name_vocabularies() { return rules().order; }

}  // namespace tilewave
