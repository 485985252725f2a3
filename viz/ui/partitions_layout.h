// The Partitions panel's geometry (viz/ui/partitions_panel.cc), apart from its drawing so tests
// can aim a click at a cell: which offsets a replica strip shows, where each cell is, and the
// strips a frame drew (kept in the view cache, viz/ui/view_cache.h). Private to viz/ui/ and
// tests/viz/.
//
// A strip never has more cells than fit its width: a long log shows a window of offsets around
// the high watermark (or from a first offset the user chose), so a 100k-record log costs what a
// screenful costs.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <vector>

namespace ksim::viz {

inline constexpr float kCellWidthPreferred = 22.0f;
inline constexpr float kCellWidthMin = 7.0f;

// The offsets [first, end) a strip shows and each cell's width.
struct OffsetWindow {
  int64_t first = 0;
  int64_t end = 0;
  float cell_width = kCellWidthPreferred;
};

// Chooses the window over a partition's offsets [log_begin, log_end) for a strip `width` pixels
// wide: the whole log when it fits at kCellWidthMin or wider (cells widened up to the preferred
// width); otherwise a window of width / kCellWidthMin offsets starting at `first_wanted`
// clamped into the log, or, when first_wanted < 0, ending a quarter of a window past `focus`
// (the HW, so the committed tail and the uncommitted head are both in view).
OffsetWindow ChooseOffsetWindow(int64_t log_begin, int64_t log_end, int64_t focus,
                                int64_t first_wanted, float width);

// One replica's strip as drawn.
struct StripGeometry {
  int32_t partition = -1;  // index into the model's partitions()
  int32_t broker = -1;
  ImVec2 min;  // the strip's screen rectangle
  ImVec2 max;
  OffsetWindow window;
  // The left edge of `offset`'s cell (may lie outside the strip for offsets outside the window).
  float CellX(int64_t offset) const {
    return min.x + static_cast<float>(offset - window.first) * window.cell_width;
  }
  // The offset under screen x, or -1 outside the strip's window.
  int64_t OffsetAt(float x) const;
};

// The strips one DrawPartitionsPanel call drew (ViewCache::partitions holds the last frame's).
struct PartitionsFrame {
  std::vector<StripGeometry> strips;
};

}  // namespace ksim::viz
