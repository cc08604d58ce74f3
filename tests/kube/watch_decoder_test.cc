// SPDX-License-Identifier: Apache-2.0
// WatchDecoder: framing across arbitrary chunks, bounds, ERROR mapping.

#include "plugin/kube/watch_decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string Event(const std::string& type, const std::string& name,
                  const std::string& rv, const std::string& phase = "Running") {
  return R"({"type":")" + type +
         R"(","object":{"kind":"Pod","metadata":{"name":")" + name +
         R"(","resourceVersion":")" + rv + R"("},"status":{"phase":")" + phase +
         R"("}}})" + "\n";
}

std::string ThreeEvents() {
  return Event("ADDED", "w0", "1", "Pending") + Event("MODIFIED", "w0", "2") +
         R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"3"}}})"
         "\n";
}

void ExpectThree(const std::vector<WatchEvent>& events) {
  ASSERT_THAT(events, SizeIs(3));
  EXPECT_EQ(events[0].type, WatchEvent::Type::kAdded);
  EXPECT_EQ(events[0].pod.phase, "Pending");
  EXPECT_EQ(events[1].type, WatchEvent::Type::kModified);
  EXPECT_EQ(events[1].pod.resource_version, "2");
  EXPECT_EQ(events[2].type, WatchEvent::Type::kBookmark);
  EXPECT_EQ(events[2].pod.resource_version, "3");
}

TEST(WatchDecoderTest, WholeStreamInOneChunk) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  ASSERT_THAT(decoder.Feed(ThreeEvents(), &events), IsOk());
  ExpectThree(events);
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(WatchDecoderTest, ByteByByte) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  for (char c : ThreeEvents()) {
    ASSERT_THAT(decoder.Feed(std::string_view(&c, 1), &events), IsOk());
  }
  ExpectThree(events);
}

TEST(WatchDecoderTest, RandomChunks) {
  std::string stream = ThreeEvents();
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    WatchDecoder decoder;
    std::vector<WatchEvent> events;
    size_t pos = 0;
    while (pos < stream.size()) {
      size_t n = std::uniform_int_distribution<size_t>(1, 40)(rng);
      n = std::min(n, stream.size() - pos);
      ASSERT_THAT(
          decoder.Feed(std::string_view(stream).substr(pos, n), &events),
          IsOk());
      pos += n;
    }
    ExpectThree(events);
  }
}

TEST(WatchDecoderTest, CrlfAndBlankLines) {
  std::string stream = ThreeEvents();
  std::string crlf;
  for (char c : stream) {
    if (c == '\n')
      crlf += "\r\n\r\n";
    else
      crlf += c;
  }
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  ASSERT_THAT(decoder.Feed(crlf, &events), IsOk());
  ExpectThree(events);
}

TEST(WatchDecoderTest, PartialTailWaitsThenFinishDecodesIt) {
  std::string one = Event("ADDED", "w0", "1");
  one.pop_back();  // No final newline.
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  ASSERT_THAT(decoder.Feed(one, &events), IsOk());
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(decoder.buffered(), one.size());
  ASSERT_THAT(decoder.Finish(&events), IsOk());
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].pod.name, "w0");
}

TEST(WatchDecoderTest, OversizedEventIsBoundedError) {
  WatchDecoder decoder(1024);
  std::vector<WatchEvent> events;
  std::string chunk(600, 'x');
  ASSERT_THAT(decoder.Feed(chunk, &events), IsOk());
  EXPECT_THAT(decoder.Feed(chunk, &events),
              StatusIs(Code::kTooLarge, "larger than 1024"));
  EXPECT_EQ(decoder.buffered(), 0u);
  // Stays failed.
  EXPECT_THAT(decoder.Feed(Event("ADDED", "w0", "1"), &events),
              StatusIs(Code::kTooLarge));
  EXPECT_TRUE(events.empty());
}

TEST(WatchDecoderTest, HugeSingleChunkNeverBuffered) {
  WatchDecoder decoder(1024);
  std::vector<WatchEvent> events;
  std::string big(1 << 20, 'y');
  EXPECT_THAT(decoder.Feed(big, &events), StatusIs(Code::kTooLarge));
  EXPECT_EQ(decoder.buffered(), 0u);
}

TEST(WatchDecoderTest, MalformedJsonIsInternalWithExcerpt) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  Status s =
      decoder.Feed(Event("ADDED", "w0", "1") + "{not json\x01\n", &events);
  EXPECT_THAT(s, StatusIs(Code::kInternal, "malformed watch event"));
  EXPECT_THAT(s.message(), HasSubstr("{not json\\x01"));
  EXPECT_THAT(events, SizeIs(1));  // Events before the bad one survive.
}

TEST(WatchDecoderTest, UnknownTypeAndMissingObject) {
  EXPECT_THAT(ParseWatchEvent(R"({"type":"WHAT","object":{}})"),
              StatusIs(Code::kInternal, "WHAT"));
  EXPECT_THAT(ParseWatchEvent(R"({"type":"ADDED"})"),
              StatusIs(Code::kInternal));
  EXPECT_THAT(ParseWatchEvent(R"([1,2])"), StatusIs(Code::kInternal));
}

TEST(WatchDecoderTest, ErrorEventsAreClassified) {
  auto expired = ParseWatchEvent(
      R"j({"type":"ERROR","object":{"kind":"Status","status":"Failure","message":"too old resource version: 5 (10)","reason":"Expired","code":410}})j");
  ASSERT_THAT(expired, IsOk());
  EXPECT_EQ(expired->type, WatchEvent::Type::kError);
  EXPECT_THAT(expired->error, StatusIs(Code::kExpired, "too old resource"));

  auto gone = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","reason":"Gone"}})");
  EXPECT_THAT(gone->error, StatusIs(Code::kExpired));
  auto throttled = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":429}})");
  EXPECT_THAT(throttled->error, StatusIs(Code::kResourceExhausted));
  auto internal = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":500,"reason":"InternalError"}})");
  EXPECT_THAT(internal->error, StatusIs(Code::kUnavailable));
}

TEST(WatchDecoderTest, WrongFieldTypeInEventIsError) {
  WatchDecoder decoder;
  std::vector<WatchEvent> events;
  EXPECT_THAT(decoder.Feed(R"({"type":"ADDED","object":{"status":{"podIP":7}}})"
                           "\n",
                           &events),
              StatusIs(Code::kInternal, "status.podIP"));
}

}  // namespace
}  // namespace k8s_agent::kube
