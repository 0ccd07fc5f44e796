#include "common/session_replay.h"

#include <vector>

#include "gtest/gtest.h"
#include "proto/worker_service.pb.h"

namespace iofleet {
namespace {

using Replay = SessionReplay<v1::ControllerMessage>;

v1::ControllerMessage Numbered(Replay& replay) {
  v1::ControllerMessage message;
  message.mutable_renew();
  return *replay.Number(message);
}

std::vector<uint64_t> Resent(Replay& replay, uint64_t peer_received, bool* ok) {
  std::vector<uint64_t> sequences;
  *ok = replay.Resend(peer_received, [&](const std::shared_ptr<const v1::ControllerMessage>& m) { sequences.push_back(m->sequence()); });
  return sequences;
}

TEST(SessionReplay, ResendsExactlyWhatThePeerHasNotReceived) {
  Replay replay(100);
  for (int i = 0; i < 5; ++i) Numbered(replay);
  bool ok = false;
  EXPECT_EQ(Resent(replay, 2, &ok), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_TRUE(ok);
  EXPECT_EQ(replay.unacknowledged(), 3u);
  EXPECT_TRUE(Resent(replay, 5, &ok).empty());
  EXPECT_TRUE(ok);
  EXPECT_EQ(replay.unacknowledged(), 0u);
}

TEST(SessionReplay, ReceivedMessagesAcknowledgeAndDuplicatesAreDropped) {
  Replay sender(100), receiver(100);
  std::vector<v1::ControllerMessage> sent;
  for (int i = 0; i < 3; ++i) sent.push_back(Numbered(sender));
  EXPECT_TRUE(receiver.Receive(sent[0]));
  EXPECT_TRUE(receiver.Receive(sent[1]));
  EXPECT_FALSE(receiver.Receive(sent[0]));  // a replay of what arrived before the cut
  EXPECT_EQ(receiver.received(), 2u);
  // The receiver's next message acknowledges both: the sender keeps only the third.
  v1::ControllerMessage answer = Numbered(receiver);
  EXPECT_EQ(answer.acknowledged(), 2u);
  EXPECT_TRUE(sender.Receive(answer));
  EXPECT_EQ(sender.unacknowledged(), 1u);
  // Unnumbered messages (a resuming hello) always pass and change nothing.
  v1::ControllerMessage hello;
  hello.mutable_hello();
  EXPECT_TRUE(receiver.Receive(hello));
  EXPECT_EQ(receiver.received(), 2u);
}

TEST(SessionReplay, APeerThatStopsAcknowledgingCannotGrowItAndCannotResume) {
  Replay replay(4);
  for (int i = 0; i < 10; ++i) Numbered(replay);
  EXPECT_EQ(replay.unacknowledged(), 4u);
  bool ok = true;
  EXPECT_TRUE(Resent(replay, 3, &ok).empty());
  EXPECT_FALSE(ok);  // 4..6 are gone
  EXPECT_EQ(Resent(replay, 6, &ok), (std::vector<uint64_t>{7, 8, 9, 10}));
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace iofleet
