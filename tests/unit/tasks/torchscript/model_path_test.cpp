#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tasks/torchscript/model_path.hpp"

namespace hpo {
namespace {

TEST(ModelPathTest, PlaceholdersAreFilledFromTheTrial) {
  std::vector<std::string> names;
  ASSERT_TRUE(ModelPathPlaceholders("m/net_w{width}_{act}_{width}.pt", &names).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"width", "act"}));
  std::string path;
  ASSERT_TRUE(ExpandModelPath("m/net_w{width}_{act}.pt",
                              {{"width", int64_t{32}}, {"act", std::string("relu")}}, &path)
                  .ok());
  EXPECT_EQ(path, "m/net_w32_relu.pt");
  EXPECT_EQ(ExpandModelPath("m/{depth}.pt", {}, &path).code(), Status::Code::kBadInput);
  EXPECT_EQ(ModelPathPlaceholders("m/{width.pt", &names).code(), Status::Code::kBadInput);
  EXPECT_EQ(ModelPathPlaceholders("m/{}.pt", &names).code(), Status::Code::kBadInput);
}

}  // namespace
}  // namespace hpo
