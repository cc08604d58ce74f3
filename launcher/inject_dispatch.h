// SPDX-License-Identifier: Apache-2.0
// `k8s-agent inject ...`: the manifest injector, a program of its own.

#ifndef K8S_AGENT_LAUNCHER_INJECT_DISPATCH_H_
#define K8S_AGENT_LAUNCHER_INJECT_DISPATCH_H_

namespace k8s_agent {

/// Whether argv asks for the injector rather than an ssh-style launch on
/// a host named "inject": argv[1] is "inject" and nothing follows, or what
/// follows starts with "-" (an option, or "-" for stdin) or is a .yaml,
/// .yml or .json file. mpirun's command words (orted, prted, VAR=...) never
/// look like that.
bool IsInjectCommand(int argc, char** argv);

/// Execs k8s-agent-inject from this program's own directory with the same
/// arguments. Returns (255) only when it cannot, having said why.
int ExecInject(char** argv);

}  // namespace k8s_agent

#endif  // K8S_AGENT_LAUNCHER_INJECT_DISPATCH_H_
