// vim25 request bodies (see xml_writer.hpp).
#include "protocol/vim25/xml_writer.hpp"

#include <cassert>

#include "common/xml_text.hpp"

namespace bootstorm::vsphere::vim25 {

XmlWriter XmlWriter::fragment(std::string_view name, std::string_view xsi_type) {
  XmlWriter w;
  w.open(name, xsi_type);
  return w;
}

XmlWriter::XmlWriter(std::string_view method) {
  out_.reserve(256);
  out_.append("<").append(method).append(" xmlns=\"urn:vim25\" xmlns:xsi=\"");
  out_.append(kXsiNs).append("\" xmlns:xsd=\"").append(kXsdNs).append("\">");
  open_.emplace_back(method);
}

XmlWriter& XmlWriter::open(std::string_view name, std::string_view xsi_type) {
  out_.append("<").append(name);
  if (!xsi_type.empty()) out_.append(" xsi:type=\"").append(escape_xml(xsi_type)).append("\"");
  out_ += '>';
  open_.emplace_back(name);
  return *this;
}

XmlWriter& XmlWriter::close() {
  assert(open_.size() > 1 && "close() of the method element: use finish()");
  out_.append("</").append(open_.back()).append(">");
  open_.pop_back();
  return *this;
}

XmlWriter& XmlWriter::leaf(std::string_view name, std::string_view text, std::string_view xsi_type) {
  out_.append("<").append(name);
  if (!xsi_type.empty()) out_.append(" xsi:type=\"").append(escape_xml(xsi_type)).append("\"");
  out_.append(">").append(escape_xml(text)).append("</").append(name).append(">");
  return *this;
}

XmlWriter& XmlWriter::leaf(std::string_view name, bool value) {
  return leaf(name, std::string_view(value ? "true" : "false"));
}

XmlWriter& XmlWriter::leaf(std::string_view name, std::int64_t value, std::string_view xsi_type) {
  return leaf(name, std::string_view(std::to_string(value)), xsi_type);
}

XmlWriter& XmlWriter::moref(std::string_view name, const MoRef& ref) {
  out_.append("<").append(name).append(" type=\"").append(escape_xml(ref.type)).append("\">");
  out_.append(escape_xml(ref.value)).append("</").append(name).append(">");
  return *this;
}

std::string XmlWriter::finish() {
  while (!open_.empty()) {
    out_.append("</").append(open_.back()).append(">");
    open_.pop_back();
  }
  return std::move(out_);
}

}  // namespace bootstorm::vsphere::vim25
