// The Cluster panel (viz/ui/panels.h): the brokers as large cards in a row (status colour,
// controller badge, ZooKeeper session pill, fault badges, the partitions each one leads or
// follows), the clients and ZooKeeper as smaller cards below, and every network cut in force
// drawn between the cards it separates: a red line, dashed with an arrow for a one-way cut.
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/base/trace_names.h"
#include "viz/ui/draw_kit.h"
#include "viz/ui/palette.h"
#include "viz/ui/panels.h"

namespace ksim::viz {
using kit::Box;
namespace {

constexpr float kGap = 14.0f;
constexpr float kCardGapX = 48.0f;  // room between broker cards for a cut's line and label
constexpr float kBrokerCardWidthMax = 300.0f;
constexpr float kBrokerCardWidthMin = 150.0f;
constexpr float kBrokerCardHeight = 150.0f;
constexpr float kClientCardWidth = 120.0f;
constexpr float kClientCardHeight = 44.0f;
constexpr size_t kLeadershipLinesMax = 4;

const char* StatusLabel(NodeStatus status) {
  switch (status) {
    case NodeStatus::kAlive:
      return "ALIVE";
    case NodeStatus::kCrashed:
      return "CRASHED";
    case NodeStatus::kShutDown:
      return "SHUT DOWN";
  }
  return "?";
}

const char* ClientKindLabel(ClientKind kind) {
  switch (kind) {
    case ClientKind::kProducer:
      return "producer";
    case ClientKind::kConsumer:
      return "consumer";
    case ClientKind::kOldConsumer:
      return "old consumer (ZK)";
    case ClientKind::kOther:
      break;
  }
  return "client";
}

// The point where the segment from the centre of `a` towards `b` leaves `a`'s rectangle.
ImVec2 EdgePoint(const Box& a, ImVec2 toward) {
  const ImVec2 c((a.min.x + a.max.x) * 0.5f, (a.min.y + a.max.y) * 0.5f);
  const float dx = toward.x - c.x;
  const float dy = toward.y - c.y;
  const float half_w = (a.max.x - a.min.x) * 0.5f;
  const float half_h = (a.max.y - a.min.y) * 0.5f;
  float scale = 1.0f;
  if (dx != 0.0f) scale = std::min(scale, half_w / std::abs(dx));
  if (dy != 0.0f) scale = std::min(scale, half_h / std::abs(dy));
  return ImVec2(c.x + dx * scale, c.y + dy * scale);
}

ImVec2 Center(const Box& r) {
  return ImVec2((r.min.x + r.max.x) * 0.5f, (r.min.y + r.max.y) * 0.5f);
}

// One broker card. `rect` is its screen rectangle.
// Its contents, clipped to the card.
void DrawBrokerCardContents(ImDrawList* draw, const Box& rect, const BrokerView& broker,
                            const Snapshot& snapshot) {
  const ImU32 status_color = NodeStatusColor(broker.status);
  const bool alive = broker.status == NodeStatus::kAlive;
  const ImU32 fill = alive ? IM_COL32(36, 44, 40, 255) : IM_COL32(58, 30, 30, 255);
  draw->AddRectFilled(rect.min, rect.max,
                      broker.status == NodeStatus::kShutDown ? IM_COL32(40, 40, 40, 255) : fill,
                      8.0f);
  draw->AddRect(rect.min, rect.max, broker.controller ? kColorController : status_color, 8.0f, 0,
                broker.controller ? 4.0f : 3.0f);
  // Status band on the left edge.
  draw->AddRectFilled(rect.min, ImVec2(rect.min.x + 8.0f, rect.max.y), status_color, 8.0f,
                      ImDrawFlags_RoundCornersLeft);

  const float x0 = rect.min.x + 16.0f;
  float y = rect.min.y + 6.0f;
  kit::Text(draw, ImVec2(x0, y), broker.node, IM_COL32(250, 250, 250, 255), 1.5f);
  const std::string status = StatusLabel(broker.status);
  const ImVec2 status_size = kit::PillSize(status);
  kit::Pill(draw, ImVec2(rect.max.x - status_size.x - 8.0f, y + 2.0f), status, status_color,
            kit::TextOn(status_color));
  y += ImGui::GetFontSize() * 1.5f + 6.0f;

  // Badges: controller, ZooKeeper session, faults.
  float x = x0;
  auto badge = [&](const std::string& text, ImU32 color, bool filled) {
    const ImVec2 size = kit::PillSize(text);
    if (x + size.x > rect.max.x - 6.0f && x > x0) {
      x = x0;
      y += size.y + 4.0f;
    }
    kit::Pill(draw, ImVec2(x, y), text, color, filled ? kit::TextOn(color) : color, filled);
    x += size.x + 5.0f;
  };
  if (broker.controller) {
    char text[48];
    std::snprintf(text, sizeof(text), "CONTROLLER e%d", broker.controller_epoch);
    badge(text, kColorController, true);
  }
  badge(broker.zk_session ? "ZK session" : "no ZK session",
        broker.zk_session ? IM_COL32(70, 150, 210, 255) : IM_COL32(150, 150, 150, 255),
        broker.zk_session);
  if (broker.isolated) badge("ISOLATED", kColorCut, true);
  if (snapshot.t_us < broker.slow_until_us) badge("SLOW", IM_COL32(200, 150, 40, 255), true);
  if (!broker.disk_fault.empty()) badge("disk " + broker.disk_fault, kColorCrashed, true);
  if (broker.incarnation > 1) {
    badge("restart #" + std::to_string(broker.incarnation - 1), IM_COL32(160, 160, 160, 255),
          false);
  }
  y += ImGui::GetFontSize() + 10.0f;

  // Leaderships and followerships of the scenario's topics, one line each, leaders first;
  // Kafka's internal topics (__consumer_offsets) summed up in one last line.
  std::vector<std::pair<bool, std::string>> lines;
  int internal_leads = 0;
  int internal_follows = 0;
  for (const PartitionView& partition : snapshot.partitions) {
    const bool internal = partition.topic.rfind("__", 0) == 0;
    for (const ReplicaView& replica : partition.replica_states) {
      if (replica.broker != broker.id) continue;
      if (internal) {
        ++(replica.leader ? internal_leads : internal_follows);
        continue;
      }
      char text[128];
      if (replica.leader) {
        std::snprintf(text, sizeof(text), "leads %s-%d  epoch %d", partition.topic.c_str(),
                      partition.partition, partition.leader_epoch);
      } else {
        std::snprintf(text, sizeof(text), "follows %s-%d  %s", partition.topic.c_str(),
                      partition.partition, replica.in_isr ? "in ISR" : "OUT of ISR");
      }
      lines.emplace_back(replica.leader, text);
    }
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const float line_h = ImGui::GetFontSize() + 3.0f;
  size_t shown = 0;
  for (const auto& [leader, text] : lines) {
    if (shown == kLeadershipLinesMax || y + line_h > rect.max.y - 4.0f) break;
    if (leader) kit::Star(draw, ImVec2(x0 + 6.0f, y + line_h * 0.5f), 7.0f, kColorController);
    kit::Text(draw, ImVec2(x0 + 16.0f, y), text,
              leader ? IM_COL32(250, 230, 150, 255) : IM_COL32(200, 200, 200, 255));
    y += line_h;
    ++shown;
  }
  if (internal_leads + internal_follows > 0 && shown == lines.size() &&
      y + line_h <= rect.max.y - 2.0f) {
    char text[96];
    std::snprintf(text, sizeof(text), "offsets topic: leads %d, follows %d", internal_leads,
                  internal_follows);
    kit::Text(draw, ImVec2(x0 + 16.0f, y), text, IM_COL32(150, 150, 150, 255), 0.85f);
  }
  if (shown < lines.size() && y + line_h <= rect.max.y) {
    kit::Text(draw, ImVec2(x0 + 16.0f, y), "+" + std::to_string(lines.size() - shown) + " more",
              IM_COL32(170, 170, 170, 255));
  }
}

void DrawBrokerCard(ImDrawList* draw, const Box& rect, const BrokerView& broker,
                    const Snapshot& snapshot) {
  draw->PushClipRect(rect.min, rect.max, true);
  DrawBrokerCardContents(draw, rect, broker, snapshot);
  draw->PopClipRect();
}

void DrawSmallCard(ImDrawList* draw, const Box& rect, const std::string& name,
                   const std::string& subtitle, ImU32 accent, NodeStatus status) {
  draw->AddRectFilled(rect.min, rect.max, IM_COL32(38, 38, 46, 255), 6.0f);
  draw->AddRect(rect.min, rect.max, NodeStatusColor(status), 6.0f, 0, 2.0f);
  draw->AddRectFilled(rect.min, ImVec2(rect.min.x + 6.0f, rect.max.y), accent, 6.0f,
                      ImDrawFlags_RoundCornersLeft);
  kit::Text(draw, ImVec2(rect.min.x + 12.0f, rect.min.y + 4.0f), name, IM_COL32(245, 245, 245, 255),
            1.15f);
  kit::Text(draw, ImVec2(rect.min.x + 12.0f, rect.min.y + 6.0f + ImGui::GetFontSize() * 1.15f),
            subtitle, IM_COL32(180, 180, 180, 255));
}

// The cuts: a line between every pair of drawn nodes a cut separates. An isolated broker's
// card has its own badge; its cuts to everyone are drawn too, as the cut is what drops messages.
void DrawCuts(ImDrawList* draw, const Snapshot& snapshot, const std::map<std::string, Box>& cards) {
  for (const CutView& cut : snapshot.cuts) {
    for (const std::string& from : cut.from) {
      const auto from_card = cards.find(from);
      if (from_card == cards.end()) continue;
      for (const std::string& to : cut.to) {
        const auto to_card = cards.find(to);
        if (to_card == cards.end() || to == from) continue;
        const ImVec2 a = EdgePoint(from_card->second, Center(to_card->second));
        const ImVec2 b = EdgePoint(to_card->second, Center(from_card->second));
        if (cut.one_way) {
          kit::DashedLine(draw, a, b, kColorCut, 3.0f, 9.0f, 6.0f);
          kit::ArrowHead(draw, a, b, kColorCut, 14.0f);
        } else {
          draw->AddLine(a, b, kColorCut, 3.5f);
        }
        // A cross in the middle: this link drops messages.
        const ImVec2 mid((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f);
        kit::Cross(draw, ImVec2(mid.x - 7, mid.y - 7), ImVec2(mid.x + 7, mid.y + 7), kColorCut,
                   3.0f);
        kit::Pill(draw, ImVec2(mid.x + 10.0f, mid.y - 10.0f), cut.one_way ? "one-way cut" : "cut",
                  IM_COL32(60, 20, 20, 230), kColorCut);
      }
    }
  }
}

}  // namespace

void DrawClusterPanel(const Runs& runs, ViewState& state) {
  const TimelineModel& model = runs.current();
  const Snapshot snapshot = model.StateAt(state.playhead_us);
  ImDrawList* draw = ImGui::GetWindowDrawList();

  ImGui::Text("%s  %s  at %s", model.header().scenario.c_str(), model.header().variant.c_str(),
              kit::FormatSeconds(snapshot.t_us).c_str());

  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float avail_w = std::max(ImGui::GetContentRegionAvail().x, 200.0f);
  const size_t broker_count = std::max<size_t>(snapshot.brokers.size(), 1);
  // As many cards per row as fit at the minimum width, then as wide as the row allows.
  size_t per_row = static_cast<size_t>((avail_w + kCardGapX) / (kBrokerCardWidthMin + kCardGapX));
  per_row = std::clamp<size_t>(per_row, 1, broker_count);
  const float card_w =
      std::min(kBrokerCardWidthMax, (avail_w - kCardGapX * static_cast<float>(per_row - 1)) /
                                        static_cast<float>(per_row));

  std::map<std::string, Box> cards;
  float y = origin.y;
  for (size_t i = 0; i < snapshot.brokers.size(); ++i) {
    const size_t column = i % per_row;
    if (i > 0 && column == 0) y += kBrokerCardHeight + kGap * 2.5f;
    const float x = origin.x + static_cast<float>(column) * (card_w + kCardGapX);
    const Box rect(ImVec2(x, y), ImVec2(x + card_w, y + kBrokerCardHeight));
    DrawBrokerCard(draw, rect, snapshot.brokers[i], snapshot);
    cards[snapshot.brokers[i].node] = rect;
  }
  if (!snapshot.brokers.empty()) y += kBrokerCardHeight + kGap * 3.0f;

  // Clients and ZooKeeper, smaller, in a row below (wrapping).
  float x = origin.x;
  auto place_small = [&](const std::string& name, const std::string& subtitle, ImU32 accent,
                         NodeStatus status) {
    if (x + kClientCardWidth > origin.x + avail_w && x > origin.x) {
      x = origin.x;
      y += kClientCardHeight + kGap * 2.0f;
    }
    const Box rect(ImVec2(x, y), ImVec2(x + kClientCardWidth, y + kClientCardHeight));
    DrawSmallCard(draw, rect, name, subtitle, accent, status);
    cards[name] = rect;
    x += kClientCardWidth + kGap * 2.0f;
  };
  if (model.NodeIndex(node::kZooKeeper) >= 0) {
    place_small(std::string(node::kZooKeeper), "ZooKeeper", IM_COL32(70, 150, 210, 255),
                NodeStatus::kAlive);
  }
  for (const ClientView& client : snapshot.clients) {
    std::string subtitle = ClientKindLabel(client.kind);
    if (client.status != NodeStatus::kAlive)
      subtitle += client.status == NodeStatus::kCrashed ? ", crashed" : ", stopped";
    const ImU32 accent = client.kind == ClientKind::kProducer
                             ? ProducerColor(model.ProducerIndex(client.id))
                             : IM_COL32(60, 170, 160, 255);
    place_small(client.id, subtitle, accent, client.status);
  }
  y += kClientCardHeight;

  DrawCuts(draw, snapshot, cards);

  // Reserve the space drawn, so the window scrolls when it is small.
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(avail_w, y - origin.y + 4.0f));
  if (snapshot.cuts.empty()) {
    ImGui::TextDisabled("no network cuts in force");
  } else {
    ImGui::TextColored(ImVec4(0.9f, 0.25f, 0.25f, 1.0f), "%zu network cut(s) in force",
                       snapshot.cuts.size());
  }
}

}  // namespace ksim::viz
