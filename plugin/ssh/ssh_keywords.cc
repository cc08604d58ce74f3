// SPDX-License-Identifier: Apache-2.0
// OpenSSH 9.2's ssh_config keywords (readconf.c's table, Debian's GSSAPI
// patch included: Debian's own /etc/ssh/ssh_config sets GSSAPI keys).

#include "plugin/ssh/ssh_keywords.h"

#include "plugin/base/strings.h"

namespace k8s_agent::ssh {
namespace {

constexpr KeywordUse kHon = KeywordUse::kHonoured;
constexpr KeywordUse kNone = KeywordUse::kNoEffect;
constexpr KeywordUse kUns = KeywordUse::kUnsupported;
constexpr KeywordUse kOld = KeywordUse::kDeprecated;

constexpr char kNoForward[] = "k8s-agent never forwards anything";
constexpr char kNoPrompt[] =
    "k8s-agent authenticates with keys only and never prompts";
constexpr char kNoAgent[] =
    "k8s-agent never uses an ssh-agent: only IdentityFile keys are offered";
constexpr char kNoMux[] =
    "k8s-agent never shares connections: each launch has its own session";
constexpr char kDirect[] =
    "k8s-agent connects to the pod IP directly, never through a proxy or "
    "jump host (the pods API gave it the address)";

// Sorted by nothing: looked up once per config line, ~130 entries.
constexpr SshKeyword kKeywords[] = {
    // Applied (ssh_options.cc, ssh_config.cc).
    {"Host", kHon, nullptr, nullptr},
    {"Match", kHon, nullptr, nullptr},
    {"Include", kHon, nullptr, nullptr},
    {"IgnoreUnknown", kHon, nullptr, nullptr},
    {"HostName", kHon, nullptr, nullptr},
    {"HostKeyAlias", kHon, nullptr, nullptr},
    {"Port", kHon, nullptr, nullptr},
    {"User", kHon, nullptr, nullptr},
    {"IdentityFile", kHon, nullptr, nullptr},
    {"StrictHostKeyChecking", kHon, nullptr, nullptr},
    {"UserKnownHostsFile", kHon, nullptr, nullptr},
    {"GlobalKnownHostsFile", kHon, nullptr, nullptr},
    {"ConnectTimeout", kHon, nullptr, nullptr},
    {"ServerAliveInterval", kHon, nullptr, nullptr},
    {"ServerAliveCountMax", kHon, nullptr, nullptr},
    {"ConnectionAttempts", kHon, nullptr, nullptr},
    {"BatchMode", kHon, nullptr, nullptr},
    {"LogLevel", kHon, nullptr, nullptr},
    {"Ciphers", kHon, nullptr, nullptr},
    {"MACs", kHon, nullptr, nullptr},
    {"KexAlgorithms", kHon, nullptr, nullptr},
    {"HostKeyAlgorithms", kHon, nullptr, nullptr},
    {"BindAddress", kHon, nullptr, nullptr},
    {"StdinNull", kHon, nullptr, nullptr},
    {"CanonicalizeHostname", kHon, nullptr, nullptr},
    // Nothing to do.
    {"ForwardAgent", kNone, nullptr, kNoForward},
    {"ForwardX11", kNone, nullptr, kNoForward},
    {"ForwardX11Trusted", kNone, nullptr, kNoForward},
    {"ForwardX11Timeout", kNone, nullptr, kNoForward},
    {"XAuthLocation", kNone, nullptr, kNoForward},
    {"ExitOnForwardFailure", kNone, nullptr, kNoForward},
    {"ClearAllForwardings", kNone, nullptr, kNoForward},
    {"GatewayPorts", kNone, nullptr, kNoForward},
    {"LocalForward", kNone, nullptr, kNoForward},
    {"RemoteForward", kNone, nullptr, kNoForward},
    {"DynamicForward", kNone, nullptr, kNoForward},
    {"PermitRemoteOpen", kNone, nullptr, kNoForward},
    {"StreamLocalBindMask", kNone, nullptr, kNoForward},
    {"StreamLocalBindUnlink", kNone, nullptr, kNoForward},
    {"TunnelDevice", kNone, nullptr, kNoForward},
    {"PasswordAuthentication", kNone, nullptr, kNoPrompt},
    {"KbdInteractiveAuthentication", kNone, nullptr, kNoPrompt},
    {"KbdInteractiveDevices", kNone, nullptr, kNoPrompt},
    {"ChallengeResponseAuthentication", kNone, nullptr, kNoPrompt},
    {"NumberOfPasswordPrompts", kNone, nullptr, kNoPrompt},
    {"PreferredAuthentications", kNone, nullptr, kNoPrompt},
    {"HostbasedAuthentication", kNone, nullptr, kNoPrompt},
    {"HostbasedAcceptedAlgorithms", kNone, nullptr, kNoPrompt},
    {"HostbasedKeyTypes", kNone, nullptr, kNoPrompt},
    {"EnableSSHKeysign", kNone, nullptr, kNoPrompt},
    {"GSSAPIAuthentication", kNone, nullptr, kNoPrompt},
    {"GSSAPIDelegateCredentials", kNone, nullptr, kNoPrompt},
    {"GSSAPIKeyExchange", kNone, nullptr, kNoPrompt},
    {"GSSAPIClientIdentity", kNone, nullptr, kNoPrompt},
    {"GSSAPIServerIdentity", kNone, nullptr, kNoPrompt},
    {"GSSAPIRenewalForcesRekey", kNone, nullptr, kNoPrompt},
    {"GSSAPITrustDns", kNone, nullptr, kNoPrompt},
    {"GSSAPIKexAlgorithms", kNone, nullptr, kNoPrompt},
    {"IdentitiesOnly", kNone, nullptr, kNoAgent},
    {"IdentityAgent", kNone, nullptr, kNoAgent},
    {"AddKeysToAgent", kNone, nullptr, kNoAgent},
    {"ControlMaster", kNone, nullptr, kNoMux},
    {"ControlPath", kNone, nullptr, kNoMux},
    {"ControlPersist", kNone, nullptr, kNoMux},
    {"EscapeChar", kNone, nullptr, "k8s-agent has no pty, so no escapes"},
    {"EnableEscapeCommandline", kNone, nullptr,
     "k8s-agent has no pty, so no escapes"},
    {"RequestTTY", kNone, nullptr, "k8s-agent never requests a pty"},
    {"VisualHostKey", kNone, nullptr, "k8s-agent is not interactive"},
    {"CheckHostIP", kNone, nullptr,
     "k8s-agent checks host keys under the host name and the pod IP both"},
    {"HashKnownHosts", kNone, nullptr,
     "k8s-agent writes plain known_hosts entries (accept-new)"},
    {"UpdateHostKeys", kNone, nullptr,
     "k8s-agent never rewrites known_hosts from the server's keys"},
    {"VerifyHostKeyDNS", kNone, nullptr, "k8s-agent does no DNS lookups"},
    {"CanonicalDomains", kNone, nullptr, "k8s-agent does no DNS lookups"},
    {"CanonicalizeFallbackLocal", kNone, nullptr,
     "k8s-agent does no DNS lookups"},
    {"CanonicalizeMaxDots", kNone, nullptr, "k8s-agent does no DNS lookups"},
    {"CanonicalizePermittedCNAMEs", kNone, nullptr,
     "k8s-agent does no DNS lookups"},
    {"NoHostAuthenticationForLocalhost", kNone, nullptr,
     "pods are never localhost"},
    {"AddressFamily", kNone, nullptr,
     "the pod IPs the API reports decide the family"},
    {"Compression", kNone, nullptr, "k8s-agent never compresses"},
    {"TCPKeepAlive", kNone, nullptr, "k8s-agent always sets SO_KEEPALIVE"},
    {"KeepAlive", kNone, nullptr, "k8s-agent always sets SO_KEEPALIVE"},
    {"IPQoS", kNone, nullptr, "k8s-agent leaves the TOS byte as is"},
    {"RekeyLimit", kNone, nullptr, "libssh2 rekeys as the server asks"},
    {"SyslogFacility", kNone, nullptr, "k8s-agent logs to stderr"},
    {"LogVerbose", kNone, nullptr, "k8s-agent logs to stderr"},
    {"FingerprintHash", kNone, nullptr, "k8s-agent prints SHA256 fingerprints"},
    {"SendEnv", kNone, nullptr,
     "k8s-agent sends no environment (mpirun passes what orted needs on "
     "its command line)"},
    {"ForkAfterAuthentication", kNone, nullptr,
     "k8s-agent stays in the foreground, as mpirun expects"},
    {"ProxyUseFdpass", kNone, nullptr, kDirect},
    {"RemoteCommand", kNone, nullptr, "mpirun always gives the command to run"},
    {"PubkeyAcceptedAlgorithms", kNone, nullptr,
     "k8s-agent signs with the key's own algorithm (rsa-sha2 for RSA)"},
    {"PubkeyAcceptedKeyTypes", kNone, nullptr,
     "k8s-agent signs with the key's own algorithm (rsa-sha2 for RSA)"},
    {"CASignatureAlgorithms", kNone, nullptr, "k8s-agent uses no certificates"},
    {"RequiredRSASize", kNone, nullptr,
     "libssh2 refuses RSA keys under 1024 bits"},
    {"SecurityKeyProvider", kNone, nullptr, "k8s-agent uses no FIDO keys"},
    // Asked for, and not possible here.
    {"ProxyCommand", kUns, "none", kDirect},
    {"ProxyJump", kUns, "none", kDirect},
    {"Tunnel", kUns, "no", "k8s-agent never opens a tun device"},
    {"PermitLocalCommand", kUns, "no", "k8s-agent runs no LocalCommand"},
    {"LocalCommand", kUns, "", "k8s-agent runs no LocalCommand"},
    {"SessionType", kUns, "default", "k8s-agent runs the command it is given"},
    {"PubkeyAuthentication", kUns, "yes|true|unbound|host-bound",
     "k8s-agent authenticates with keys only"},
    {"CertificateFile", kUns, "",
     "k8s-agent does not authenticate with certificates"},
    {"PKCS11Provider", kUns, "none", "k8s-agent reads keys from files only"},
    {"SmartcardDevice", kUns, "", "k8s-agent reads keys from files only"},
    {"KnownHostsCommand", kUns, "none",
     "k8s-agent checks host keys against known_hosts files only"},
    {"RevokedHostKeys", kUns, "none",
     "k8s-agent cannot check a revoked-keys list"},
    {"SetEnv", kUns, "",
     "k8s-agent sends no environment; pass it in the command instead"},
    // ssh 9.2 ignores these itself ("Deprecated option").
    {"Protocol", kOld, nullptr, nullptr},
    {"Cipher", kOld, nullptr, nullptr},
    {"CompressionLevel", kOld, nullptr, nullptr},
    {"RSAAuthentication", kOld, nullptr, nullptr},
    {"RhostsRSAAuthentication", kOld, nullptr, nullptr},
    {"RhostsAuthentication", kOld, nullptr, nullptr},
    {"FallBackToRsh", kOld, nullptr, nullptr},
    {"UseRsh", kOld, nullptr, nullptr},
    {"UsePrivilegedPort", kOld, nullptr, nullptr},
    {"UseRoaming", kOld, nullptr, nullptr},
    {"UseBlacklistedKeys", kOld, nullptr, nullptr},
    {"DSAAuthentication", kOld, nullptr, nullptr},
    {"SkeyAuthentication", kOld, nullptr, nullptr},
    {"TISAuthentication", kOld, nullptr, nullptr},
    {"GlobalKnownHostsFile2", kOld, nullptr, nullptr},
    {"UserKnownHostsFile2", kOld, nullptr, nullptr},
    {"IdentityFile2", kOld, nullptr, nullptr},
};

}  // namespace

const SshKeyword* FindSshKeyword(std::string_view key) {
  const std::string lower = ToLower(key);
  for (const SshKeyword& k : kKeywords) {
    if (ToLower(k.name) == lower) return &k;
  }
  return nullptr;
}

Status CheckUnappliedKeyword(const SshKeyword& keyword,
                             const std::string& value, std::string* note) {
  note->clear();
  switch (keyword.use) {
    case KeywordUse::kHonoured:
      return OkStatus();
    case KeywordUse::kNoEffect:
      *note = "ignoring " + std::string(keyword.name) + ": " + keyword.why;
      return OkStatus();
    case KeywordUse::kDeprecated:
      *note = "ignoring " + std::string(keyword.name) +
              ": deprecated, and ignored by ssh too";
      return OkStatus();
    case KeywordUse::kUnsupported:
      break;
  }
  const std::string v = ToLower(Trim(value));
  for (const std::string& ok : Split(keyword.harmless, '|')) {
    if (!ok.empty() && v == ok) return OkStatus();
  }
  return InvalidArgumentError(std::string(keyword.name) + " " +
                              Printable(value) +
                              " cannot be honoured: " + keyword.why +
                              " (remove it for the hosts k8s-agent reaches, "
                              "e.g. in a Host or Match block of its own)");
}

}  // namespace k8s_agent::ssh
