#pragma once
// A namespace-aware, read-only XML document over libxml2, for vim25 SOAP responses.
//
// vim25 answers name their types with xsi:type under whatever prefix the server declared (vCenter writes
// `xsi:type`, govmomi's simulator `XMLSchema-instance:type`), so a type is resolved through the namespace
// declarations in scope, never by comparing prefixes. Documents with a DTD are refused (SOAP forbids them,
// and with them go entity expansion and external loads); the network is never used while parsing.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.hpp"

struct _xmlNode;
struct _xmlDoc;

namespace bootstorm::vsphere::vim25 {

inline constexpr std::string_view kSoapEnvelopeNs = "http://schemas.xmlsoap.org/soap/envelope/";
inline constexpr std::string_view kVim25Ns = "urn:vim25";
inline constexpr std::string_view kXsiNs = "http://www.w3.org/2001/XMLSchema-instance";
inline constexpr std::string_view kXsdNs = "http://www.w3.org/2001/XMLSchema";

struct QName {
  std::string ns;     // namespace URI; empty when the name had no prefix and no default namespace applied
  std::string local;  // e.g. "VirtualMachine", "ArrayOfManagedObjectReference"
};

// A view of one element of an XmlDocument: valid while the document lives. A default-constructed node is
// "absent" (false), and every accessor of an absent node returns an empty result, so lookups chain.
class XmlNode {
 public:
  XmlNode() = default;
  explicit operator bool() const { return node_ != nullptr; }

  std::string_view name() const;  // the local name
  std::string_view ns() const;    // the namespace URI, "" when none
  bool is(std::string_view ns, std::string_view local) const { return name() == local && this->ns() == ns; }

  // The text content of the element and its descendants, entity references as written.
  std::string text() const;
  // An attribute by local name and namespace URI ("" for an unqualified attribute).
  std::optional<std::string> attribute(std::string_view local, std::string_view ns = {}) const;
  // The element's xsi:type, resolved through the namespace declarations in scope (a name without a prefix
  // takes the default namespace). nullopt without xsi:type, or when its prefix is not declared.
  std::optional<QName> xsi_type() const;
  // xsi_type()'s local name, or "" (the common question: "which vim25 type is this?").
  std::string type_name() const;

  // Element children only (text, comments and processing instructions are skipped).
  XmlNode first_child() const;
  XmlNode next_sibling() const;
  // The first element child with this local name (any namespace: vim25 bodies are all in urn:vim25).
  XmlNode child(std::string_view local) const;
  std::vector<XmlNode> children(std::string_view local) const;
  std::vector<XmlNode> children() const;
  // text() of child(local), or nullopt when there is no such child.
  std::optional<std::string> child_text(std::string_view local) const;

 private:
  friend class XmlDocument;
  explicit XmlNode(_xmlNode* node) : node_(node) {}
  _xmlNode* node_ = nullptr;
};

// libxml2 itself refuses elements nested deeper than 256 and text nodes over 10 MB (no XML_PARSE_HUGE).
struct XmlLimits {
  std::size_t max_bytes = 256 * 1024 * 1024;  // a WaitForUpdatesEx answer for 10,000 VMs is tens of MB
};

class XmlDocument {
 public:
  // Parses `text`. Errors (ErrorKind::protocol) name `what` (e.g. "vim25 RetrieveServiceContent answer from
  // https://vc/sdk") and the line and reason libxml2 gives.
  static Expected<XmlDocument> parse(std::string_view text, std::string_view what, XmlLimits limits = {});

  XmlNode root() const;

 private:
  struct Free {
    void operator()(_xmlDoc* doc) const;
  };
  std::unique_ptr<_xmlDoc, Free> doc_;
};

}  // namespace bootstorm::vsphere::vim25
