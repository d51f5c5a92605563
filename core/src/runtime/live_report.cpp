#include "live_report.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <utility>
#include <vector>

#include "common/diagnostic.hpp"
#include "common/file_io.hpp"
#include "coord/sweep_status.hpp"
#include "report/importance.hpp"
#include "report/report.hpp"
#include "study/study_file.hpp"

namespace hpo {

namespace {

constexpr double kCostFactor = 20.0;

double SteadyNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &utc);
  return text;
}

}  // namespace

LiveReport::LiveReport(std::string study_path, std::string html_path, const TaskCatalog& catalog,
                       double interval_s)
    : study_path_(std::move(study_path)),
      html_path_(std::move(html_path)),
      catalog_(catalog),
      interval_s_(interval_s) {}

void LiveReport::Refresh() {
  if (failed_ || SteadyNow() < next_write_at_) return;
  Write(/*live=*/true);
}

void LiveReport::Finish() {
  if (!failed_) Write(/*live=*/false);
}

LivePage LiveReport::LivePageOf(const StudyContents& study) const {
  LivePage page;
  page.reload_seconds = std::max(1, static_cast<int>(interval_s_ + 0.5));
  page.written_at = UtcNow();
  std::vector<SweepStatus::InFlight> running;
  // A damaged list of running trials leaves the line empty; the page is written all the same.
  if (ReadInFlightTrials(study, &running).ok()) {
    for (const SweepStatus::InFlight& trial : running) {
      page.running.push_back({trial.trial_id, trial.epoch, trial.objective});
    }
  }
  return page;
}

void LiveReport::Write(bool live) {
  const double began = SteadyNow();
  StudyContents study;
  Status status = ReadStudy(study_path_, &study);
  if (status.ok()) {
    const StudyImportance importance = ComputeStudyImportance(study, catalog_);
    const std::string page = live ? FormatHtmlReport(study, catalog_, importance, LivePageOf(study))
                                  : FormatHtmlReport(study, catalog_, importance);
    status = WriteFileAtomically(html_path_, page.data(), page.size());
  }
  if (!status.ok()) {
    failed_ = true;
    PrintDiagnostic("hpo: warning: " + html_path_ +
                    " is no longer kept current: " + status.message());
    return;
  }
  const double cost = SteadyNow() - began;
  next_write_at_ = SteadyNow() + std::max(interval_s_, kCostFactor * cost);
}

}  // namespace hpo
