// The vim25 XML document: namespaces resolved as declared, xsi:type under any prefix, hostile input refused.
#include "protocol/vim25/xml.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace bootstorm::vsphere::vim25;

TEST(Vim25Xml, XsiTypeIsResolvedThroughTheDeclaredPrefixNotItsSpelling) {
  // govmomi's simulator declares the schema-instance namespace as "XMLSchema-instance".
  const std::string text =
      R"(<a xmlns="urn:vim25" xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance">)"
      R"(<val XMLSchema-instance:type="ArrayOfManagedObjectReference"><x type="VirtualMachine">vm-1</x></val>)"
      R"(<w xmlns:q="urn:vim25" XMLSchema-instance:type="q:GuestNicInfo"/>)"
      R"(<u XMLSchema-instance:type="nope:Thing"/>)"
      R"(<y xmlns:xsi="urn:not-the-schema-instance" xsi:type="Fake"/></a>)";
  auto doc = XmlDocument::parse(text, "test");
  ASSERT_TRUE(doc) << doc.error().what();
  XmlNode val = doc->root().child("val");
  ASSERT_TRUE(val);
  auto type = val.xsi_type();
  ASSERT_TRUE(type);
  EXPECT_EQ(type->local, "ArrayOfManagedObjectReference");
  EXPECT_EQ(type->ns, "urn:vim25");  // no prefix: the default namespace
  EXPECT_EQ(val.ns(), "urn:vim25");
  EXPECT_EQ(val.child("x").attribute("type"), "VirtualMachine");
  EXPECT_EQ(val.child("x").text(), "vm-1");
  auto w = doc->root().child("w").xsi_type();
  ASSERT_TRUE(w);
  EXPECT_EQ(w->ns, "urn:vim25");
  EXPECT_EQ(w->local, "GuestNicInfo");
  EXPECT_FALSE(doc->root().child("u").xsi_type());  // undeclared prefix
  // A prefix spelled "xsi" bound to another namespace is not xsi:type.
  EXPECT_FALSE(doc->root().child("y").xsi_type());
  EXPECT_EQ(doc->root().child("y").type_name(), "");
}

TEST(Vim25Xml, ElementChildrenSkipTextAndComments) {
  auto doc = XmlDocument::parse("<r>text<!-- c --><a>1</a> <b/><a>2</a><?pi x?></r>", "test");
  ASSERT_TRUE(doc);
  auto as = doc->root().children("a");
  ASSERT_EQ(as.size(), 2u);
  EXPECT_EQ(as[1].text(), "2");
  EXPECT_EQ(doc->root().children().size(), 3u);
  EXPECT_EQ(doc->root().child_text("b"), "");
  EXPECT_FALSE(doc->root().child_text("c"));
  // An absent node answers everything with nothing.
  XmlNode none = doc->root().child("zzz").child("y");
  EXPECT_FALSE(none);
  EXPECT_EQ(none.text(), "");
  EXPECT_FALSE(none.attribute("type"));
}

TEST(Vim25Xml, EntitiesOfXmlItselfAreDecoded) {
  auto doc = XmlDocument::parse("<r><m>a &amp; b &lt;c&gt; &#233;</m></r>", "test");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->root().child_text("m"), "a & b <c> \xc3\xa9");
}

TEST(Vim25Xml, ADoctypeIsRefusedSoNoEntityIsExpandedAndNothingIsLoaded) {
  const std::string laughs =
      "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;\">]>"
      "<r>&b;</r>";
  auto doc = XmlDocument::parse(laughs, "vim25 answer from https://vc/sdk");
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().kind, bootstorm::ErrorKind::protocol);
  EXPECT_NE(doc.error().message.find("DOCTYPE"), std::string::npos) << doc.error().message;
  const std::string external =
      "<?xml version=\"1.0\"?><!DOCTYPE r SYSTEM \"http://127.0.0.1:9/x.dtd\"><r>x</r>";
  EXPECT_FALSE(XmlDocument::parse(external, "test"));
}

TEST(Vim25Xml, MalformedInputNamesWhatAndWhere) {
  auto doc = XmlDocument::parse("<a>\n<b></a>", "vim25 Login answer from https://vc/sdk");
  ASSERT_FALSE(doc);
  const std::string m = doc.error().message;
  EXPECT_NE(m.find("vim25 Login answer from https://vc/sdk is not well-formed XML"), std::string::npos) << m;
  EXPECT_NE(m.find("line 2"), std::string::npos) << m;
  EXPECT_FALSE(XmlDocument::parse("", "test"));
  EXPECT_FALSE(XmlDocument::parse("not xml at all", "test"));
  XmlLimits small;
  small.max_bytes = 8;
  EXPECT_FALSE(XmlDocument::parse("<a>0123456789</a>", "test", small));
}

TEST(Vim25Xml, NestingBeyondLibxml2sLimitIsRefused) {
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "<a>";
  for (int i = 0; i < 300; ++i) deep += "</a>";
  EXPECT_FALSE(XmlDocument::parse(deep, "test"));
}

}  // namespace
