// The progress line's ETA: the pace since the phase's first VM was done, never the time before it.
#include "orchestrator/engine/progress.hpp"

#include <gtest/gtest.h>

namespace bootstorm::engine {
namespace {

TEST(ProgressLine, NoEtaBeforeThereIsAPaceAndThenThePaceSinceTheFirstDone) {
  ProgressCounts c;
  c.total = 24;
  c.provisioned = 1;
  // 190 s of cloning, then the first clone: nothing says how fast the others follow.
  EXPECT_EQ(Progress::render("provision", c, 193.1, Progress::FirstDone{193.1, 1}).find("ETA"),
            std::string::npos);
  EXPECT_EQ(Progress::render("provision", c, 193.1).find("ETA"), std::string::npos);
  // 12 more within a second of it: the other 11 are a second away, not an hour.
  c.provisioned = 13;
  const std::string line = Progress::render("provision", c, 194.1, Progress::FirstDone{193.1, 1});
  EXPECT_NE(line.find("| ETA 1 s"), std::string::npos) << line;
  EXPECT_NE(line.find("provisioned 13/24"), std::string::npos) << line;
}

TEST(ProgressLine, ReadyAndFailedCountInTheStormAndNothingIsLeftAtTheEnd) {
  ProgressCounts c;
  c.total = 10;
  c.ready = 4;
  c.failed = 1;
  EXPECT_EQ(Progress::done_in("observe", c), 5u);
  EXPECT_EQ(Progress::done_in("provision", c), 1u);
  const std::string line = Progress::render("observe", c, 20, Progress::FirstDone{10, 1});
  EXPECT_NE(line.find("| ETA 12 s"), std::string::npos) << line;  // 4 in 10 s, 5 to go
  c.ready = 9;
  EXPECT_EQ(Progress::render("observe", c, 30, Progress::FirstDone{10, 1}).find("ETA"), std::string::npos);
}

}  // namespace
}  // namespace bootstorm::engine
