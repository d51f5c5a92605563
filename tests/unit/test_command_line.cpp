// The trial command line of `command` sweeps against W&B's own spelling: every macro, the default
// command, Python's str/repr of floats across magnitudes, ints, booleans in each args form,
// json.dumps escaping, ${envvar:NAME}, unknown macro errors, ${args_json_file} detection, and a
// randomized round-trip check of PythonFloatRepr.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "program/command_line.hpp"

namespace hpo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A value as the expected tables write it.
struct TestValue {
  ParamValue value;
  bool boolean = false;
};

TestValue Int(int64_t value) { return {value}; }
TestValue Float(double value) { return {value}; }
TestValue Str(std::string value) { return {std::move(value)}; }
TestValue Bool(bool value) { return {std::string(value ? "true" : "false"), true}; }

struct ExpansionCase {
  const char* name;
  std::vector<std::string> command;
  std::vector<std::pair<std::string, TestValue>> args;
  std::map<std::string, std::string> env;
  std::vector<std::string> expected;
};

const char kProgram[] = "train.py";
const char kInterpreter[] = "python3";
const char kArgsJsonFile[] = "wandb/sweep-s1/config-r1.json";

// Produced by Python 3.11's str/repr/json.dumps following wandb's create_sweep_command and
// create_sweep_command_args (wandb/sdk/launch/sweeps/utils.py) and the agent's macro replacement
// (wandb/wandb_agent.py _command_run), with ${program} = train.py, ${interpreter} = python3 and
// ${args_json_file} = wandb/sweep-s1/config-r1.json. EnvVarBecomesMacro and the dropped
// ${envvar:NESTED} in EnvVars show W&B's treatment of environment values that are macros.
const std::vector<ExpansionCase> kExpansionCases = {
    {"DefaultTemplate",
     {"${env}", "${interpreter}", "${program}", "${args}"},
     {{"lr", Float(0.001)},
      {"epochs", Int(10)},
      {"optimizer", Str("adam")},
      {"nesterov", Bool(true)},
      {"amsgrad", Bool(false)},
      {"offset", Int(-3)}},
     {},
     {"/usr/bin/env", "python3", "train.py", "--lr=0.001", "--epochs=10", "--optimizer=adam",
      "--nesterov=True", "--amsgrad=False", "--offset=-3"}},
    {"EmptyTemplateIsDefault",
     {},
     {{"lr", Float(0.001)},
      {"epochs", Int(10)},
      {"optimizer", Str("adam")},
      {"nesterov", Bool(true)},
      {"amsgrad", Bool(false)},
      {"offset", Int(-3)}},
     {},
     {"/usr/bin/env", "python3", "train.py", "--lr=0.001", "--epochs=10", "--optimizer=adam",
      "--nesterov=True", "--amsgrad=False", "--offset=-3"}},
    {"EveryMacro",
     {"${env}", "${interpreter}", "${program}", "${args}", "${args_no_hyphens}",
      "${args_no_equals}", "${args_no_boolean_flags}", "${args_json}", "${args_json_file}"},
     {{"lr", Float(0.001)},
      {"epochs", Int(10)},
      {"optimizer", Str("adam")},
      {"nesterov", Bool(true)},
      {"amsgrad", Bool(false)},
      {"offset", Int(-3)}},
     {},
     {"/usr/bin/env",
      "python3",
      "train.py",
      "--lr=0.001",
      "--epochs=10",
      "--optimizer=adam",
      "--nesterov=True",
      "--amsgrad=False",
      "--offset=-3",
      "lr=0.001",
      "epochs=10",
      "optimizer=adam",
      "nesterov=True",
      "amsgrad=False",
      "offset=-3",
      "--lr",
      "0.001",
      "--epochs",
      "10",
      "--optimizer",
      "adam",
      "--nesterov",
      "True",
      "--amsgrad",
      "False",
      "--offset",
      "-3",
      "--lr=0.001",
      "--epochs=10",
      "--optimizer=adam",
      "--nesterov",
      "--offset=-3",
      "{\"lr\": 0.001, \"epochs\": 10, \"optimizer\": \"adam\", \"nesterov\": true, \"amsgrad\": "
      "false, \"offset\": -3}",
      "wandb/sweep-s1/config-r1.json"}},
    {"LiteralsKept",
     {"bash", "-c", "x${args}", "${args} ", "$args", "{args}", "--", "${program}"},
     {{"a", Int(1)}},
     {},
     {"bash", "-c", "x${args}", "${args} ", "$args", "{args}", "--", "train.py"}},
    {"EmptyArgs",
     {"${env}", "${interpreter}", "${program}", "${args}", "${args_no_hyphens}",
      "${args_no_equals}", "${args_no_boolean_flags}", "${args_json}", "${args_json_file}"},
     {},
     {},
     {"/usr/bin/env", "python3", "train.py", "{}", "wandb/sweep-s1/config-r1.json"}},
    {"Floats",
     {"${args}", "${args_no_equals}", "${args_json}"},
     {{"f0", Float(0.001)},
      {"f1", Float(1e-05)},
      {"f2", Float(0.0001)},
      {"f3", Float(3.0)},
      {"f4", Float(1e+16)},
      {"f5", Float(1000000000000000.0)},
      {"f6", Float(1.5e-07)},
      {"f7", Float(123456789.123)},
      {"f8", Float(-0.0)},
      {"f9", Float(kInf)},
      {"f10", Float(kNaN)},
      {"f11", Float(0.1)},
      {"f12", Float(0.3333333333333333)},
      {"f13", Float(2.5e-05)},
      {"f14", Float(1e+22)},
      {"f15", Float(5e-324)},
      {"f16", Float(1.7976931348623157e+308)},
      {"f17", Float(100.0)},
      {"f18", Float(1.2345678901234568e+16)},
      {"f19", Float(-2.5)},
      {"f20", Float(0.0)},
      {"f21", Float(-1e-300)},
      {"f22", Float(-kInf)}},
     {},
     {"--f0=0.001",
      "--f1=1e-05",
      "--f2=0.0001",
      "--f3=3.0",
      "--f4=1e+16",
      "--f5=1000000000000000.0",
      "--f6=1.5e-07",
      "--f7=123456789.123",
      "--f8=-0.0",
      "--f9=inf",
      "--f10=nan",
      "--f11=0.1",
      "--f12=0.3333333333333333",
      "--f13=2.5e-05",
      "--f14=1e+22",
      "--f15=5e-324",
      "--f16=1.7976931348623157e+308",
      "--f17=100.0",
      "--f18=1.2345678901234568e+16",
      "--f19=-2.5",
      "--f20=0.0",
      "--f21=-1e-300",
      "--f22=-inf",
      "--f0",
      "0.001",
      "--f1",
      "1e-05",
      "--f2",
      "0.0001",
      "--f3",
      "3.0",
      "--f4",
      "1e+16",
      "--f5",
      "1000000000000000.0",
      "--f6",
      "1.5e-07",
      "--f7",
      "123456789.123",
      "--f8",
      "-0.0",
      "--f9",
      "inf",
      "--f10",
      "nan",
      "--f11",
      "0.1",
      "--f12",
      "0.3333333333333333",
      "--f13",
      "2.5e-05",
      "--f14",
      "1e+22",
      "--f15",
      "5e-324",
      "--f16",
      "1.7976931348623157e+308",
      "--f17",
      "100.0",
      "--f18",
      "1.2345678901234568e+16",
      "--f19",
      "-2.5",
      "--f20",
      "0.0",
      "--f21",
      "-1e-300",
      "--f22",
      "-inf",
      "{\"f0\": 0.001, \"f1\": 1e-05, \"f2\": 0.0001, \"f3\": 3.0, \"f4\": 1e+16, \"f5\": "
      "1000000000000000.0, \"f6\": 1.5e-07, \"f7\": 123456789.123, \"f8\": -0.0, \"f9\": "
      "Infinity, \"f10\": NaN, \"f11\": 0.1, \"f12\": 0.3333333333333333, \"f13\": 2.5e-05, "
      "\"f14\": 1e+22, \"f15\": 5e-324, \"f16\": 1.7976931348623157e+308, \"f17\": 100.0, "
      "\"f18\": 1.2345678901234568e+16, \"f19\": -2.5, \"f20\": 0.0, \"f21\": -1e-300, \"f22\": "
      "-Infinity}"}},
    {"Ints",
     {"${args}", "${args_json}"},
     {{"zero", Int(0)},
      {"neg", Int(-42)},
      {"max", Int(INT64_C(9223372036854775807))},
      {"min", Int(std::numeric_limits<int64_t>::min())}},
     {},
     {"--zero=0", "--neg=-42", "--max=9223372036854775807", "--min=-9223372036854775808",
      "{\"zero\": 0, \"neg\": -42, \"max\": 9223372036854775807, \"min\": "
      "-9223372036854775808}"}},
    {"BooleansEachForm",
     {"${args}", "${args_no_hyphens}", "${args_no_equals}", "${args_no_boolean_flags}",
      "${args_json}"},
     {{"yes", Bool(true)}, {"no", Bool(false)}, {"word", Str("true")}},
     {},
     {"--yes=True", "--no=False", "--word=true", "yes=True", "no=False", "word=true", "--yes",
      "True", "--no", "False", "--word", "true", "--yes", "--word=true",
      "{\"yes\": true, \"no\": false, \"word\": \"true\"}"}},
    {"Strings",
     {"${args}", "${args_no_equals}", "${args_no_boolean_flags}", "${args_json}"},
     {{"s0", Str("with space")},
      {"s1", Str("say \"hi\"")},
      {"s2", Str("back\\slash")},
      {"s3", Str("line\nbreak")},
      {"s4", Str("tab\there")},
      {"s5", Str("bell\007\037\177")},
      {"s6", Str("café")},
      {"s7", Str("漢字")},
      {"s8", Str("rocket 🚀")},
      {"s9", Str("")},
      {"s10", Str("cr\r ff\014 bs\010")},
      {"s11", Str("${args}")}},
     {},
     {"--s0=with space",
      "--s1=say \"hi\"",
      "--s2=back\\slash",
      "--s3=line\nbreak",
      "--s4=tab\there",
      "--s5=bell\007\037\177",
      "--s6=café",
      "--s7=漢字",
      "--s8=rocket 🚀",
      "--s9=",
      "--s10=cr\r ff\014 bs\010",
      "--s11=${args}",
      "--s0",
      "with space",
      "--s1",
      "say \"hi\"",
      "--s2",
      "back\\slash",
      "--s3",
      "line\nbreak",
      "--s4",
      "tab\there",
      "--s5",
      "bell\007\037\177",
      "--s6",
      "café",
      "--s7",
      "漢字",
      "--s8",
      "rocket 🚀",
      "--s9",
      "",
      "--s10",
      "cr\r ff\014 bs\010",
      "--s11",
      "${args}",
      "--s0=with space",
      "--s1=say \"hi\"",
      "--s2=back\\slash",
      "--s3=line\nbreak",
      "--s4=tab\there",
      "--s5=bell\007\037\177",
      "--s6=café",
      "--s7=漢字",
      "--s8=rocket 🚀",
      "--s9=",
      "--s10=cr\r ff\014 bs\010",
      "--s11=${args}",
      "{\"s0\": \"with space\", \"s1\": \"say \\\"hi\\\"\", \"s2\": \"back\\\\slash\", \"s3\": "
      "\"line\\nbreak\", \"s4\": \"tab\\there\", \"s5\": \"bell\\u0007\\u001f\\u007f\", \"s6\": "
      "\"caf\\u00e9\", \"s7\": \"\\u6f22\\u5b57\", \"s8\": \"rocket \\ud83d\\ude80\", \"s9\": "
      "\"\", \"s10\": \"cr\\r ff\\f bs\\b\", \"s11\": \"${args}\"}"}},
    {"NonAsciiNames",
     {"${args}", "${args_json}"},
     {{"résumé", Int(1)}, {"k\"ey", Str("v")}},
     {},
     {"--résumé=1", "--k\"ey=v", "{\"r\\u00e9sum\\u00e9\": 1, \"k\\\"ey\": \"v\"}"}},
    {"EnvVars",
     {"${envvar:HOME_DIR}", "${envvar:UNSET_VAR}", "--out=${envvar:HOME_DIR}/run",
      "${envvar:A}:${envvar:B}", "[${envvar:}]", "x${envvar:lower}", "${envvar:EMPTY}",
      "${envvar:NESTED}", "${envvar:A}${envvar:A}", "${envvar:HOME_DIR", "$${envvar:A}}"},
     {{"a", Int(1)}},
     {{"HOME_DIR", "/data/home"},
      {"A", "alpha"},
      {"B", "beta"},
      {"EMPTY", ""},
      {"NESTED", "${envvar:A}"}},
     {"/data/home", "UNSET_VAR", "--out=/data/home/run", "alpha:beta", "[]", "x${envvar:lower}", "",
      "alphaalpha", "${envvar:HOME_DIR", "$alpha}"}},
    {"EnvVarBecomesMacro",
     {"${envvar:MACRO}", "${envvar:UNKNOWN_MACRO}", "${envvar:PROG}"},
     {{"a", Int(1)}, {"b", Str("x")}},
     {{"MACRO", "${args}"}, {"UNKNOWN_MACRO", "${nope}"}, {"PROG", "${program}"}},
     {"--a=1", "--b=x", "train.py"}},
};

