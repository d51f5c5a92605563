// The processes a trial's program leaves behind, found and ended. A program's descendants can leave
// its process group (setsid) and its parent (a double fork re-parents them to init), so neither
// the group nor the parent link reaches them. This process becomes a child subreaper
// (PR_SET_CHILD_SUBREAPER): every orphan among its descendants is re-parented to it rather than to
// init, so its descendants, found through /proc's parent links, are all it ever started and all
// they left behind. (Cgroups would hold them too, but an unprivileged process in a container
// generally cannot create one.) Linux only; no MPI, no torch.
#pragma once

#include <sys/types.h>

#include <vector>

#include "hpo/status.hpp"

namespace hpo {

// Makes this process the subreaper of its descendants (for the whole process, every thread).
Status BecomeChildSubreaper();

// Every living process (zombies included) whose chain of parents leads to `ancestor`, read from
// /proc; `ancestor` itself excluded. A process that starts or ends meanwhile may be missed.
std::vector<pid_t> DescendantsOf(pid_t ancestor);

// Ends every descendant of this process: SIGTERM to each, up to grace_s for them to exit, then
// SIGKILL to those left, and each is reaped once it is this process's child (a subreaper's
// orphans are), so none is left, zombies included. Returns at once when there are none. Only for
// a process whose every child is disposable when this runs (an hpo rank between trials).
void EndAllDescendants(double grace_s);

}  // namespace hpo
