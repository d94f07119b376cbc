// The vim25 XML document (see xml.hpp).
#include "protocol/vim25/xml.hpp"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <climits>
#include <mutex>

namespace bootstorm::vsphere::vim25 {
namespace {

std::string_view view(const xmlChar* s) {
  return s ? std::string_view(reinterpret_cast<const char*>(s)) : std::string_view();
}

const xmlChar* to_xml(const std::string& s) {
  return reinterpret_cast<const xmlChar*>(s.c_str());
}

struct XmlString {
  xmlChar* p = nullptr;
  ~XmlString() { xmlFree(p); }
  std::string str() const { return p ? std::string(reinterpret_cast<const char*>(p)) : std::string(); }
};

void init_once() {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
}

// libxml2 reports some errors (an input encoding it cannot convert) through its generic error channel, which
// prints to stderr; the reason reaches the caller from the parser context instead. Per thread in libxml2.
void silence(void*, const char*, ...) {}

bool is_element(const xmlNode* n) {
  return n && n->type == XML_ELEMENT_NODE;
}

const xmlNode* next_element(const xmlNode* n) {
  while (n && !is_element(n)) n = n->next;
  return n;
}

}  // namespace

// --- XmlNode ---

std::string_view XmlNode::name() const {
  return node_ ? view(node_->name) : std::string_view();
}

std::string_view XmlNode::ns() const {
  return node_ && node_->ns ? view(node_->ns->href) : std::string_view();
}

std::string XmlNode::text() const {
  if (!node_) return {};
  XmlString s{xmlNodeGetContent(node_)};
  return s.str();
}

std::optional<std::string> XmlNode::attribute(std::string_view local, std::string_view ns) const {
  if (!node_) return std::nullopt;
  const std::string name(local);
  XmlString s;
  if (ns.empty()) {
    s.p = xmlGetNoNsProp(node_, to_xml(name));
  } else {
    const std::string uri(ns);
    s.p = xmlGetNsProp(node_, to_xml(name), to_xml(uri));
  }
  if (!s.p) return std::nullopt;
  return s.str();
}

std::optional<QName> XmlNode::xsi_type() const {
  auto value = attribute("type", kXsiNs);
  if (!value) return std::nullopt;
  std::string_view v = *value;
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.front() == '\n')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\n')) v.remove_suffix(1);
  const auto colon = v.find(':');
  const std::string prefix =
      colon == std::string_view::npos ? std::string() : std::string(v.substr(0, colon));
  const std::string_view local = colon == std::string_view::npos ? v : v.substr(colon + 1);
  if (local.empty()) return std::nullopt;
  const xmlNs* ns = xmlSearchNs(node_->doc, node_, prefix.empty() ? nullptr : to_xml(prefix));
  if (!ns && !prefix.empty()) return std::nullopt;
  return QName{ns ? std::string(view(ns->href)) : std::string(), std::string(local)};
}

std::string XmlNode::type_name() const {
  auto type = xsi_type();
  return type ? std::move(type->local) : std::string();
}

XmlNode XmlNode::first_child() const {
  if (!node_) return {};
  return XmlNode(const_cast<xmlNode*>(next_element(node_->children)));
}

XmlNode XmlNode::next_sibling() const {
  if (!node_) return {};
  return XmlNode(const_cast<xmlNode*>(next_element(node_->next)));
}

XmlNode XmlNode::child(std::string_view local) const {
  for (XmlNode c = first_child(); c; c = c.next_sibling()) {
    if (c.name() == local) return c;
  }
  return {};
}

std::vector<XmlNode> XmlNode::children(std::string_view local) const {
  std::vector<XmlNode> out;
  for (XmlNode c = first_child(); c; c = c.next_sibling()) {
    if (c.name() == local) out.push_back(c);
  }
  return out;
}

std::vector<XmlNode> XmlNode::children() const {
  std::vector<XmlNode> out;
  for (XmlNode c = first_child(); c; c = c.next_sibling()) out.push_back(c);
  return out;
}

std::optional<std::string> XmlNode::child_text(std::string_view local) const {
  XmlNode c = child(local);
  if (!c) return std::nullopt;
  return c.text();
}

// --- XmlDocument ---

void XmlDocument::Free::operator()(_xmlDoc* doc) const {
  xmlFreeDoc(doc);
}

Expected<XmlDocument> XmlDocument::parse(std::string_view text, std::string_view what, XmlLimits limits) {
  init_once();
  auto fail = [&](const std::string& reason) {
    return make_error(ErrorKind::protocol, std::string(what) + " is not well-formed XML: " + reason,
                      "the endpoint may not be a vCenter /sdk; check platform.endpoint");
  };
  if (text.size() > limits.max_bytes || text.size() > static_cast<std::size_t>(INT_MAX)) {
    return fail("it is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                std::to_string(limits.max_bytes));
  }
  if (text.empty()) return fail("the body is empty");
  xmlSetGenericErrorFunc(nullptr, silence);
  std::unique_ptr<xmlParserCtxt, void (*)(xmlParserCtxtPtr)> ctxt(xmlNewParserCtxt(), xmlFreeParserCtxt);
  if (!ctxt) throw std::bad_alloc();
  // No network, no entity substitution, no DTD loading; errors are collected, never printed.
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA;
  xmlDocPtr raw = xmlCtxtReadMemory(ctxt.get(), text.data(), static_cast<int>(text.size()), "vim25.xml",
                                    nullptr, options);
  XmlDocument doc;
  doc.doc_.reset(raw);
  if (!raw || !ctxt->wellFormed) {
    const xmlError* e = xmlCtxtGetLastError(ctxt.get());
    std::string reason = e && e->message ? e->message : "unknown parser error";
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
    if (e && e->line > 0) reason = "line " + std::to_string(e->line) + ": " + reason;
    return fail(reason);
  }
  if (raw->intSubset || raw->extSubset) return fail("it has a DOCTYPE, which SOAP does not allow");
  const xmlNode* root = xmlDocGetRootElement(raw);
  if (!root) return fail("there is no root element");
  return doc;
}

XmlNode XmlDocument::root() const {
  return XmlNode(doc_ ? xmlDocGetRootElement(doc_.get()) : nullptr);
}

}  // namespace bootstorm::vsphere::vim25
