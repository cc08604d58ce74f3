// SPDX-License-Identifier: Apache-2.0
// CurlTransport: how a streaming response is found dead (the idle limit,
// the HTTP/2 PING check) and how it is ended.

#include <unistd.h>

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/kube/curl_transfer.h"
#include "plugin/kube/curl_transport.h"
#include "plugin/kube/read_idle_ping.h"

namespace k8s_agent::kube {
// The socket of the transfer's connection when that is HTTP/2, else -1
// (no PING to send: bookmarks and the idle limit remain).
// CURLINFO_ACTIVESOCKET is only set once a transfer is done, so the socket
// is found by connection id (CURLINFO_CONN_ID, curl 8.2).
int CurlTransport::Http2Socket(const Transfer& t) const {
  long version = 0;
  curl_easy_getinfo(t.easy.get(), CURLINFO_HTTP_VERSION, &version);
  if (version != CURL_HTTP_VERSION_2_0) return -1;
#if LIBCURL_VERSION_NUM >= 0x080200
  curl_off_t conn = -1;
  curl_easy_getinfo(t.easy.get(), CURLINFO_CONN_ID, &conn);
  return connection_sockets_.SocketOf(conn);
#else
  return -1;
#endif
}

int CurlTransport::OnSocketOpened(void* transfer, curl_socket_t fd,
                                  curlsocktype purpose) {
#if LIBCURL_VERSION_NUM >= 0x080200
  auto* t = static_cast<Transfer*>(transfer);
  curl_off_t conn = -1;
  if (purpose == CURLSOCKTYPE_IPCXN &&
      curl_easy_getinfo(t->easy.get(), CURLINFO_CONN_ID, &conn) == CURLE_OK &&
      conn >= 0) {
    try {
      t->owner->connection_sockets_.Opened(conn, fd);
    } catch (...) {  // No exception may cross into libcurl; no PINGs then.
    }
  }
#endif
  return CURL_SOCKOPT_OK;
}

int CurlTransport::OnSocketClosed(void* self, curl_socket_t fd) {
  static_cast<CurlTransport*>(self)->connection_sockets_.Closed(fd);
  return close(fd);
}

void CurlTransport::CheckLiveness(TimePoint now) {
  std::vector<std::pair<Transfer*, ReadIdlePing::Reads>> pinging;
  std::set<int> ping_sockets;
  for (auto& [id, t] : transfers_) {
    if (!t->in_multi) continue;
    if (t->idle_timeout > Duration::zero() &&
        now - t->last_activity >= t->idle_timeout) {
      FailTransfer(t.get(), UnavailableError(
                                t->description + ": no data for " +
                                FormatDuration(t->idle_timeout) +
                                " (idle timeout; connection presumed dead)"));
      continue;
    }
    if (!t->ping || !t->headers_complete || now < t->ping->next_check()) {
      continue;
    }
    int fd = Http2Socket(*t);
    std::optional<ReadIdlePing::Reads> reads;
    if (fd >= 0) reads = ReadIdlePing::SocketReads(fd);
    if (!reads) {
      t->ping.reset();
      continue;
    }
    switch (t->ping->Check(*reads, now)) {
      case ReadIdlePing::Action::kPing:
        pinging.emplace_back(t.get(), *reads);
        ping_sockets.insert(fd);
        break;
      case ReadIdlePing::Action::kDead:
        FailTransfer(
            t.get(),
            UnavailableError(
                t->description + ": no answer to an HTTP/2 PING within " +
                FormatDuration(t->ping->timeout()) + " after " +
                FormatDuration(t->ping->after()) +
                " with nothing read (the API server is stopped or the "
                "connection is dead)"));
        break;
      case ReadIdlePing::Action::kNone:
        break;
    }
  }
  if (pinging.empty()) return;
  // One call pings every pooled HTTP/2 connection, so several quiet
  // watches on one connection share a PING.
  curl_easy_upkeep(pinger_.get());
  // curl 8.14 only queues the PING frame; a transfer's receive path
  // flushes the queue, so run it once (it reads nothing and returns).
  for (int fd : ping_sockets) SocketAction(fd, CURL_CSELECT_IN);
  LogDebug("sent an HTTP/2 PING: " + pinging.front().first->description +
           " read nothing for " + FormatDuration(pinging.front().second.idle) +
           (pinging.size() > 1
                ? " (and " + std::to_string(pinging.size() - 1) + " more)"
                : ""));
  for (auto& [t, reads] : pinging) t->ping->Pinged(reads, now);
}

void CurlTransport::FailTransfer(Transfer* t, Status why) {
  // A connection that stopped answering must not carry the retry: curl
  // would otherwise keep it pooled (HTTP/2 survives a removed stream).
  curl_easy_setopt(t->easy.get(), CURLOPT_FORBID_REUSE, 1L);
  curl_multi_remove_handle(multi_.get(), t->easy.get());
  t->in_multi = false;
  t->finished = true;
  t->result = std::move(why);
  needs_delivery_ = true;
}

}  // namespace k8s_agent::kube
