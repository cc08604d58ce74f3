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

#include "plugin/base/status.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent {
namespace {

struct Payload {
  const char* name;
  mode_t mode;
};

// Everything the delivery image carries for the user's containers. The
// binary is world-executable: the user's uid is not known here.
// ompi-env.sh is for the user's launcher to source before mpirun: under
// Open MPI 5 it gives the OMPI_MCA_ settings that operators write their
// PRRTE names, which prterun would otherwise ignore (all ranks local).
constexpr std::array<Payload, 4> kPayload = {{
    {"k8s-agent", 0755},
    {"openmpi-mca-params.conf", 0644},
    {"prte-mca-params.conf", 0644},
    {"ompi-env.sh", 0644},
}};

constexpr int kUsageError = 2;

// The directory this program was started from: the payload sits beside it,
// at the image root, or wherever an image volume mounts the image.
StatusOr<std::string> SelfDir() {
  std::vector<char> buf(PATH_MAX + 1);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n < 0) return ErrnoError("readlink /proc/self/exe", errno);
  std::string path(buf.data(), static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir == "/" ? dir + name : dir + "/" + name;
}

Status WriteAll(int fd, const char* data, size_t size,
                const std::string& path) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write " + path, errno);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

// Copies src to dst through a temporary file renamed into place, so a
// container that starts while a restarted init container runs never sees
// a half-written agent.
Status CopyFile(const std::string& src, const std::string& dst, mode_t mode) {
  UniqueFd in(open(src.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return ErrnoError("open " + src, errno);
  std::string tmp = dst + ".tmp." + std::to_string(getpid());
  UniqueFd out(
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!out.valid()) return ErrnoError("create " + tmp, errno);
  std::array<char, 1 << 16> buf{};
  Status status;
  while (status.ok()) {
    ssize_t n = read(in.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = ErrnoError("read " + src, errno);
    } else if (n == 0) {
      break;
    } else {
      status = WriteAll(out.get(), buf.data(), static_cast<size_t>(n), tmp);
    }
  }
  // fchmod, not the open mode: the umask must not take the x bits away.
  if (status.ok() && fchmod(out.get(), mode) != 0) {
    status = ErrnoError("chmod " + tmp, errno);
  }
  if (status.ok() && close(out.release()) != 0) {
    status = ErrnoError("close " + tmp, errno);
  }
  if (status.ok() && rename(tmp.c_str(), dst.c_str()) != 0) {
    status = ErrnoError("rename " + tmp + " to " + dst, errno);
  }
  if (!status.ok()) unlink(tmp.c_str());
  return status;
}

Status Deliver(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return FailedPreconditionError(
        dir +
        " is not a directory (mount an emptyDir volume there, shared "
        "with the containers that run mpirun)");
  }
  K8S_ASSIGN_OR_RETURN(std::string from, SelfDir());
  for (const Payload& p : kPayload) {
    K8S_RETURN_IF_ERROR(
        CopyFile(JoinPath(from, p.name), JoinPath(dir, p.name), p.mode)
            .WithContext("delivering " + std::string(p.name)));
  }
  return OkStatus();
}

int Main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '\0' || argv[1][0] == '-') {
    std::fprintf(stderr,
                 "usage: k8s-agent-deliver DIR\n"
                 "Copies k8s-agent, the Open MPI presets "
                 "(openmpi-mca-params.conf, prte-mca-params.conf) and "
                 "ompi-env.sh into DIR,\n"
                 "e.g. an emptyDir shared with the pod's other containers; "
                 "then set plm_rsh_agent to DIR/k8s-agent.\n");
    return kUsageError;
  }
  std::string dir = argv[1];
  Status status = Deliver(dir);
  if (!status.ok()) {
    std::fprintf(stderr, "k8s-agent-deliver: %s\n", status.message().c_str());
    return 1;
  }
  std::printf("k8s-agent-deliver: %s/k8s-agent ready (with %s, %s, %s)\n",
              dir.c_str(), kPayload[1].name, kPayload[2].name,
              kPayload[3].name);
  return 0;
}

}  // namespace
}  // namespace k8s_agent

int main(int argc, char** argv) { return k8s_agent::Main(argc, argv); }
