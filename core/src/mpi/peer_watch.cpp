#include "mpi/peer_watch.hpp"

#include <pthread.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/diagnostic.hpp"
#include "common/peer_silence.hpp"

namespace hpo {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kHeartbeatTag = 201;
constexpr int kAnswerTag = 202;
constexpr std::chrono::milliseconds kNap(20);
// The watcher thread's name (ps -L, top -H, /proc/PID/task/TID/comm): at most 15 characters.
constexpr char kThreadName[] = "hpo-peer-watch";

// Rank 0's heartbeats go out every timeout / 5, at most every second; a stall of a watcher's own
// loop counts against its peers for at most one period (PeerSilence).
Clock::duration HeartbeatPeriod(double timeout_s) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::min(1.0, timeout_s / 5.0)));
}

// A heartbeat or an answer: one int, sent without waiting. The request is freed at once: a
// message to a rank that is gone stays queued in MPI (a few bytes per period) and is never waited
// for.
void SendBeat(int destination, int tag, const Communicator& comm) {
  static const int kBeat = 1;
  MPI_Request request = MPI_REQUEST_NULL;
  HPO_MPI_CHECK(MPI_Isend(&kBeat, 1, MPI_INT, destination, tag, comm.get(), &request));
  HPO_MPI_CHECK(MPI_Request_free(&request));
}

// Receives every waiting message with `tag` from `source` (MPI_ANY_SOURCE: anyone); calls
// heard(source rank) for each.
template <typename Heard>
void DrainBeats(int source, int tag, const Communicator& comm, Heard heard) {
  for (;;) {
    int found = 0;
    MPI_Status status;
    HPO_MPI_CHECK(MPI_Iprobe(source, tag, comm.get(), &found, &status));
    if (!found) return;
    int beat = 0;
    HPO_MPI_CHECK(
        MPI_Recv(&beat, 1, MPI_INT, status.MPI_SOURCE, tag, comm.get(), MPI_STATUS_IGNORE));
    heard(status.MPI_SOURCE);
  }
}

// One rank's entry in the constructor's gather: its host name (MPI's processor name) and its
// process's place (ProcessPlace), in fixed-size fields.
struct RankRecord {
  char host[MPI_MAX_PROCESSOR_NAME];
  char machine[192];
  int64_t pid;
  int64_t start_ticks;
};

std::string FixedText(const char* field, size_t size) {
  return std::string(field, strnlen(field, size));
}

// Every rank's host name and process place, in rank order.
void GatherRankRecords(const Communicator& comm, std::vector<std::string>* hosts,
                       std::vector<ProcessPlace>* places) {
  RankRecord mine;
  std::memset(&mine, 0, sizeof(mine));
  int length = 0;
  HPO_MPI_CHECK(MPI_Get_processor_name(mine.host, &length));
  const ProcessPlace place = ThisProcessPlace();
  if (place.machine.size() < sizeof(mine.machine)) {  // else empty: judged by heartbeats alone
    std::memcpy(mine.machine, place.machine.data(), place.machine.size());
  }
  mine.pid = place.pid;
  mine.start_ticks = place.start_ticks;
  std::vector<RankRecord> all(static_cast<size_t>(comm.size()));
  HPO_MPI_CHECK(MPI_Allgather(&mine, sizeof(RankRecord), MPI_BYTE, all.data(), sizeof(RankRecord),
                              MPI_BYTE, comm.get()));
  for (const RankRecord& record : all) {
    hosts->push_back(FixedText(record.host, sizeof(record.host)));
    places->push_back(
        {FixedText(record.machine, sizeof(record.machine)), record.pid, record.start_ticks});
  }
}

}  // namespace

