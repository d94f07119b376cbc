#pragma once
// XML and HTML text, the one escaper of the tree: vim25 request bodies, the lab's /sdk answers, report.html,
// its SVG figures, junit.xml and capacity.html.
#include <string>
#include <string_view>

namespace bootstorm {

// &, <, >, " and ' escaped (&amp; &lt; &gt; &quot; &#39;), so the result is safe in element text and in
// either kind of quoted attribute, in XML and in HTML alike. A control character that XML 1.0 cannot carry
// (all below 0x20 but tab, LF and CR) becomes a space: the document stays well-formed and the words stay
// apart.
std::string escape_xml(std::string_view text);

}  // namespace bootstorm
