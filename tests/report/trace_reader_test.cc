// SPDX-License-Identifier: Apache-2.0
#include "plugin/report/trace_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/fakes/status_matchers.h"
#include "tests/report/trace_builder.h"

namespace k8s_agent::report {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

TEST(TraceRecordTest, ParsesAgentLine) {
  auto r = ParseTraceLine(
      R"({"host":"w-1","pod":"w-1","event":"ssh_ready","t_mono_us":900,)"
      R"("t_wall_us":1000,"pid":7,"detail":"x","attempt_t_mono_us":800})");
  ASSERT_THAT(r, IsOk());
  EXPECT_EQ(r->host, "w-1");
  EXPECT_EQ(r->event, "ssh_ready");
  EXPECT_EQ(r->t_wall_us, 1000);
  EXPECT_EQ(r->pid, 7);
  EXPECT_EQ(r->attempt_t_mono_us, 800);
}

TEST(TraceRecordTest, ParsesPodStatus) {
  auto r = ParseTraceLine(
      R"({"host":"w-1","event":"pod_status","t_wall_us":5,"node":"n1",)"
      R"("created":"1970-01-01T00:00:01Z","true_since":{"PodScheduled":)"
      R"("1970-01-01T00:00:02Z"},"container_started":"1970-01-01T00:00:04Z",)"
      R"("restarts":2,"waiting":["ErrImagePull"]})");
  ASSERT_THAT(r, IsOk());
  ASSERT_TRUE(r->pod_status);
  EXPECT_EQ(r->pod_status->created, 1000000);
  EXPECT_EQ(r->pod_status->scheduled, 2000000);
  EXPECT_EQ(r->pod_status->container_started, 4000000);
  EXPECT_EQ(r->pod_status->restarts, 2);
  EXPECT_EQ(r->pod_status->node, "n1");
  EXPECT_THAT(r->pod_status->waiting, ::testing::ElementsAre("ErrImagePull"));
}

TEST(TraceRecordTest, RejectsForeignAndTruncated) {
  EXPECT_THAT(ParseTraceLine(R"({"host":"w-1","event":"beg)"),
              StatusIs(Code::kInvalidArgument, "not JSON"));
  EXPECT_THAT(ParseTraceLine(R"({"level":"info","msg":"hello"})"),
              StatusIs(Code::kInvalidArgument, "no \"host\""));
  EXPECT_THAT(ParseTraceLine(R"({"host":"w","event":"x","t_wall_us":"1"})"),
              StatusIs(Code::kInvalidArgument, "t_wall_us"));
  EXPECT_THAT(ParseTraceLine("[1,2]"), StatusIs(Code::kInvalidArgument));
  EXPECT_THAT(ParseTraceLine(R"({"host":"w","event":"x",)"
                             R"("t_wall_us":9223372036854775807})"),
              StatusIs(Code::kInvalidArgument, "out of range"));
  EXPECT_THAT(ParseTraceLine(R"({"host":"w","event":"x","t_wall_us":-5})"),
              StatusIs(Code::kInvalidArgument, "out of range"));
  EXPECT_THAT(ParseTraceLine(R"({"host":"w","event":"pod_status",)"
                             R"("t_wall_us":1,"created":"yesterday"})"),
              StatusIs(Code::kInvalidArgument, "RFC 3339"));
}

TEST(TraceReaderTest, SkipsBadLinesNamingFileAndLine) {
  HostSpec h;
  std::string text = HostTrace(h);
  text = "garbage from another tool\n" + text + "\n" +
         R"({"host":"w-0","event":"sta)";  // Truncated last line.
  TraceInput input;
  ASSERT_THAT(ParseTraceText(text, "t.jsonl", &input), IsOk());
  EXPECT_THAT(input.records, SizeIs(7));
  ASSERT_THAT(input.warnings, SizeIs(2));
  EXPECT_THAT(input.warnings[0], HasSubstr("t.jsonl:1: skipped: not JSON"));
  EXPECT_THAT(input.warnings[1], HasSubstr("t.jsonl:10: skipped"));
  EXPECT_THAT(input.warnings[1], HasSubstr("no newline"));
  EXPECT_EQ(input.records[0].file, "t.jsonl");
  EXPECT_EQ(input.records[0].line, 2);
}

TEST(TraceReaderTest, FileWithoutRecordsIsAnError) {
  TraceInput input;
  EXPECT_THAT(ParseTraceText("", "empty.jsonl", &input),
              StatusIs(Code::kInvalidArgument, "empty.jsonl: no k8s-agent"));
  EXPECT_THAT(ParseTraceText("a\nb\n{}\n", "junk", &input),
              StatusIs(Code::kInvalidArgument, "in 3 line(s)"));
  EXPECT_THAT(input.warnings, SizeIs(3));
}

TEST(TraceReaderTest, CapsWarningsPerFile) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "junk\n";
  text += HostTrace(HostSpec());
  TraceInput input;
  ASSERT_THAT(ParseTraceText(text, "f", &input), IsOk());
  ASSERT_THAT(input.warnings, SizeIs(kMaxWarningsPerFile + 1));
  EXPECT_THAT(input.warnings.back(), HasSubstr("40 more bad lines"));
}

TEST(TraceReaderTest, MissingFileIsAnError) {
  EXPECT_THAT(ReadTraceFiles({"/nonexistent/trace.jsonl"}),
              StatusIs(Code::kNotFound, "/nonexistent/trace.jsonl"));
}

}  // namespace
}  // namespace k8s_agent::report