std::string LostPeers::Describe() const {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  // Ranks grouped by host, in rank order within each host.
  std::vector<std::pair<std::string, std::vector<int>>> by_host;
  for (size_t i = 0; i < ranks.size(); ++i) {
    auto entry = std::find_if(by_host.begin(), by_host.end(),
                              [&](const auto& host) { return host.first == hosts[i]; });
    if (entry == by_host.end()) {
      by_host.push_back({hosts[i], {}});
      entry = by_host.end() - 1;
    }
    entry->second.push_back(ranks[i]);
  }
  for (size_t h = 0; h < by_host.size(); ++h) {
    if (h > 0) text += "; ";
    for (size_t r = 0; r < by_host[h].second.size(); ++r) {
      text += (r > 0 ? ", " : "") + std::to_string(by_host[h].second[r]);
    }
    text += " on " + by_host[h].first;
  }
  char silent[64];
  std::snprintf(silent, sizeof(silent), " (silent for %.1f s)", silent_s);
  return text + silent;
}

PeerWatch::PeerWatch(const Communicator& world, double timeout_s,
                     std::function<void(const LostPeers&)> on_lost)
    : comm_(world.Duplicate()), timeout_s_(timeout_s), on_lost_(std::move(on_lost)) {
  std::vector<ProcessPlace> places;
  GatherRankRecords(comm_, &hosts_, &places);
  root_place_ = places[0];
  beside_root_ = comm_.rank() != 0 && !root_place_.machine.empty() &&
                 places[static_cast<size_t>(comm_.rank())].machine == root_place_.machine;
  if (comm_.size() == 1) return;
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), kThreadName);
    if (comm_.rank() == 0) {
      WatchFromRoot();
    } else {
      WatchRoot();
    }
  });
}

PeerWatch::~PeerWatch() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void PeerWatch::WatchFromRoot() {
  const Clock::duration period = HeartbeatPeriod(timeout_s_);
  const int size = comm_.size();
  PeerSilence silence(size, period, Clock::now());
  Clock::time_point next_beat = Clock::now();
  while (!Stopping()) {
    const Clock::time_point now = Clock::now();
    silence.Pass(now);
    if (now >= next_beat) {
      for (int rank = 1; rank < size; ++rank) SendBeat(rank, kHeartbeatTag, comm_);
      next_beat = now + period;
    }
    DrainBeats(MPI_ANY_SOURCE, kAnswerTag, comm_, [&](int rank) { silence.Heard(rank); });
    LostPeers lost;
    for (int rank = 1; rank < size; ++rank) {
      const double silent = silence.SilentSeconds(rank);
      if (silent < timeout_s_) continue;
      lost.ranks.push_back(rank);
      lost.hosts.push_back(hosts_[static_cast<size_t>(rank)]);
      lost.silent_s = std::max(lost.silent_s, silent);
    }
    if (!lost.ranks.empty()) {
      lost.observer = 0;
      lost.observer_host = hosts_[0];
      on_lost_(lost);
      return;
    }
    std::this_thread::sleep_for(kNap);
  }
}

void PeerWatch::WatchRoot() {
  PeerSilence silence(1, HeartbeatPeriod(timeout_s_), Clock::now());
  while (!Stopping()) {
    silence.Pass(Clock::now());
    DrainBeats(0, kHeartbeatTag, comm_, [&](int) {
      silence.Heard(0);
      SendBeat(0, kAnswerTag, comm_);
    });
    const double silent = silence.SilentSeconds(0);
    if (silent >= timeout_s_ && RootLost(silent)) {
      LostPeers lost;
      lost.observer = comm_.rank();
      lost.observer_host = hosts_[static_cast<size_t>(comm_.rank())];
      lost.silent_s = silent;
      lost.ranks = {0};
      lost.hosts = {hosts_[0]};
      on_lost_(lost);
      return;
    }
    std::this_thread::sleep_for(kNap);
  }
}

bool PeerWatch::RootLost(double silent_s) {
  if (!beside_root_ || StateOf(root_place_) != ProcessState::kRunning) return true;
  if (!starved_root_noted_) {
    starved_root_noted_ = true;
    PrintDiagnostic("hpo: warning: rank " + std::to_string(comm_.rank()) +
                    " has had no heartbeat from rank 0 for " +
                    std::to_string(static_cast<int64_t>(silent_s)) + " s (peer_timeout_s), but " +
                    "rank 0 runs on this machine and its process is running: its heartbeat thread "
                    "is starved of CPU (an overloaded machine), not lost; waiting for it");
  }
  return false;
}

}  // namespace hpo
