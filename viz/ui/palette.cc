// The viewer's colours (viz/ui/palette.h): fixed tables, no state.
#include "viz/ui/palette.h"

#include <array>

namespace ksim::viz {
namespace {

// Distinct hues that read on the dark style and stay apart from the fate colours (lost red,
// duplicated orange): blues, greens, purples, teals first.
constexpr std::array<ImU32, 10> kProducerColors = {
    IM_COL32(66, 133, 244, 255),  IM_COL32(52, 168, 120, 255), IM_COL32(171, 105, 220, 255),
    IM_COL32(0, 172, 193, 255),   IM_COL32(205, 200, 70, 255), IM_COL32(236, 110, 170, 255),
    IM_COL32(120, 144, 156, 255), IM_COL32(124, 179, 66, 255), IM_COL32(92, 107, 192, 255),
    IM_COL32(161, 136, 127, 255),
};
constexpr ImU32 kForeignColor = IM_COL32(95, 95, 95, 255);
// Four shades cycling with the record index: neighbouring cells of one producer differ.
constexpr std::array<int, 4> kShadePercent = {0, -18, 12, -30};

// Scales each channel of `color` by (100 + percent) / 100, clamped to [0, 255].
ImU32 Shade(ImU32 color, int percent) {
  ImU32 out = color & (0xFFu << IM_COL32_A_SHIFT);
  for (int shift : {IM_COL32_R_SHIFT, IM_COL32_G_SHIFT, IM_COL32_B_SHIFT}) {
    int channel = static_cast<int>((color >> shift) & 0xFFu);
    channel = channel * (100 + percent) / 100;
    if (channel > 255) channel = 255;
    if (channel < 0) channel = 0;
    out |= static_cast<ImU32>(channel) << shift;
  }
  return out;
}

}  // namespace

ImU32 ProducerColor(int32_t producer_index) {
  if (producer_index < 0) return kForeignColor;
  return kProducerColors[static_cast<size_t>(producer_index) % kProducerColors.size()];
}

ImU32 RecordColor(const TimelineModel& model, int32_t record_index) {
  if (record_index < 0 || static_cast<size_t>(record_index) >= model.records().size()) {
    return kForeignColor;
  }
  const LedgerRecord& record = model.records()[static_cast<size_t>(record_index)];
  ImU32 base = ProducerColor(model.ProducerIndex(record.producer));
  return Shade(base, kShadePercent[static_cast<size_t>(record_index) % kShadePercent.size()]);
}

ImU32 EventKindColor(EventKind kind) {
  switch (kind) {
    case EventKind::kFault:
      return IM_COL32(230, 70, 60, 255);
    case EventKind::kElection:
      return kColorController;
    case EventKind::kIsr:
      return IM_COL32(180, 120, 230, 255);
    case EventKind::kTruncation:
      return IM_COL32(240, 120, 40, 255);
    case EventKind::kHighWatermark:
      return kColorHighWatermark;
    case EventKind::kAppend:
      return IM_COL32(90, 140, 220, 255);
    case EventKind::kProduce:
      return IM_COL32(110, 190, 110, 255);
    case EventKind::kConsume:
      return IM_COL32(60, 170, 160, 255);
    case EventKind::kCommit:
      return IM_COL32(200, 200, 90, 255);
    case EventKind::kGroup:
      return IM_COL32(150, 150, 200, 255);
    case EventKind::kAction:
      return IM_COL32(250, 250, 250, 255);
    case EventKind::kAnomaly:
      return kColorLost;
    case EventKind::kOther:
      break;
  }
  return IM_COL32(130, 130, 130, 255);
}

ImU32 NodeStatusColor(NodeStatus status) {
  switch (status) {
    case NodeStatus::kAlive:
      return kColorAlive;
    case NodeStatus::kCrashed:
      return kColorCrashed;
    case NodeStatus::kShutDown:
      return kColorShutDown;
  }
  return kColorShutDown;
}

}  // namespace ksim::viz
