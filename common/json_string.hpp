#pragma once
// JSON string literals, the one escaper of the tree: the JSON log lines and the lab's Prometheus answers. It
// writes what Go's encoding/json writes, so the lab's answers match a real Prometheus byte for byte: '"',
// '\\', \n, \r and \t as two-character escapes, other control characters and U+2028/U+2029 as \u escapes,
// invalid UTF-8 (a stray byte, a truncated sequence, a surrogate, an overlong form) as U+FFFD, one per byte.
// Whatever the input, the output is valid JSON.
#include <string>
#include <string_view>

namespace bootstorm {

// Html::escape also writes <, > and & as \u003c, \u003e and \u0026, as encoding/json does by default (what a
// Prometheus server answers); Html::keep leaves them, for text a person reads (logs).
enum class JsonHtml { keep, escape };

// The literal with its quotes: json_quoted("a\"b") is "\"a\\\"b\"".
std::string json_quoted(std::string_view text, JsonHtml html = JsonHtml::keep);

}  // namespace bootstorm
