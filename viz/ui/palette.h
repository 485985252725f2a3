// The viewer's colours, in one place so every panel agrees: a colour per producer (record
// cells, ledger rows, message arrows of that client), fates (lost red, duplicated orange), node
// states and event kinds. Colours are ImU32 (IM_COL32) values.
#pragma once

#include <imgui.h>

#include <cstdint>

#include "viz/model/timeline_model.h"

namespace ksim::viz {

inline constexpr ImU32 kColorLost = IM_COL32(220, 50, 47, 255);
inline constexpr ImU32 kColorDuplicated = IM_COL32(240, 140, 20, 255);
inline constexpr ImU32 kColorOk = IM_COL32(80, 180, 90, 255);
inline constexpr ImU32 kColorUnacked = IM_COL32(140, 140, 140, 255);
inline constexpr ImU32 kColorAlive = IM_COL32(60, 160, 80, 255);
inline constexpr ImU32 kColorCrashed = IM_COL32(200, 50, 50, 255);
inline constexpr ImU32 kColorShutDown = IM_COL32(120, 120, 120, 255);
inline constexpr ImU32 kColorController = IM_COL32(230, 190, 40, 255);
inline constexpr ImU32 kColorHighWatermark = IM_COL32(40, 200, 230, 255);
inline constexpr ImU32 kColorLogEnd = IM_COL32(250, 250, 250, 255);
inline constexpr ImU32 kColorCut = IM_COL32(230, 60, 60, 255);
inline constexpr ImU32 kColorPlayhead = IM_COL32(255, 255, 255, 230);

// A distinct colour per producer index (model.ProducerIndex), shaded a little per record so
// neighbouring cells of one producer stay tellable apart; a foreign record (index -1) is grey.
ImU32 ProducerColor(int32_t producer_index);
ImU32 RecordColor(const TimelineModel& model, int32_t record_index);
ImU32 EventKindColor(EventKind kind);
ImU32 NodeStatusColor(NodeStatus status);

}  // namespace ksim::viz