std::vector<CommandArg> MakeArgs(const std::vector<std::pair<std::string, TestValue>>& spec) {
  std::vector<CommandArg> args;
  for (const auto& [name, value] : spec) args.push_back({name, value.value, value.boolean});
  return args;
}

CommandContext MakeContext(std::map<std::string, std::string> env) {
  CommandContext context;
  context.program = kProgram;
  context.interpreter = kInterpreter;
  context.args_json_file = kArgsJsonFile;
  context.getenv = [env = std::move(env)](const std::string& name) -> std::optional<std::string> {
    const auto found = env.find(name);
    if (found == env.end()) return std::nullopt;
    return found->second;
  };
  return context;
}

TEST(CommandLine, ExpandsLikeTheWandbAgent) {
  for (const ExpansionCase& c : kExpansionCases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(CheckCommandTemplate(c.command).ok());
    EXPECT_EQ(ExpandCommand(c.command, MakeArgs(c.args), MakeContext(c.env)), c.expected);
  }
}

TEST(CommandLine, DefaultTemplateIsWandbs) {
  EXPECT_EQ(DefaultCommandTemplate(),
            (std::vector<std::string>{"${env}", "${interpreter}", "${program}", "${args}"}));
}

TEST(CommandLine, ParamReferencesBecomeTheirValuesInsideAnyElement) {
  const std::vector<std::string> command = {"python3",
                                            "/opt/mnist.py",
                                            "--lr=${param:lr}",
                                            "${param:optimizer}",
                                            "--tag=${param:lr}-${param:batch}",
                                            "--x=${param:nope}",
                                            "--flag=${param:flag}"};
  EXPECT_TRUE(CheckCommandTemplate(command).ok());
  const std::vector<CommandArg> args = {{"lr", 1e-05},
                                        {"optimizer", std::string("adam")},
                                        {"batch", int64_t{64}},
                                        {"flag", std::string("true"), true}};
  EXPECT_EQ(ExpandCommand(command, args, MakeContext({})),
            (std::vector<std::string>{"python3", "/opt/mnist.py", "--lr=1e-05", "adam",
                                      "--tag=1e-05-64", "--x=${param:nope}", "--flag=True"}));
}

