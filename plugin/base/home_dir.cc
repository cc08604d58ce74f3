// SPDX-License-Identifier: Apache-2.0
// HomeDir: HOME, else the passwd entry, else "/".

#include "plugin/base/home_dir.h"

#include <pwd.h>
#include <unistd.h>

namespace k8s_agent {

std::string HomeDir(std::string_view home_env) {
  if (!home_env.empty()) return std::string(home_env);
  struct passwd* pw = ::getpwuid(::getuid());
  if (pw != nullptr && pw->pw_dir != nullptr) return pw->pw_dir;
  return "/";
}

}  // namespace k8s_agent
