//===- CalibrateTest.cpp - the accuracy target's agreement estimate -------===//
//
// driver::estimatedAgreement (compiler/Calibrate.h; docs/quantization.md,
// "The gate's estimate") on rows whose gaps and int8 shifts are worked out by
// hand in the comments: every row's shift is paired with every row's gaps,
// softmax rows are compared in log space, the margin multiplies the shifts,
// a non-finite int8 score flips every row it is paired with, and of many rows
// an evenly spaced sample takes part.
//
//===----------------------------------------------------------------------===//

#include "compiler/Calibrate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace dlc::driver;

namespace {

// Two rows of raw scores (not probabilities: one is negative).
// Row a: fp32 (1, 0), best class 0, gap 1; int8 (1, 1.5): shift 1.5.
// Row b: fp32 (-1, 1), best class 1, gap 2; int8 (-0.5, 1): shift 0.5.
const std::vector<float> kFp32 = {1, 0, -1, 1};
const std::vector<float> kInt8 = {1, 1.5f, -0.5f, 1};

TEST(EstimatedAgreement, PairsEveryRowsShiftWithEveryRowsGap) {
  // Pairs (shift of, gap of): (a, a) 1 < 1.5 flips; (a, b) 2 < 1.5,
  // (b, a) 1 < 0.5, (b, b) 2 < 0.5 do not: 1 of 4. Counting rows would
  // give 1 of 2 (row a flips).
  EXPECT_DOUBLE_EQ(estimatedAgreement(kFp32, kInt8, 2, 1.0), 0.75);
}

TEST(EstimatedAgreement, TheMarginMultipliesTheShifts) {
  // Shifts 3 and 1: (a, a) and (a, b) flip, (b, a) 1 < 1 does not.
  EXPECT_DOUBLE_EQ(estimatedAgreement(kFp32, kInt8, 2, 2.0), 0.5);
}

TEST(EstimatedAgreement, NoErrorOrOneClassAgrees) {
  EXPECT_DOUBLE_EQ(estimatedAgreement(kFp32, kFp32, 2, 3.0), 1.0);
  // Four rows of one class: argmax cannot differ.
  EXPECT_DOUBLE_EQ(estimatedAgreement(kFp32, kInt8, 1, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(estimatedAgreement({}, {}, 2, 1.0), 1.0);
}

TEST(EstimatedAgreement, SoftmaxRowsInLogSpace) {
  // Row A, confident: fp32 (0.98, 0.01, 0.01), int8 (0.96, 0.03, 0.01).
  // Row B, near a tie: fp32 (0.5, 0.45, 0.05), int8 (0.49, 0.46, 0.05).
  // In log space A's shift against its second class is
  // ln(3) - ln(0.96 / 0.98) = 1.12, B's gap to its second class
  // ln(0.5 / 0.45) = 0.105: (A, B) flips; A's gap ln 98 = 4.58 and B's shifts
  // (ln(0.46 / 0.45) - ln(0.49 / 0.5) = 0.042, and 0.020 against the third
  // class) flip nothing else: 1 of 4. As raw probabilities A's shift would
  // be 0.04 against B's gap 0.05, and nothing would flip.
  std::vector<float> fp32 = {0.98f, 0.01f, 0.01f, 0.5f, 0.45f, 0.05f};
  std::vector<float> int8 = {0.96f, 0.03f, 0.01f, 0.49f, 0.46f, 0.05f};
  EXPECT_DOUBLE_EQ(estimatedAgreement(fp32, int8, 3, 1.0), 0.75);
}

TEST(EstimatedAgreement, ANonFiniteScoreFlipsItsPairs) {
  // Row a's int8 scores NaN: (a, a) and (a, b) flip; b's shift 0.5 flips
  // neither gap.
  std::vector<float> int8 = {NAN, 1.5f, -0.5f, 1};
  EXPECT_DOUBLE_EQ(estimatedAgreement(kFp32, int8, 2, 1.0), 0.5);
}

TEST(EstimatedAgreement, ManyRowsAreSampledEvenly) {
  // 5000 rows of 3 scores: the estimate is that of rows t * 5000 / 4096.
  const size_t all = 5000, width = 3;
  std::vector<float> fp32, int8, fp32Kept, int8Kept;
  for (size_t r = 0; r < all; ++r)
    for (size_t k = 0; k < width; ++k) {
      fp32.push_back(std::sin(float(r * width + k)));
      int8.push_back(fp32.back() + 0.2f * std::cos(float(7 * r + k)));
    }
  for (size_t t = 0; t < kEstimateRows; ++t)
    for (size_t k = 0; k < width; ++k) {
      fp32Kept.push_back(fp32[(t * all / kEstimateRows) * width + k]);
      int8Kept.push_back(int8[(t * all / kEstimateRows) * width + k]);
    }
  double estimate = estimatedAgreement(fp32, int8, width, 1.0);
  EXPECT_DOUBLE_EQ(estimate,
                   estimatedAgreement(fp32Kept, int8Kept, width, 1.0));
  // The rows disagree often enough for the sampling to matter: the first
  // 4096 rows give another estimate.
  EXPECT_NE(estimate,
            estimatedAgreement(
                llvm::ArrayRef<float>(fp32).take_front(kEstimateRows * width),
                llvm::ArrayRef<float>(int8).take_front(kEstimateRows * width),
                width, 1.0));
  EXPECT_GT(estimate, 0.5);
  EXPECT_LT(estimate, 0.99);
}

} // namespace
