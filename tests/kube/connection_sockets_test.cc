// SPDX-License-Identifier: Apache-2.0
// ConnectionSockets: the socket of a connection as curl opens and closes
// them.

#include "plugin/kube/connection_sockets.h"

#include <gtest/gtest.h>

namespace k8s_agent::kube {
namespace {

TEST(ConnectionSocketsTest, AnUnknownConnectionHasNoSocket) {
  ConnectionSockets sockets;
  EXPECT_EQ(sockets.SocketOf(0), -1);
  EXPECT_EQ(sockets.connections(), 0u);
}

TEST(ConnectionSocketsTest, EachConnectionHasItsOwnSocket) {
  ConnectionSockets sockets;
  sockets.Opened(0, 7);
  sockets.Opened(1, 9);
  EXPECT_EQ(sockets.SocketOf(0), 7);
  EXPECT_EQ(sockets.SocketOf(1), 9);
  EXPECT_EQ(sockets.SocketOf(2), -1);
  EXPECT_EQ(sockets.connections(), 2u);
}

TEST(ConnectionSocketsTest, WhileConnectingTheLastOpenedSocketIsTheOne) {
  ConnectionSockets sockets;
  sockets.Opened(3, 7);  // IPv6 attempt.
  sockets.Opened(3, 8);  // IPv4 attempt, happy eyeballs.
  EXPECT_EQ(sockets.SocketOf(3), 8);
  sockets.Closed(8);  // The IPv4 attempt lost.
  EXPECT_EQ(sockets.SocketOf(3), 7);
  EXPECT_EQ(sockets.connections(), 1u);
}

TEST(ConnectionSocketsTest, AClosedSocketLeavesTheOthersAlone) {
  ConnectionSockets sockets;
  sockets.Opened(0, 7);
  sockets.Opened(1, 9);
  sockets.Closed(7);
  EXPECT_EQ(sockets.SocketOf(0), -1);
  EXPECT_EQ(sockets.SocketOf(1), 9);
  EXPECT_EQ(sockets.connections(), 1u);
  sockets.Closed(9);
  EXPECT_EQ(sockets.connections(), 0u);
}

TEST(ConnectionSocketsTest, AnUnknownSocketClosingChangesNothing) {
  ConnectionSockets sockets;
  sockets.Opened(0, 7);
  sockets.Closed(11);
  EXPECT_EQ(sockets.SocketOf(0), 7);
}

TEST(ConnectionSocketsTest, AReusedDescriptorBelongsToItsNewConnection) {
  ConnectionSockets sockets;
  sockets.Opened(0, 7);
  sockets.Closed(7);
  sockets.Opened(4, 7);  // The kernel hands out the lowest free fd again.
  EXPECT_EQ(sockets.SocketOf(0), -1);
  EXPECT_EQ(sockets.SocketOf(4), 7);
}

}  // namespace
}  // namespace k8s_agent::kube
