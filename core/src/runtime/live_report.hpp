// Rank 0 only: keeps OUTPUT/report.html current while a sweep runs (a live page that reloads
// itself) and writes the final page when it ends. Not thread-safe: Refresh runs on the
// coordinator's thread (which also writes the study: HDF5 is not thread-safe here), Finish after
// that thread is joined.
#pragma once

#include <string>

#include "hpo/task_catalog.hpp"
#include "report/report.hpp"
#include "study/study_file.hpp"

namespace hpo {

class LiveReport {
 public:
  // The page of the study at `study_path`, written to `html_path` at most every `interval_s`
  // seconds (and at most 1/20 of the time: a write that took 0.5 s waits 10 s for the next).
  LiveReport(std::string study_path, std::string html_path, const TaskCatalog& catalog,
             double interval_s);

  // After a publish: writes the live page when the last write is old enough. A failure (the
  // study unreadable, the page unwritable) is one warning on stderr, and the page is left alone
  // from then on; the sweep goes on.
  void Refresh();
  // The sweep has ended: the final page, which no longer reloads. Does nothing after a failure.
  void Finish();

 private:
  void Write(bool live);
  // The live page's settings for `study`: the reload interval, the time now and the trials
  // running at the study's last publish.
  LivePage LivePageOf(const StudyContents& study) const;

  std::string study_path_;
  std::string html_path_;
  const TaskCatalog& catalog_;
  double interval_s_;
  double next_write_at_ = 0.0;  // steady seconds
  bool failed_ = false;
};

}  // namespace hpo
