//===- CliTest.cpp - the dlc command-line parser ----------------*- C++ -*-===//

#include "tools/dlc/Cli.h"

#include <gtest/gtest.h>

using dlc::cli::Invocation;

namespace {

bool parseArgs(std::vector<std::string> args, Invocation &inv,
               std::string &err) {
  return dlc::cli::parse(args, inv, err);
}

TEST(Cli, CompileWithEveryOption) {
  Invocation inv;
  std::string err;
  ASSERT_TRUE(
      parseArgs({"compile", "m.keras", "-o", "m.dlcm", "--precision=fp16",
                 "--arch", "sm_80,sm_90", "--batch", "8", "--kernels",
                 "library", "--emit", "mlir", "--mlir-print-ir-after-all"},
                inv, err))
      << err;
  EXPECT_EQ(inv.command, "compile");
  EXPECT_EQ(inv.positional, "m.keras");
  EXPECT_EQ(inv.get("-o"), "m.dlcm");
  EXPECT_EQ(inv.get("--precision"), "fp16");
  EXPECT_EQ(inv.get("--arch"), "sm_80,sm_90");
  EXPECT_EQ(inv.get("--batch"), "8");
  EXPECT_EQ(inv.get("--kernels"), "library");
  EXPECT_EQ(inv.get("--emit"), "mlir");
  EXPECT_TRUE(inv.has("--mlir-print-ir-after-all"));
}

TEST(Cli, OutputAlias) {
  Invocation inv;
  std::string err;
  ASSERT_TRUE(parseArgs({"compile", "m.keras", "--output=x.dlcm"}, inv, err));
  EXPECT_EQ(inv.get("-o"), "x.dlcm");
}

TEST(Cli, RunCollectsRepeatedInputsInOrder) {
  Invocation inv;
  std::string err;
  ASSERT_TRUE(parseArgs({"run", "m.dlcm", "--device", "cpu", "--input", "a.npy",
                         "--input", "b.npy", "--output", "y.npy"},
                        inv, err))
      << err;
  ASSERT_EQ(inv.values["--input"].size(), 2u);
  EXPECT_EQ(inv.values["--input"][0], "a.npy");
  EXPECT_EQ(inv.values["--input"][1], "b.npy");
}

TEST(Cli, RunRequiresDeviceInputAndOutput) {
  Invocation inv;
  std::string err;
  EXPECT_FALSE(parseArgs(
      {"run", "m.dlcm", "--input", "a.npy", "--output", "y.npy"}, inv, err));
  EXPECT_NE(err.find("--device"), std::string::npos) << err;
  EXPECT_FALSE(parseArgs(
      {"run", "m.dlcm", "--device", "cpu", "--output", "y.npy"}, inv, err));
  EXPECT_NE(err.find("--input"), std::string::npos) << err;
}

struct BadCase {
  std::string name;
  std::vector<std::string> args;
  std::string expected;
};

void PrintTo(const BadCase &c, std::ostream *os) { *os << c.name; }

class CliErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(CliErrors, Rejects) {
  Invocation inv;
  std::string err;
  EXPECT_FALSE(parseArgs(GetParam().args, inv, err));
  EXPECT_NE(err.find(GetParam().expected), std::string::npos) << err;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CliErrors,
    ::testing::Values(
        BadCase{"NoCommand", {}, "no command"},
        BadCase{
            "UnknownCommand", {"frobnicate"}, "unknown command 'frobnicate'"},
        BadCase{"MissingModel", {"compile"}, "missing MODEL"},
        BadCase{"BadPrecision",
                {"compile", "m.keras", "--precision", "fp8"},
                "invalid value 'fp8' for --precision"},
        BadCase{"ZeroBatch",
                {"compile", "m.keras", "--batch", "0"},
                "expected a positive integer"},
        BadCase{"NegativeBatch",
                {"compile", "m.keras", "--batch", "-3"},
                "expected a positive integer"},
        BadCase{"BadArch",
                {"compile", "m.keras", "--arch", "sm80"},
                "invalid value 'sm80' for --arch"},
        BadCase{"UnknownOption",
                {"compile", "m.keras", "--bogus"},
                "unknown option '--bogus'"},
        BadCase{"MissingValue", {"compile", "m.keras", "-o"}, "needs a value"},
        BadCase{"TwoModels",
                {"compile", "a.keras", "b.keras"},
                "unexpected argument 'b.keras'"},
        BadCase{"RepeatedOption",
                {"compile", "m.keras", "-o", "a", "-o", "b"},
                "given more than once"},
        BadCase{"FlagWithValue",
                {"compile", "m.keras", "--mlir-print-ir-after-all=1"},
                "takes no value"},
        BadCase{
            "BadDevice",
            {"run", "m", "--device", "tpu", "--input", "x", "--output", "y"},
            "invalid value 'tpu' for --device"},
        BadCase{"OptionOfAnotherCommand",
                {"inspect", "m", "--batch", "2"},
                "unknown option '--batch'"}),
    [](const ::testing::TestParamInfo<BadCase> &info) {
      return info.param.name;
    });

TEST(Cli, HelpListsEveryCommandAndOption) {
  std::string top = dlc::cli::helpText("");
  for (const auto &c : dlc::cli::commands()) {
    EXPECT_NE(top.find(c.name), std::string::npos) << c.name;
    std::string sub = dlc::cli::helpText(c.name);
    for (const auto &o : c.options)
      EXPECT_NE(sub.find(o.name), std::string::npos) << c.name << " " << o.name;
  }
}

TEST(Cli, HelpAnywhereWins) {
  Invocation inv;
  std::string err;
  ASSERT_TRUE(parseArgs({"run", "--help"}, inv, err));
  EXPECT_TRUE(inv.help);
  EXPECT_EQ(inv.command, "run");
}

} // namespace
