// SPDX-License-Identifier: Apache-2.0
// k8s-agent-deliver DIR: the delivery image's entrypoint. Copies k8s-agent
// and the Open MPI presets that sit beside this program into DIR (an
// emptyDir an init container shares with the user's own containers), so an
// unchanged training image can run `mpirun` with plm_rsh_agent pointing at
// DIR/k8s-agent. The workers' side (k8s-agent-sshd and the portable sshd)
// goes too when the image has it; the arm64 image has none yet.
//
// It is linked statically because the delivery image holds nothing but
// these files: no shell, no cp, no libc to load.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "build_info.h"  // Generated: cmake/build_info.cmake.
#include "plugin/base/files.h"
#include "plugin/base/status.h"

namespace k8s_agent {
namespace {

struct Payload {
  const char* name;
  mode_t mode;
  // The workers' side: an image carries all of it or none (the arm64
  // delivery image has no portable sshd yet: images/README.md).
  bool sshd_side;
};

// Everything the delivery image carries for the user's containers. The
// binaries are world-executable: the user's uid is not known here.
// k8s-agent-sshd and the portable sshd (sshd, and the sshd-session and
// sshd-auth it runs from beside itself) are the workers' side: an image with
// no openssh-server runs `DIR/k8s-agent-sshd --keys SECRET_DIR`.
// ompi-env.sh is for the user's launcher to source before mpirun: under
// Open MPI 5 it gives the OMPI_MCA_ settings that operators write their
// PRRTE names, which prterun would otherwise ignore (all ranks local).
constexpr std::array<Payload, 8> kPayload = {{
    {"k8s-agent", 0755, false},
    {"k8s-agent-sshd", 0755, true},
    {"sshd", 0755, true},
    {"sshd-session", 0755, true},
    {"sshd-auth", 0755, true},
    {"openmpi-mca-params.conf", 0644, false},
    {"prte-mca-params.conf", 0644, false},
    {"ompi-env.sh", 0644, false},
}};

constexpr int kUsageError = 2;

// Whether the image carries the workers' side: all of it, or none (then
// those files are not delivered). A part of it is an error, never a worker
// left with an sshd that cannot start.
StatusOr<bool> HasSshdSide(const std::string& from) {
  std::string present, missing;
  for (const Payload& p : kPayload) {
    if (!p.sshd_side) continue;
    std::string& list =
        access(JoinPath(from, p.name).c_str(), F_OK) == 0 ? present : missing;
    list += (list.empty() ? "" : ", ") + std::string(p.name);
  }
  if (!present.empty() && !missing.empty()) {
    return FailedPreconditionError("the image has " + present + " but not " +
                                   missing + " beside " + from);
  }
  return missing.empty();
}

// Copies the payload into DIR; the names delivered after k8s-agent go to
// *with, how many were already in place to *kept.
Status Deliver(const std::string& dir, std::string* with, int* kept) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return FailedPreconditionError(
        dir +
        " is not a directory (mount an emptyDir volume there, shared "
        "with the containers that run mpirun)");
  }
  K8S_ASSIGN_OR_RETURN(std::string from, SelfExeDir());
  K8S_ASSIGN_OR_RETURN(bool sshd_side, HasSshdSide(from));
  for (const Payload& p : kPayload) {
    if (p.sshd_side && !sshd_side) continue;
    // A pod restart runs the init container again over the kept emptyDir:
    // what is already there as it would be written is left alone.
    StatusOr<bool> wrote = CopyFileIfChanged(JoinPath(from, p.name),
                                             JoinPath(dir, p.name), p.mode);
    if (!wrote.ok()) {
      return wrote.status().WithContext("delivering " + std::string(p.name));
    }
    if (!*wrote) ++*kept;
    if (std::string(p.name) != "k8s-agent") {
      *with += (with->empty() ? "" : ", ") + std::string(p.name);
    }
  }
  if (!sshd_side) *with += "; no sshd side in this image";
  return OkStatus();
}

int Main(int argc, char** argv) {
  // The version and commit, as the other programs say them: release.sh
  // checks that the archive's copier is the same build as its agent.
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::printf("k8s-agent-deliver %s\ncommit %s%s\n", K8S_AGENT_VERSION,
                K8S_AGENT_COMMIT, K8S_AGENT_COMMIT_DIRTY ? "-dirty" : "");
    return 0;
  }
  if (argc != 2 || argv[1][0] == '\0' || argv[1][0] == '-') {
    std::fprintf(stderr,
                 "usage: k8s-agent-deliver DIR | --version\n"
                 "Copies k8s-agent, k8s-agent-sshd with a portable sshd "
                 "(where the image has them), the Open MPI presets\n"
                 "(openmpi-mca-params.conf, prte-mca-params.conf) and "
                 "ompi-env.sh into DIR,\n"
                 "e.g. an emptyDir shared with the pod's other containers; "
                 "then set plm_rsh_agent to DIR/k8s-agent,\n"
                 "and run workers whose image has no sshd as "
                 "DIR/k8s-agent-sshd --keys SECRET_DIR.\n");
    return kUsageError;
  }
  std::string dir = argv[1];
  std::string with;
  int kept = 0;
  Status status = Deliver(dir, &with, &kept);
  if (!status.ok()) {
    std::fprintf(stderr, "k8s-agent-deliver: %s\n", status.message().c_str());
    return 1;
  }
  std::string kept_note;
  if (kept > 0) {
    kept_note = "; " + std::to_string(kept) +
                " already in place and identical, left as they were";
  }
  std::printf("k8s-agent-deliver: %s/k8s-agent ready (with %s)%s\n",
              dir.c_str(), with.c_str(), kept_note.c_str());
  return 0;
}

}  // namespace
}  // namespace k8s_agent

int main(int argc, char** argv) { return k8s_agent::Main(argc, argv); }
