// Edit distance between configuration names, for "did you mean" hints on unknown keys (as
// kafka-configs and many CLIs suggest the closest valid name). Pure functions; any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace ksim {

// Levenshtein distance: the fewest single-byte insertions, deletions and substitutions that turn
// `a` into `b`.
size_t LevenshteinDistance(std::string_view a, std::string_view b);

// The candidate nearest to `word` (ties: the first in `candidates`), or nullopt when even the
// nearest one needs more than max(2, word.size() / 3) edits: too far to be a typo.
std::optional<std::string_view> ClosestName(std::string_view word,
                                            std::span<const std::string_view> candidates);

}  // namespace ksim
