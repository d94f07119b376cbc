#pragma once
// Writes vim25 request bodies: elements in urn:vim25 with escaped text, xsi:type where the schema needs a
// derived type, and managed object references as <name type="VirtualMachine">vm-42</name>.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/vim25/types.hpp"
#include "protocol/vim25/xml.hpp"

namespace bootstorm::vsphere::vim25 {

class XmlWriter {
 public:
  // Starts the method element: <method xmlns="urn:vim25" xmlns:xsi=... xmlns:xsd=...>, so the element is
  // complete on its own (it is what the schema test validates) and the envelope adds nothing it needs.
  explicit XmlWriter(std::string_view method);
  // An element for inside a document that declares the namespaces already (a server's property value):
  // <name> or <name xsi:type="type">, without namespace declarations.
  static XmlWriter fragment(std::string_view name, std::string_view xsi_type = {});

  // <name> or <name xsi:type="type">; a type without a prefix is a vim25 type, "xsd:string" a schema one.
  XmlWriter& open(std::string_view name, std::string_view xsi_type = {});
  XmlWriter& close();
  XmlWriter& leaf(std::string_view name, std::string_view text, std::string_view xsi_type = {});
  XmlWriter& leaf(std::string_view name, const char* text) { return leaf(name, std::string_view(text)); }
  XmlWriter& leaf(std::string_view name, bool value);
  XmlWriter& leaf(std::string_view name, std::int64_t value, std::string_view xsi_type = {});
  XmlWriter& leaf(std::string_view name, int value) { return leaf(name, static_cast<std::int64_t>(value)); }
  XmlWriter& moref(std::string_view name, const MoRef& ref);

  // Closes every open element and returns the method element.
  std::string finish();

 private:
  XmlWriter() = default;
  std::string out_;
  std::vector<std::string> open_;
};

}  // namespace bootstorm::vsphere::vim25