TEST(CommandLine, AnElementNamingAnAbsentParameterIsLeftOut) {
  // momentum exists only with sgd (conditions:); this trial is adam, so it lacks momentum. The
  // element that names it goes, also when it names a present one too; ${args} has no momentum.
  const std::vector<std::string> command = {"python3",
                                            "train.py",
                                            "--momentum=${param:momentum}",
                                            "--both=${param:lr}/${param:momentum}",
                                            "--lr=${param:lr}",
                                            "--x=${param:nope}",
                                            "${args}"};
  const std::vector<CommandArg> args = {{"lr", 0.01}, {"optimizer", std::string("adam")}};
  CommandContext context = MakeContext({});
  context.absent_parameters = {"momentum"};
  EXPECT_EQ(ExpandCommand(command, args, context),
            (std::vector<std::string>{"python3", "train.py", "--lr=0.01", "--x=${param:nope}",
                                      "--lr=0.01", "--optimizer=adam"}));
}

TEST(CommandLine, PythonStrOfEachType) {
  EXPECT_EQ(PythonStr({"a", int64_t{-7}}), "-7");
  EXPECT_EQ(PythonStr({"a", 2.5e-05}), "2.5e-05");
  EXPECT_EQ(PythonStr({"a", std::string("true")}), "true");
  EXPECT_EQ(PythonStr({"a", std::string("true"), true}), "True");
  EXPECT_EQ(PythonStr({"a", std::string("false"), true}), "False");
}

