// The benchmark harness shared by every benchmark in bench/: wall-clock timing, summary
// statistics, and one result line per measurement ("bench=NAME key=value ..."), which
// bench/run.sh collects. Header-only; no MPI or torch.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace hpo::bench {

// One integer command-line flag: where its value goes and the smallest value it takes.
struct IntegerFlag {
  int64_t* target;
  int64_t minimum;
};

// Parses "--name VALUE" pairs into the flags' targets; false on an unknown name, a missing or
// non-integer value, or a value below the flag's minimum.
inline bool ParseIntegerFlags(int argc, char** argv,
                              const std::map<std::string, IntegerFlag>& flags) {
  for (int i = 1; i < argc; i += 2) {
    const auto flag = flags.find(argv[i]);
    if (flag == flags.end() || i + 1 >= argc) return false;
    char* end = nullptr;
    const long long value = std::strtoll(argv[i + 1], &end, 10);
    if (*end != '\0' || value < flag->second.minimum) return false;
    *flag->second.target = value;
  }
  return true;
}

inline double NowSeconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

struct Summary {
  double mean = 0, p50 = 0, p99 = 0, min = 0, max = 0;
  size_t count = 0;
};

inline Summary Summarize(std::vector<double> samples) {
  Summary summary;
  if (samples.empty()) return summary;
  std::sort(samples.begin(), samples.end());
  auto at = [&samples](double quantile) {
    const size_t index = static_cast<size_t>(std::ceil(quantile * samples.size())) - 1;
    return samples[std::min(index, samples.size() - 1)];
  };
  summary.count = samples.size();
  summary.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  summary.p50 = at(0.50);
  summary.p99 = at(0.99);
  summary.min = samples.front();
  summary.max = samples.back();
  return summary;
}

using Fields = std::vector<std::pair<std::string, std::string>>;

inline std::string Number(double value, int precision = 4) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
  return buffer;
}

// Prints one result line. `check` says whether the run's own result was verified correct; a
// benchmark whose check failed prints check=FAILED and the harness script fails.
inline void PrintResult(const std::string& bench, const Fields& fields, bool check) {
  std::string line = "bench=" + bench;
  for (const auto& [key, value] : fields) line += " " + key + "=" + value;
  line += check ? " check=ok" : " check=FAILED";
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace hpo::bench
