// SPDX-License-Identifier: Apache-2.0
// k8s-agent-deliver DIR: the delivery image's entrypoint. Copies k8s-agent
// and the Open MPI presets that sit beside this program into DIR (an
// emptyDir an init container shares with the user's own containers), so an
// unchanged training image can run `mpirun` with plm_rsh_agent pointing at
// DIR/k8s-agent.
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

#include "plugin/base/files.h"
#include "plugin/base/status.h"

namespace k8s_agent {
namespace {

struct Payload {
  const char* name;
  mode_t mode;
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
    {"k8s-agent", 0755},
    {"k8s-agent-sshd", 0755},
    {"sshd", 0755},
    {"sshd-session", 0755},
    {"sshd-auth", 0755},
    {"openmpi-mca-params.conf", 0644},
    {"prte-mca-params.conf", 0644},
    {"ompi-env.sh", 0644},
}};

constexpr int kUsageError = 2;

Status Deliver(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return FailedPreconditionError(
        dir +
        " is not a directory (mount an emptyDir volume there, shared "
        "with the containers that run mpirun)");
  }
  K8S_ASSIGN_OR_RETURN(std::string from, SelfExeDir());
  for (const Payload& p : kPayload) {
    K8S_RETURN_IF_ERROR(CopyFileAtomically(JoinPath(from, p.name),
                                           JoinPath(dir, p.name), p.mode)
                            .WithContext("delivering " + std::string(p.name)));
  }
  return OkStatus();
}

int Main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '\0' || argv[1][0] == '-') {
    std::fprintf(stderr,
                 "usage: k8s-agent-deliver DIR\n"
                 "Copies k8s-agent, k8s-agent-sshd with a portable sshd, "
                 "the Open MPI presets\n"
                 "(openmpi-mca-params.conf, prte-mca-params.conf) and "
                 "ompi-env.sh into DIR,\n"
                 "e.g. an emptyDir shared with the pod's other containers; "
                 "then set plm_rsh_agent to DIR/k8s-agent,\n"
                 "and run workers whose image has no sshd as "
                 "DIR/k8s-agent-sshd --keys SECRET_DIR.\n");
    return kUsageError;
  }
  std::string dir = argv[1];
  Status status = Deliver(dir);
  if (!status.ok()) {
    std::fprintf(stderr, "k8s-agent-deliver: %s\n", status.message().c_str());
    return 1;
  }
  std::string with;
  for (size_t i = 1; i < kPayload.size(); ++i) {
    with += (i > 1 ? ", " : "") + std::string(kPayload[i].name);
  }
  std::printf("k8s-agent-deliver: %s/k8s-agent ready (with %s)\n", dir.c_str(),
              with.c_str());
  return 0;
}

}  // namespace
}  // namespace k8s_agent

int main(int argc, char** argv) { return k8s_agent::Main(argc, argv); }
