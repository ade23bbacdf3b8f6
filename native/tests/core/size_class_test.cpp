// Remaining-size classes (native/src/core/size_class.*) on their own: the map from remaining bytes to classes 1..7.
#include "core/size_class.hpp"

#include <gtest/gtest.h>

#include "core/engine.hpp"

using namespace netapprox::atp;

TEST(SizeClassTest, FirstBoundThatHoldsGivesTheClass) {
  const uint64_t b[size_class::kBounds] = {100, 200, 400, 800, 1600, 3200};
  EXPECT_EQ(size_class::class_of(0, b), 1);
  EXPECT_EQ(size_class::class_of(100, b), 1) << "a bound is inclusive";
  EXPECT_EQ(size_class::class_of(101, b), 2);
  EXPECT_EQ(size_class::class_of(800, b), 4);
  EXPECT_EQ(size_class::class_of(3200, b), 6);
  EXPECT_EQ(size_class::class_of(3201, b), 7) << "above every bound: the lowest priority";
  EXPECT_EQ(size_class::class_of(~uint64_t{0}, b), 7) << "unknown size (nothing submitted)";
}

TEST(SizeClassTest, BoundsMustBePositiveAndIncreasing) {
  const uint64_t ok[size_class::kBounds] = {1, 2, 3, 4, 5, 6};
  const uint64_t zero[size_class::kBounds] = {0, 2, 3, 4, 5, 6};
  const uint64_t flat[size_class::kBounds] = {1, 2, 2, 4, 5, 6};
  EXPECT_TRUE(size_class::bounds_valid(ok));
  EXPECT_FALSE(size_class::bounds_valid(zero));
  EXPECT_FALSE(size_class::bounds_valid(flat));
  EngineConfig c;
  EXPECT_TRUE(size_class::bounds_valid(c.size_class_bytes)) << "the defaults";
  EXPECT_EQ(c.validate(), "");
  c.size_class_bytes[3] = c.size_class_bytes[2];
  EXPECT_EQ(c.validate(), "size_class_bytes must be positive and increasing");
}
