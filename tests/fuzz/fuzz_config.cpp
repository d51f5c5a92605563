// libFuzzer target for the config parser: every input is a config file's text. ParseConfig must
// return a Status (ok or not) for any bytes: no crash, hang, uncaught exception or sanitizer
// report. Built and run by tests/fuzz/run_fuzz.sh (ctest: fuzz_config_parser).
#include <cstddef>
#include <cstdint>
#include <string>

#include "hpo/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  hpo::SweepConfig config;
  const hpo::Status status = hpo::ParseConfig(text, "fuzz.yaml", &config);
  if (status.ok()) {
    // A parsed config keeps the exact text; anything else is a parser bug.
    if (config.text != text || config.path != "fuzz.yaml") __builtin_trap();
  } else if (status.message().empty()) {
    __builtin_trap();  // every error says what is wrong
  }
  return 0;
}
