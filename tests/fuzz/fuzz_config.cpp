// libFuzzer target for the config parser: every input is a config file's text. ParseConfig must
// return a Status (ok or not) for any bytes: no crash, hang, uncaught exception or sanitizer
// report; a foreign spec's translation must parse again to itself. Built and run by
// tests/fuzz/run_fuzz.sh (ctest: fuzz_config_parser).
#include <cstddef>
#include <cstdint>
#include <string>

#include "hpo/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  hpo::SweepConfig config;
  const hpo::Status status = hpo::ParseConfig(text, "fuzz.yaml", &config);
  if (status.ok()) {
    if (config.path != "fuzz.yaml") __builtin_trap();
    // A parsed config keeps the exact text, except a spec read as it is (a Katib Experiment, a
    // SageMaker tuning job), whose text is the hpo config it was read as: that one must parse
    // again to itself, as every rank and a resumed study parse it.
    if (config.text != text) {
      hpo::SweepConfig again;
      if (!hpo::ParseConfig(config.text, "fuzz.yaml", &again).ok() || again.text != config.text) {
        __builtin_trap();
      }
    }
  } else if (status.message().empty()) {
    __builtin_trap();  // every error says what is wrong
  }
  return 0;
}
