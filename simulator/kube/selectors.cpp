#include "simulator/kube/selectors.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

namespace bootstorm::sim::kube {
namespace {

using json = nlohmann::json;

bool is_label_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/';
}

void skip_spaces(std::string_view text, std::size_t& pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
}

std::string read_token(std::string_view text, std::size_t& pos) {
  skip_spaces(text, pos);
  std::size_t start = pos;
  while (pos < text.size() && is_label_char(text[pos])) ++pos;
  return std::string(text.substr(start, pos - start));
}

Error selector_error(std::string_view text, std::string_view why) {
  return make_error(ErrorKind::invalid_input, "unable to parse requirement: " + std::string(why) +
                                                  " in selector \"" + std::string(text) + "\"");
}

bool valid_label_value(std::string_view value) {
  if (value.size() > 63) return false;
  if (value.empty()) return true;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(value.front()) || !alnum(value.back())) return false;
  return std::all_of(value.begin(), value.end(),
                     [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool valid_label_key(std::string_view key) {
  if (key.empty()) return false;
  auto slash = key.find('/');
  std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  if (slash != std::string_view::npos) {
    std::string_view prefix = key.substr(0, slash);
    if (prefix.empty() || prefix.size() > 253 || name.find('/') != std::string_view::npos) return false;
  }
  return !name.empty() && valid_label_value(name);
}

std::optional<long long> to_integer(std::string_view text) {
  long long value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

Expected<LabelSelector> LabelSelector::parse(std::string_view text) {
  LabelSelector selector;
  std::size_t pos = 0;
  skip_spaces(text, pos);
  if (pos == text.size()) return selector;
  while (true) {
    Requirement req;
    skip_spaces(text, pos);
    bool negated = false;
    if (pos < text.size() && text[pos] == '!') {
      negated = true;
      ++pos;
    }
    req.key = read_token(text, pos);
    if (!valid_label_key(req.key)) return selector_error(text, "invalid label key \"" + req.key + "\"");
    skip_spaces(text, pos);
    if (negated) {
      req.op = Op::not_exists;
    } else if (pos >= text.size() || text[pos] == ',') {
      req.op = Op::exists;
    } else if (text.compare(pos, 2, "==") == 0 || text.compare(pos, 2, "!=") == 0 || text[pos] == '=' ||
               text[pos] == '>' || text[pos] == '<') {
      if (text.compare(pos, 2, "==") == 0) {
        req.op = Op::equals;
        pos += 2;
      } else if (text.compare(pos, 2, "!=") == 0) {
        req.op = Op::not_equals;
        pos += 2;
      } else {
        req.op = text[pos] == '=' ? Op::equals : text[pos] == '>' ? Op::greater : Op::less;
        ++pos;
      }
      std::string value = read_token(text, pos);
      if (!valid_label_value(value) || value.find('/') != std::string::npos) {
        return selector_error(text, "invalid label value \"" + value + "\"");
      }
      if ((req.op == Op::greater || req.op == Op::less) && !to_integer(value)) {
        return selector_error(text, "for 'Gt', 'Lt' operators, the value must be an integer");
      }
      req.values.push_back(std::move(value));
    } else {
      std::string word = read_token(text, pos);
      if (word == "in") {
        req.op = Op::in;
      } else if (word == "notin") {
        req.op = Op::not_in;
      } else {
        return selector_error(text, "found '" + word + "', expected: '=', '!=', '==', 'in', notin'");
      }
      skip_spaces(text, pos);
      if (pos >= text.size() || text[pos] != '(') return selector_error(text, "expected '('");
      ++pos;
      skip_spaces(text, pos);
      if (pos < text.size() && text[pos] == ')') {
        return selector_error(text, "for 'in', 'notin' operators, values set can't be empty");
      }
      while (true) {
        std::string value = read_token(text, pos);
        if (!valid_label_value(value)) return selector_error(text, "invalid label value \"" + value + "\"");
        req.values.push_back(std::move(value));
        skip_spaces(text, pos);
        if (pos < text.size() && text[pos] == ',') {
          ++pos;
          continue;
        }
        if (pos < text.size() && text[pos] == ')') {
          ++pos;
          break;
        }
        return selector_error(text, "expected ',' or ')'");
      }
      if (req.values.empty())
        return selector_error(text, "for 'in', 'notin' operators, values set can't be empty");
    }
    selector.requirements_.push_back(std::move(req));
    skip_spaces(text, pos);
    if (pos >= text.size()) break;
    if (text[pos] != ',') return selector_error(text, "expected ','");
    ++pos;
  }
  return selector;
}

bool LabelSelector::matches(const json& labels) const {
  for (const auto& req : requirements_) {
    const std::string* value = nullptr;
    if (labels.is_object()) {
      auto it = labels.find(req.key);
      if (it != labels.end() && it->is_string()) value = it->get_ptr<const std::string*>();
    }
    switch (req.op) {
      case Op::exists:
        if (!value) return false;
        break;
      case Op::not_exists:
        if (value) return false;
        break;
      case Op::equals:
        if (!value || *value != req.values.front()) return false;
        break;
      case Op::not_equals:
        if (value && *value == req.values.front()) return false;
        break;
      case Op::in:
        if (!value || std::find(req.values.begin(), req.values.end(), *value) == req.values.end())
          return false;
        break;
      case Op::not_in:
        if (value && std::find(req.values.begin(), req.values.end(), *value) != req.values.end())
          return false;
        break;
      case Op::greater:
      case Op::less: {
        if (!value) return false;
        auto have = to_integer(*value);
        auto want = to_integer(req.values.front());
        if (!have || !want) return false;
        if (req.op == Op::greater ? !(*have > *want) : !(*have < *want)) return false;
        break;
      }
    }
  }
  return true;
}

Expected<FieldSelector> FieldSelector::parse(std::string_view text,
                                             const std::vector<std::string>& supported) {
  FieldSelector selector;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string_view term =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!term.empty() && term.front() == ' ') term.remove_prefix(1);
    while (!term.empty() && term.back() == ' ') term.remove_suffix(1);
    if (!term.empty()) {
      Requirement req;
      std::size_t op = term.find_first_of("!=");
      if (op == std::string_view::npos || op == 0) {
        return make_error(ErrorKind::invalid_input, "invalid selector: '" + std::string(text) +
                                                        "'; can't understand '" + std::string(term) + "'");
      }
      req.path = std::string(term.substr(0, op));
      std::string_view rest = term.substr(op);
      if (rest.starts_with("!=")) {
        req.negate = true;
        rest.remove_prefix(2);
      } else if (rest.starts_with("==")) {
        rest.remove_prefix(2);
      } else if (rest.starts_with("=")) {
        rest.remove_prefix(1);
      } else {
        return make_error(ErrorKind::invalid_input, "invalid selector: '" + std::string(text) +
                                                        "'; can't understand '" + std::string(term) + "'");
      }
      req.value = std::string(rest);
      if (std::find(supported.begin(), supported.end(), req.path) == supported.end()) {
        return make_error(ErrorKind::invalid_input, "field label not supported: " + req.path);
      }
      selector.requirements_.push_back(std::move(req));
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return selector;
}

bool FieldSelector::matches(const json& object) const {
  for (const auto& req : requirements_) {
    const json* node = &object;
    std::size_t start = 0;
    while (node && start <= req.path.size()) {
      std::size_t dot = req.path.find('.', start);
      std::string key = req.path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (!node->is_object()) {
        node = nullptr;
        break;
      }
      auto it = node->find(key);
      node = it == node->end() ? nullptr : &*it;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    std::string value;
    if (node) {
      if (node->is_string()) {
        value = node->get<std::string>();
      } else if (node->is_boolean() || node->is_number()) {
        value = node->dump();
      }
    }
    if ((value == req.value) == req.negate) return false;
  }
  return true;
}

}  // namespace bootstorm::sim::kube
