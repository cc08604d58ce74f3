// SPDX-License-Identifier: Apache-2.0
// Each host's ssh settings: the command line over the ssh_config files,
// read for that host as ssh reads them for one destination.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "launcher/options.h"
#include "plugin/base/log.h"
#include "plugin/ssh/remote_names.h"
#include "plugin/ssh/ssh_config.h"

namespace k8s_agent {

std::vector<ssh::ConfigFile> SshConfigFiles(const Options& options,
                                            const std::string& home) {
  // -F: that file alone (ssh reads no system file then); "none": none.
  if (!options.ssh_config_only.empty()) {
    if (options.ssh_config_only == "none") return {};
    return {{options.ssh_config_only, true, true, "-F"}};
  }
  // --ssh-config (a worker whose HOME is read-only keeps its settings
  // elsewhere) stands for ~/.ssh/config; /etc/ssh/ssh_config is read after
  // it, as ssh does: images built for mpi-operator configure ssh there.
  std::vector<ssh::ConfigFile> files;
  // Both are checked as ssh checks ~/.ssh/config (owner, no group/other
  // write); -F is not, as in ssh.
  if (options.ssh_config_file.empty()) {
    files.push_back({home + "/.ssh/config", true, false, "ssh config", true});
  } else {
    files.push_back(
        {options.ssh_config_file, true, true, "--ssh-config", true});
  }
  files.push_back({"/etc/ssh/ssh_config", false, false});
  return files;
}

ssh::SshSettingsFor SshSettingsFromOptions(const Options& options,
                                           ssh::ConfigEnv env,
                                           ssh::UserLookup lookup) {
  struct Shared {
    ssh::SshOptions command_line;
    std::vector<ssh::ConfigFile> files;
    ssh::ConfigEnv env;
    ssh::UserLookup lookup;
    std::map<std::string, ssh::ResolvedSshOptions> done;
  };
  auto shared = std::make_shared<Shared>();
  shared->command_line = options.ssh;
  shared->files = SshConfigFiles(options, env.home);
  shared->env = std::move(env);
  shared->lookup = lookup;
  return
      [shared](const std::string& host) -> StatusOr<ssh::ResolvedSshOptions> {
        auto it = shared->done.find(host);
        if (it != shared->done.end()) return it->second;
        // As ssh: names from the command line (orted's HOST, a hostfile's
        // user@, plm_rsh_args' -l) are checked before any config is read,
        // so that no Match exec ever sees them.
        K8S_RETURN_IF_ERROR(ssh::CheckRemoteHost(host, "HOST"));
        if (shared->command_line.user) {
          K8S_RETURN_IF_ERROR(ssh::CheckRemoteUser(*shared->command_line.user,
                                                   "-l, USER@HOST or -o User"));
        }
        ssh::SshOptions merged = shared->command_line;
        std::vector<std::string> notes;
        Status read = ssh::ReadSshConfigs(shared->files, host, shared->env,
                                          &merged, &notes);
        if (!read.ok()) return read.WithContext("reading ssh settings");
        for (const std::string& note : notes) LogDebug(host + ": " + note);
        for (const std::string& note : SshSettingNotes(merged)) {
          LogDebug(host + ": " + note);
        }
        StatusOr<ssh::ResolvedSshOptions> resolved =
            ssh::Resolve(merged, host, shared->lookup);
        if (!resolved.ok()) {
          return resolved.status().WithContext("reading ssh settings");
        }
        shared->done.emplace(host, *resolved);
        return resolved;
      };
}

}  // namespace k8s_agent