TEST(CommandLine, JsonDumpsReplacesInvalidUtf8) {
  // Python: json.dumps(data.decode("utf-8", "replace")). Unreachable from YAML, whose strings are
  // valid Unicode.
  const std::pair<std::string, std::string> kInvalid[] = {
      {"a\377b", "a\\ufffdb"},
      {"\xc0\x80", "\\ufffd\\ufffd"},
      {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},
      {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"},
      {"\xf0\x9f\x9a", "\\ufffd"},
      {"\346\274a\346b", "\\ufffda\\ufffdb"},
      {"\xf0\x9f\x9a\x80\x80", "\\ud83d\\ude80\\ufffd"},
  };
  for (const auto& [bytes, escaped] : kInvalid) {
    EXPECT_EQ(PythonJsonDumps({{"k", bytes}}), "{\"k\": \"" + escaped + "\"}");
  }
  EXPECT_EQ(PythonJsonDumps({}), "{}");
}

TEST(CommandLine, CheckAcceptsKnownMacrosLiteralsAndEnvVars) {
  EXPECT_TRUE(CheckCommandTemplate({}).ok());
  EXPECT_TRUE(CheckCommandTemplate(DefaultCommandTemplate()).ok());
  EXPECT_TRUE(
      CheckCommandTemplate({"${env}", "${interpreter}", "${program}", "${args}",
                            "${args_no_hyphens}", "${args_no_equals}", "${args_no_boolean_flags}",
                            "${args_json}", "${args_json_file}"})
          .ok());
  EXPECT_TRUE(CheckCommandTemplate({"${envvar:HOME}", "${envvar:}", "${envvar:A}${envvar:B}",
                                    "${envvar:A}x${foo}", "${envvar:A}}", "x${foo}", "${foo",
                                    "$foo}", "", "$"})
                  .ok());
}

TEST(CommandLine, CheckRejectsUnknownMacros) {
  const Status status = CheckCommandTemplate({"${env}", "python", "${foo}", "${bar}"});
  EXPECT_EQ(status.code(), Status::Code::kBadInput);
  EXPECT_EQ(status.message(),
            "command[2]: unknown macro '${foo}' (known: ${env}, ${interpreter}, ${program}, "
            "${args}, ${args_no_hyphens}, ${args_no_equals}, ${args_no_boolean_flags}, "
            "${args_json}, ${args_json_file}, ${envvar:NAME}, ${param:NAME})");
  for (const char* bad : {"${}", "${envvar:lower}", "${envvar:Home}", "${ARGS}", "${args }",
                          "${ args}", "${{args}}", "${args}}"}) {
    SCOPED_TRACE(bad);
    const Status rejected = CheckCommandTemplate({"${program}", bad});
    EXPECT_EQ(rejected.code(), Status::Code::kBadInput);
    EXPECT_EQ(rejected.message().rfind("command[1]: unknown macro '" + std::string(bad) + "'", 0),
              0u);
  }
}

TEST(CommandLine, DetectsArgsJsonFile) {
  EXPECT_FALSE(UsesArgsJsonFile({}));
  EXPECT_FALSE(UsesArgsJsonFile(DefaultCommandTemplate()));
  EXPECT_FALSE(UsesArgsJsonFile({"${args_json}", "x${args_json_file}", "${args_json_file} "}));
  EXPECT_TRUE(UsesArgsJsonFile({"${env}", "${program}", "--config", "${args_json_file}"}));
}

TEST(CommandLine, NullGetenvReadsTheProcessEnvironment) {
  ASSERT_EQ(setenv("HPO_COMMAND_LINE_TEST_VAR", "from env", 1), 0);
  unsetenv("HPO_COMMAND_LINE_TEST_UNSET");
  CommandContext context;
  context.program = "p";
  const std::vector<std::string> argv =
      ExpandCommand({"${envvar:HPO_COMMAND_LINE_TEST_VAR}", "${envvar:HPO_COMMAND_LINE_TEST_UNSET}",
                     "${program}"},
                    {}, context);
  unsetenv("HPO_COMMAND_LINE_TEST_VAR");
  EXPECT_EQ(argv, (std::vector<std::string>{"from env", "HPO_COMMAND_LINE_TEST_UNSET", "p"}));
}

double FromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint64_t ToBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Random doubles (150 finite random bit patterns, then 150 of magnitudes 1e-7 to 1e18 with 1 to
// 17 significant digits) and their repr() in Python 3.11.
struct ReprCase {
  uint64_t bits;
  const char* repr;
};
constexpr ReprCase kPythonReprs[] = {
    {0xd1a6e55e9b9b1325u, "-2.2239649050108196e+85"},
    {0x566bf9d7c55a45f8u, "2.0532095845172635e+108"},
    {0xcf0c26ef4243ed52u, "-6.217554322597633e+72"},
    {0x5d96cf7f265beda9u, "6.953979603744903e+142"},
    {0xc1d77cffb7decc0cu, "-1576271583.481204"},
    {0x5e6a0a2edd70e34du, "6.503171038669016e+146"},
    {0x0463513755ac0ecdu, "1.5857673189191353e-287"},
    {0xb37523a53b4a3ee2u, "-8.221863336486e-61"},
    {0x4de45321ad915a36u, "1.7123553371149197e+67"},
    {0x9823beb1e6ba3ad7u, "-2.1638530463091063e-192"},
    {0xdd4eabbd1fcfb980u, "-2.9219572677923937e+141"},
    {0x683447c10cc8af11u, "9.252761636154696e+193"},
    {0xbfb637dd5bae2d26u, "-0.08678992737093391"},
    {0xaed09b824ca87fc2u, "-3.419513645011445e-83"},
    {0x158d003d9a0b2361u, "7.226450560613817e-205"},
    {0x1ff135342e825ce1u, "8.021365036472743e-155"},
    {0x33f5f28807f0cbd4u, "2.1852629101185172e-58"},
    {0x00d9f4ad53a2f2b6u, "1.4784897218736648e-304"},
    {0x4cc346363c234038u, "6.194509959718476e+61"},
    {0xd330a5494d14cf1au, "-5.425245977872505e+92"},
    {0x668dc8f46a423cf9u, "1.0124757898277046e+186"},
    {0xd178403035c9a8c4u, "-2.944446857366267e+84"},
    {0x765890e0f94855d0u, "1.2086749044087354e+262"},
    {0xaf5d8bb09f2e9ea4u, "-1.5573811799210805e-80"},
    {0xa9dfdec6baecde5bu, "-5.42808465396562e-107"},
    {0x699f071a5fd8e665u, "5.937551093150185e+200"},
    {0xf82d5644ef7d9967u, "-7.749285522714588e+270"},
    {0xfdfb462fd6fad8dbu, "-7.134888966143026e+298"},
    {0xdb18bd763f20134cu, "-6.859608543352666e+130"},
    {0x0e46c215b5fa5b0cu, "6.826063143799301e-240"},
    {0xbf416c30f1f0742au, "-0.0005316962232232482"},
    {0x422acab59248b974u, "57535023396.36221"},
    {0x476354b65ed08d6bu, "8.02974492705291e+35"},
    {0x3a7cfb366088155fu, "5.852726618138463e-27"},
    {0x37c990fad57dcafdu, "5.869740909421409e-40"},
    {0x26ad41ef88c279d9u, "2.2129413115836295e-122"},
    {0x6dbb8cb8ef65ed78u, "3.8900364282728575e+220"},
    {0x0e0bc896afbec9a6u, "5.2083625442892846e-241"},
    {0xdd63d2a5d1764460u, "-7.553946583906249e+141"},
    {0xda0aea0eaa72870bu, "-5.693391869688787e+125"},
    {0x07bda21c604af42au, "2.1911047409340847e-271"},
    {0xd17737815438a5b5u, "-2.818911778819916e+84"},
    {0xeee45145f585675fu, "-1.5040991579148302e+226"},
    {0x84d0c3f0b2e73ae0u, "-1.761642662237934e-285"},
    {0x5c80f9be67fd4c1eu, "3.948318576242007e+137"},
    {0xaa5bf36518677db7u, "-1.2186953655621338e-104"},
    {0xea394aba6a42ed19u, "-4.956084037695639e+203"},
    {0x70faf36fb78eda4fu, "1.7138399726928506e+236"},
    {0xca1ab21554c6c4b3u, "-9.753929657132168e+48"},
    {0x0f4bf777e1030fe1u, "5.49736026339521e-235"},
    {0x908a3e291dd257d5u, "-5.409083994422672e-229"},
    {0x2e0126319a72180du, "4.310374302572617e-87"},
    {0xfed5ce26af1ac6dau, "-9.345817125499125e+302"},
    {0xcc31d7b90ff191f0u, "-1.1200023960706483e+59"},
    {0xf768f221a91b4e9du, "-1.608733339066941e+267"},
    {0x4a66b263ab8474ccu, "2.6537167274827663e+50"},
    {0xc689c846b6b81ec6u, "-6.53659696798518e+31"},
    {0x535f2002b9f7f89eu, "4.0577810885461344e+93"},
    {0x355cca5db3c7b88eu, "1.2023470587576948e-51"},
    {0x857ce06bf9a21be1u, "-3.107068645161848e-282"},
    {0x02c89680e98c5884u, "3.0077087603228884e-295"},
    {0xd6442260559d7e79u, "-3.6942359140577326e+107"},
    {0x0473b8248ac03649u, "3.2375449474128926e-287"},
    {0x3cc89b41f339a684u, "6.8296687940174e-16"},
    {0xd68c20053f91ed95u, "-8.256618527360458e+108"},
    {0x5f4e45815c00d3d2u, "1.2386307567357675e+151"},
    {0x86f4f14cc599fac7u, "-3.7805423472813974e-275"},
    {0xd2e06b36b9ea43d4u, "-1.6722847020612747e+91"},
    {0xb2a57e606d09cf94u, "-1.0204724682369557e-64"},
    {0x8d1eac030bab1534u, "-1.7547066843945634e-245"},
    {0x25609be3c444a62eu, "1.1980470828406925e-128"},
    {0xed20eb98ea70df2du, "-4.666325117398886e+217"},
    {0x133945bae4114d10u, "4.581939138498141e-216"},
    {0x40ba6f09be38fcbbu, "6767.038058816625"},
    {0xd31f0231deef4351u, "-2.52662318921421e+92"},
    {0xc8fd442ec56309d2u, "-4.0791322597611117e+43"},
    {0x0286ecec43432c6bu, "1.7527207115595254e-296"},
    {0xbbb458d39fd583ebu, "-4.308640425335931e-21"},
    {0x43e94334742de49bu, "1.4562850783828957e+19"},
    {0xf6bd8eca9f374cd6u, "-9.307392322080416e+263"},
    {0x2293d03e9e6024cdu, "4.062022070616369e-142"},
    {0x3d0d125a162d85c6u, "1.2910422558983494e-14"},
    {0xf2e25394dbda118bu, "-2.502682641559152e+245"},
    {0x59227301507a4f34u, "2.3820272328327517e+121"},
    {0x77a22873705bdd12u, "1.8735894823205976e+268"},
    {0x0c67a2cb603c1616u, "6.602463791910131e-249"},
    {0x498e0b0d13f8bb73u, "2.1439521322200368e+46"},
    {0x2875a2d038ccde1eu, "8.785741357774578e-114"},
    {0xe6160abb7e3b9a59u, "-5.853651480927078e+183"},
    {0x9d411e83fb7eca2fu, "-9.072269124387525e-168"},
    {0x6965c425b110d30au, "5.206546608840113e+199"},
    {0x2f2a44422f862cecu, "1.7306754034539922e-81"},
    {0x9f61d62f48f8f164u, "-1.623924321558458e-157"},
    {0xbdef9f4b0ecb476fu, "-2.3008207092770538e-10"},
    {0xd2e83592e220532fu, "-2.465757953328236e+91"},
    {0xe655f6aa8e18a60eu, "-9.332536425193007e+184"},
    {0xf4116bb4f69ceaf6u, "-1.2472765338908845e+251"},
    {0xb49fe4dd0d2671efu, "-3.2518444921312046e-55"},
    {0xcca243377202aed9u, "-1.4673405064521626e+61"},
    {0xcde055b6c1e6c246u, "-1.3762058547222976e+67"},
    {0x55ed4a06caf735c5u, "8.396832753689505e+105"},
    {0xb1b0b480ac7a0c5du, "-2.420414713325947e-69"},
    {0x12400dfacf737131u, "8.882861719087313e-221"},
    {0x5f17603f600fb75eu, "1.1956042331965692e+150"},
    {0x6a2a4face3cfe64cu, "2.5779130909133272e+203"},
    {0xf1ab87be190afbe8u, "-3.5853919352323466e+239"},
    {0x49a7a58cb216749au, "6.749933350342303e+46"},
    {0x5c6cf0c200ae623fu, "1.6828037764398228e+137"},
    {0x3173f9f7b59ecf10u, "1.8090019352134793e-70"},
    {0x37848b772ac954c3u, "2.948032369432856e-41"},
    {0x25c8e40952a69ac0u, "1.1490796092503208e-126"},
    {0xe345c182ead5c02au, "-1.6421192759651485e+170"},
    {0xc55cd6e0683d063fu, "-1.3945859583353141e+26"},
    {0xbea75defe8cbb19du, "-6.963891379919554e-07"},
    {0xdad51d4e98dc6d62u, "-3.658967519946677e+129"},
    {0x58c0d341131d9da7u, "3.39428913192744e+119"},
    {0x517f1efe987474abu, "3.7786211929804913e+84"},
    {0xcad8f6bd6ceebb95u, "-3.7360307564308767e+52"},
    {0x46978debe82ce7ffu, "1.1943490036466539e+32"},
    {0x9f3c55481454929eu, "-3.2244590100900925e-158"},
    {0x0a8e9f78fecdeeb7u, "7.966739340871635e-258"},
    {0x92a74c3169e00599u, "-8.24982784503229e-219"},
    {0x8a356a49798bf36cu, "-1.7410271720630623e-259"},
    {0xb849a411a377cf5au, "-1.507036310748598e-37"},
    {0x4c7dae9d4c7497b8u, "2.9810797460776853e+60"},
    {0x3ecce515c900bbc0u, "3.4445361692040765e-06"},
    {0xb44ac6556a435a0eu, "-8.530924608057143e-57"},
    {0x2996b98c8ae407f6u, "2.4190322251004694e-108"},
    {0xec073ffed92a2829u, "-2.4459613454342636e+212"},
    {0xe19cfa0816c60a7fu, "-1.6295451505048296e+162"},
    {0xde83bc134dccef77u, "-1.971413634303749e+147"},
    {0x83ab0c1e4dbf539fu, "-5.420741783511054e-291"},
    {0x2c5747ba38c91278u, "4.359611716351914e-95"},
    {0x6f7fa45fba52fff4u, "1.199338635571738e+229"},
    {0x5f20c770621477bau, "1.716387898950201e+150"},
    {0x31643087af6f5ad0u, "9.141513511038578e-71"},
    {0xffaf06a5c67977f5u, "-1.08935874868455e+307"},
    {0xcaf9a1f46c738235u, "-1.5344492247710138e+53"},
    {0xd33cc8deaa68268cu, "-9.381658039045774e+92"},
    {0xbe6f3d77765b1f48u, "-5.818922836419672e-08"},
    {0x3f108ac506adf2a1u, "6.310298492268964e-05"},
    {0x1b227b5101f752bcu, "5.70104673390381e-178"},
    {0xfa69b704d6ebf52au, "-4.66778775202687e+281"},
    {0xc961c2115d0a2a43u, "-3.168146882536028e+45"},
    {0x224f4790924cfa31u, "2.0039762480331486e-143"},
    {0x998b61a250e2e001u, "-1.2586009752978635e-185"},
    {0xee8bfa0c5810acfcu, "-3.2361158628384686e+224"},
    {0x3cc17d11b7fd3194u, "4.854048167861419e-16"},
    {0x743c8bf486e6994bu, "8.175461966349917e+251"},
    {0x6d33cb78f009528bu, "1.091813112543859e+218"},
    {0x41364ef000000000u, "1462000.0"},
    {0x40c2c00000000000u, "9600.0"},
    {0xc34aa535d3d0c000u, "-1.5e+16"},
    {0xc2c50ae02e7fc000u, "-46272910000000.0"},
    {0xc290d98cac366000u, "-4631638511000.0"},
    {0xbf70245ee4913320u, "-0.003940935778769"},
    {0x3eb2f99ba6a8e581u, "1.131e-06"},
    {0xbe84219dfe0dfd91u, "-1.4999e-07"},
    {0xbff65f93da4772beu, "-1.398334362652505"},
    {0xc066f77d805e5f31u, "-183.73407"},
    {0x406afbdc4cadbed1u, "215.870642032"},
    {0xc381a53452cb0380u, "-1.58935e+17"},
    {0x41ab5091775459b1u, "229132475.6647468"},
    {0xc2de95a1c4f0db00u, "-134512051995500.0"},
    {0x4322d03800960ee0u, "2647744263686000.0"},
    {0xc245c43e1b9a0000u, "-186973435700.0"},
    {0xbff35d411a37af67u, "-1.21026716462344"},
    {0xc0e17a4fd2ae8e1du, "-35794.494468"},
    {0xc2d6bcc41e900000u, "-100000000000000.0"},
    {0x42c10d9316ec0000u, "37500000000000.0"},
    {0x42fa84a0e7056000u, "466511000000000.0"},
    {0xc2d2309ce5400000u, "-80000000000000.0"},
    {0xc35764e3438860b0u, "-2.633940687084e+16"},
    {0xc1ad1d9f52000000u, "-244240297.0"},
    {0x3ef388f3da01e98fu, "1.863e-05"},
    {0x42e0f078824a0000u, "149000000000000.0"},
    {0x42ea69d500fce000u, "232334780000000.0"},
    {0xc24c7effa2a40000u, "-244779533640.0"},
    {0x4248904a3f000000u, "211000000000.0"},
    {0xc10d9d4000000000u, "-242600.0"},
    {0xc2a164c3a9d223c1u, "-9562238544145.877"},
    {0xc2963af9511293adu, "-6110636688548.919"},
    {0x429868f9885518aeu, "6709785531718.17"},
    {0xc2ee3c2a35077403u, "-265950039915424.1"},
    {0xc16312d000000000u, "-10000000.0"},
    {0xc04c714d2c1836d9u, "-56.88516761"},
    {0xc35feaf0aeb9e7a0u, "-3.593617489e+16"},
    {0xc2260197b5000000u, "-47258000000.0"},
    {0x42e3f671361b3060u, "175593458030979.0"},
    {0x40d0b2d35bf0ff93u, "17099.3024866577"},
    {0x404d7413e3e29308u, "58.906857"},
    {0x431241accc62d000u, "1284690000000000.0"},
    {0x400432a62aa1943au, "2.524731"},
    {0x3f49cfaedc8b02deu, "0.000787697202291406"},
    {0x3ead01ff9abb93d1u, "8.645e-07"},
    {0x423e811385180000u, "131014559000.0"},
    {0xbf764a81d2e96854u, "-0.005442149281032444"},
    {0xc30b587ff0a19580u, "-962141361550000.0"},
    {0xc2781cce57a00000u, "-1657000000000.0"},
    {0x41d01876de000000u, "1080155000.0"},
    {0xbf19b7506b860840u, "-9.80990252e-05"},
    {0x4062f115a6f30923u, "151.53389308422"},
    {0x402c3c432ca57a78u, "14.1177"},
    {0xc37620f551dabb00u, "-9.9659e+16"},
    {0xc14b757bdae147aeu, "-3599095.71"},
    {0x3f2dcafb097c9a93u, "0.00022730173508841"},
    {0x4069d01fd3c661c5u, "206.503885161843"},
    {0xc16254646546dc5du, "-9610019.1649"},
    {0xbf37cc5da28f29d9u, "-0.0003631332970683"},
    {0x43410d9316ec0000u, "9600000000000000.0"},
    {0xc345cabfca10a59fu, "-1.2267799177153342e+16"},
    {0xc380cb81c81d70bcu, "-1.5127545267081e+17"},
    {0x4036000000000000u, "22.0"},
    {0x40ca23f46a852efeu, "13383.90950074"},
    {0x437490ce7a3f4b7du, "9.261945636550856e+16"},
    {0x426a13d040fa8000u, "896012519380.0"},
    {0xbe7ad7f29abcaf48u, "-1e-07"},
    {0x4268849e64f72597u, "842433505209.1747"},
    {0x3e7d87247702c0d0u, "1.1e-07"},
    {0x401c000000000000u, "7.0"},
    {0x41dab6daebb33333u, "1792764846.8"},
    {0x3ebe5d354bb38408u, "1.80984106528553e-06"},
    {0x3fe544803997745au, "0.664611923679"},
    {0x42cb84e39bfd6000u, "60515136568000.0"},
    {0x402a1eb851eb851fu, "13.06"},
    {0xbf7c92ddbdb5d895u, "-0.006976"},
    {0x4269433b5a636ccdu, "868017165083.4"},
    {0xc2474876e8000000u, "-200000000000.0"},
    {0xc058600000000000u, "-97.5"},
    {0x401842a01bea4404u, "6.06506389252991"},
    {0x42f9d58def520000u, "454480000000000.0"},
    {0x43194faea7d1aa05u, "1781121494051457.2"},
    {0xc3a9e567ec4ebeacu, "-9.33005942623e+17"},
    {0xc225cbd6f016da1du, "-46807087115.426"},
    {0xc2b55634f7680000u, "-23460000000000.0"},
    {0x3ed4ebdbece591b2u, "4.98803247093e-06"},
    {0xc07722ec989cc471u, "-370.18276273"},
    {0x3f77c41ea7249a1cu, "0.005802268731975004"},
    {0xc04ba8b2e9ccb7d4u, "-55.31796"},
    {0x3f5be0fab0e90c8eu, "0.0017015884547085"},
    {0x412429796188d2a2u, "660668.690497"},
    {0xbf8c90c4dec1c1d7u, "-0.013948"},
    {0x4061f897f62b6ae8u, "143.76855"},
    {0x3eba71f791fdc3c1u, "1.576255790749557e-06"},
    {0x413d4639cfe5c91du, "1918521.8121"},
    {0xc1b1de4479000000u, "-299779193.0"},
    {0xbfee17f69f4f0d14u, "-0.940425215864169"},
    {0xc0cbd65a5e353f7du, "-14252.706"},
    {0xbfaeb851eb851eb8u, "-0.06"},
    {0xc2e52efd887f2000u, "-186332530080000.0"},
    {0x3f22f1d5e7f32037u, "0.0001445363632"},
    {0x3f87236f9611c2eau, "0.0112980573341885"},
    {0x43ab9d5b3ffd65c6u, "9.9492347038e+17"},
    {0xc216cbb4bcafdbf5u, "-24476725035.9648"},
    {0xc0413e4302b40f67u, "-34.48642"},
    {0xc219b34c16cf5c29u, "-27595572659.84"},
    {0xbf1e39a6eabaf45du, "-0.0001153"},
    {0x41f61521e7800000u, "5927739000.0"},
    {0x3f4065417768f7dau, "0.0005003518734338866"},
    {0xc001b0be0ded288du, "-2.2113"},
    {0x3f53f9668cfb37c2u, "0.0012191297027359525"},
    {0xc3229ee94ac84800u, "-2620637200000000.0"},
    {0xc082c00000000000u, "-600.0"},
    {0x42d730819a6896b0u, "101988400996954.75"},
    {0x4017b43d6fa22458u, "5.92601561"},
    {0x3ef3ecbb024c808fu, "1.90017018609772e-05"},
    {0x403ad37e5ff70c95u, "26.82614707738374"},
    {0xc2e2fed6b284e500u, "-167085864134440.0"},
    {0x4360d9bba05e0b00u, "3.7943996e+16"},
    {0x404030f0b1ae6355u, "32.3823454"},
    {0xc1460c8800000000u, "-2890000.0"},
    {0xbec5d4868a324565u, "-2.60236e-06"},
    {0xbf3d6cceabf94420u, "-0.00044899030397"},
    {0xbfd499b43bdc4f21u, "-0.32188135"},
    {0x4320597e9f41a000u, "2301000000000000.0"},
    {0x4299ac28995c2578u, "7056801552137.367"},
    {0x432b0028e44b0000u, "3800000000000000.0"},
    {0xc39bc16d674ec800u, "-5e+17"},
    {0xc02e999d8f478626u, "-15.30003021"},
    {0x40fd0d8000000000u, "119000.0"},
    {0x418d21a120000000u, "61092900.0"},
    {0xc3524eb537d9ca5cu, "-2.061235925543563e+16"},
    {0x3eea9785ee161da4u, "1.268e-05"},
    {0x3ff3333333333333u, "1.2"},
    {0xc1a7ee24559eb852u, "-200741418.81"},
    {0xbf63471a1ade52b1u, "-0.00235324"},
    {0xbe7ad7f29abcaf48u, "-1e-07"},
    {0xc1987a0d60000000u, "-102663000.0"},
    {0x3eede37bf7029191u, "1.4252e-05"},
    {0xbf9eb851eb851eb8u, "-0.03"},
    {0x4053b6a7ef9db22du, "78.854"},
    {0xc364f0f43873cbd4u, "-4.71554499521e+16"},
    {0x3f02a1ab2682f84du, "3.55368e-05"},
    {0x434dc1790e50f800u, "1.6751e+16"},
    {0x41e90cb027a00000u, "3362095421.0"},
    {0xc242b102f3a00000u, "-160558344000.0"},
    {0xbf0004f95a96e678u, "-3.05546376e-05"},
    {0x40c3880000000000u, "10000.0"},
    {0x42c3d8320431b600u, "43638545998700.0"},
    {0xc06a6a90ff972474u, "-211.3302"},
};

TEST(CommandLineFloat, MatchesPythonReprOfRandomDoubles) {
  for (const ReprCase& c : kPythonReprs) {
    EXPECT_EQ(PythonFloatRepr(FromBits(c.bits)), c.repr) << std::hex << c.bits;
  }
}

// Python's layout of repr(float) for finite values: 'e' notation (a sign and at least two
// exponent digits) exactly when the decimal exponent is < -4 or >= 16, otherwise fixed notation
// with at least one fractional digit; no redundant zeros.
void ExpectPythonLayout(const std::string& text) {
  static const std::regex kExponent(R"(-?[1-9](\.[0-9]*[1-9])?e([+-])([0-9]{2,3}))");
  static const std::regex kFixed(R"(-?(0|[1-9][0-9]*)\.(0|[0-9]*[1-9]))");
  std::smatch match;
  if (std::regex_match(text, match, kExponent)) {
    const int magnitude = std::stoi(match[3].str());
    const int exponent = match[2].str() == "-" ? -magnitude : magnitude;
    EXPECT_TRUE(exponent < -4 || exponent >= 16) << text;
    EXPECT_TRUE(magnitude >= 10 || match[3].length() == 2) << text;
    EXPECT_TRUE(magnitude < 100 || match[3].str()[0] != '0') << text;
    return;
  }
  ASSERT_TRUE(std::regex_match(text, match, kFixed)) << text;
  const std::string integer = match[1].str();
  const std::string fraction = match[2].str();
  if (integer != "0") {
    EXPECT_LT(integer.size(), 17u) << text;  // decimal exponent < 16
  } else if (fraction != "0") {
    EXPECT_LT(fraction.find_first_not_of('0'), 4u) << text;  // decimal exponent >= -4
  }
}

TEST(CommandLineFloat, RandomBitPatternsRoundTripInPythonLayout) {
  std::mt19937_64 generator(20240611);
  int checked = 0;
  while (checked < 10000) {
    const double value = FromBits(generator());
    if (!std::isfinite(value)) continue;
    ++checked;
    const std::string text = PythonFloatRepr(value);
    ASSERT_EQ(ToBits(std::strtod(text.c_str(), nullptr)), ToBits(value)) << text;
    ExpectPythonLayout(text);
  }
}

}  // namespace
}  // namespace hpo
