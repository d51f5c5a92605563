#include "common/peer_silence.hpp"

#include <algorithm>

namespace hpo {

PeerSilence::PeerSilence(int peers, Clock::duration longest_pass, Clock::time_point start)
    : longest_pass_(longest_pass),
      last_pass_(start),
      silent_(static_cast<size_t>(peers), Clock::duration::zero()) {}

void PeerSilence::Pass(Clock::time_point now) {
  const Clock::duration counted = std::min(now - last_pass_, longest_pass_);
  last_pass_ = now;
  for (Clock::duration& silent : silent_) silent += counted;
}

void PeerSilence::Heard(int peer) { silent_[static_cast<size_t>(peer)] = Clock::duration::zero(); }

double PeerSilence::SilentSeconds(int peer) const {
  return std::chrono::duration<double>(silent_[static_cast<size_t>(peer)]).count();
}

}  // namespace hpo
